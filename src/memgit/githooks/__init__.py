"""githooks."""
