"""OwlTUI: a terminal coding agent built on one agent loop for every feature."""

__version__ = "0.1.0"
