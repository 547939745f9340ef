"""Packages that load their names on first use (``lazy_exports``) export what mypy is told they do.

Each such package imports its names under ``if TYPE_CHECKING:`` for mypy and maps them to their modules
in ``_LAZY`` for the run time: the two must agree, and every name of ``__all__`` must resolve.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAZY_PACKAGES = {
    "lateralgym.envs": "envs/__init__.py",
    "lateralgym.envs.support": "envs/support.py",
    "lateralgym.envs.records": "envs/records.py",
    "lateralgym.envs.benchmarks": "envs/benchmarks/__init__.py",
    "lateralgym.agents": "agents/__init__.py",
    "lateralgym.judges": "judges/__init__.py",
    "lateralgym.episodes": "episodes/__init__.py",
}


def _typed_imports(path: Path) -> dict[str, str]:
    """What the file imports under ``if TYPE_CHECKING:``: name -> ``module`` (``module:name`` when renamed)."""
    found = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.module, ast.unparse(statement)
                for alias in statement.names:
                    renamed = f":{alias.name}" if alias.asname else ""
                    found[alias.asname or alias.name] = statement.module + renamed
    return found


@pytest.mark.parametrize("package", sorted(LAZY_PACKAGES))
def test_the_lazy_names_are_the_ones_imported_for_type_checking(package: str) -> None:
    module = importlib.import_module(package)
    lazy = {
        name: target if "." in target.partition(":")[0] else f"{package}.{target}"
        for name, target in module._LAZY.items()
    }
    typed = _typed_imports(ROOT / LAZY_PACKAGES[package])
    submodules = {name for name, target in typed.items() if target == package}  # ``from pkg import submodule``
    assert {name: target for name, target in typed.items() if name not in submodules} == lazy
    for name in module.__all__:
        assert getattr(module, name) is not None, name
