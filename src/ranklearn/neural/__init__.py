"""ranklearn.neural."""
