"""ranklearn.metrics."""
