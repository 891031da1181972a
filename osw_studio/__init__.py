"""OSW Studio: watch, steer, evaluate and learn from computer-use agents."""

__version__ = "0.1.0"
