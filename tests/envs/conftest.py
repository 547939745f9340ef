"""Fixtures of the env and loader tests: files in the official release formats."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def data(official_data: Path) -> Path:
    """Files in every official release format, generated for the tests (``tests/official_data.py``).

    Laid out as the shared sample folder: ``brainteaser/``, ``splat/``, ``creativitybench/``,
    ``lateval/``, ``riddlesense/``. The real samples, when present, come from ``shared_data``.
    """
    return official_data
