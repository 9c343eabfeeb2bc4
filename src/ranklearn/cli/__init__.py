"""ranklearn.cli."""
