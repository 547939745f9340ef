"""Names a package exports but loads on first use (what needs the LLM client imports other layers)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``package``: each name of ``modules`` is read from the
    package's submodule it maps to (``{"LLMJudge": "_llm_judge"}``), imported only when first asked for.
    """

    def __getattr__(name: str) -> Any:
        if name in modules:
            return getattr(importlib.import_module(f"{package}.{modules[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
