"""ranklearn.datasets."""
