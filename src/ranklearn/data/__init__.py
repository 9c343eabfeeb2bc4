"""ranklearn.data."""
