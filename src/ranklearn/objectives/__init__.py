"""ranklearn.objectives."""
