"""The ``ranklearn`` command line (typer); the entry point is :func:`ranklearn.cli.main.main`."""
