"""Fixtures of the env and loader tests: the official release samples, when present."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


@pytest.fixture
def data() -> Path:
    """The shared folder of official release sample files; the test is skipped without it."""
    if not DATA.is_dir():
        pytest.skip(f"official sample files not found at {DATA} (the shared data folder is absent)")
    return DATA
