"""The course's Transformer trainer (PyTorch). torch is imported only inside this package."""
