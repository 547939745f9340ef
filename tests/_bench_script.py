"""A script of ``benchmarks/`` loaded as a module, for tests of its pieces (the scripts are not a package)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def bench_script(name: str) -> ModuleType:
    """``benchmarks/NAME.py``, executed once per call as a module of that name."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
