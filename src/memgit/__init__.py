"""memgit: make any plain git server a host for what AI agents remember."""

__version__ = "0.1.0"
