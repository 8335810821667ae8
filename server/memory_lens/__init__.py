"""Memory Lens: see and safely edit the memory files that AI coding agents load."""

__version__ = "0.1.0"
