"""The reference Transformer trainer (PyTorch). torch is imported only inside this package."""
