"""Shared pytest fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The read-only real data folder (``../shared/data`` next to the repo); skips when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data not available at {SHARED_DATA}")
    return SHARED_DATA
