"""examprep: practise, print and grade the hand computations of a deep-learning course."""

__version__ = "0.1.0"
