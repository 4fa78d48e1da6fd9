"""recall."""
