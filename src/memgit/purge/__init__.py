"""purge."""
