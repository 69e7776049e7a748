"""Solve topics added by later generators (imported by examprep.solve)."""
