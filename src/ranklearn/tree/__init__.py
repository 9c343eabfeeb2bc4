"""ranklearn.tree."""
