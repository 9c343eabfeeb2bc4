"""ranklearn.models."""
