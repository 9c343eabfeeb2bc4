"""ranklearn.io."""
