"""ranklearn: learning to rank for Python."""

from __future__ import annotations

__version__ = "0.1.0"
