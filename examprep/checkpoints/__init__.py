"""A trained run's files, read without torch: its configuration (config), vocabulary (vocab), run
directory (rundir), the checkpoint reader (stored) and their errors. The trainer (examprep.train)
writes them; the model generators (attention-from-model, gru-from-model) read them, so this package
sits below generators (docs/code.md, "Layers")."""
