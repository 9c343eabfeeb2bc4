"""ranklearn's version, in a module of its own: the model file stamps it without importing the
package's root (and so every model), and the build reads it from here (pyproject.toml)."""

__version__ = "0.1.0"
