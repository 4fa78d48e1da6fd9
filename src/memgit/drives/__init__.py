"""drives."""
