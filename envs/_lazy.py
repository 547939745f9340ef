"""Names a package exports but loads on first use, so importing it loads only what its user asks for.

A package lists each name's module in a mapping for ``lazy_exports`` and imports the same names under
``if TYPE_CHECKING:`` for mypy; ``tests/test_lazy_exports.py`` checks that the two agree.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``package``: each name of ``modules`` is read from the module it
    maps to, imported only when first asked for, then kept as the package's attribute.

    A module is named by its full name (``lateralgym.envs._config``) or, within the package, by its own
    (``{"LLMJudge": "_llm_judge"}``); ``module:attribute`` exports the module's ``attribute`` as the name.
    The package's ``dir()`` lists the names before they load (the package is being imported, so it is in
    ``sys.modules``).
    """
    exporter = sys.modules[package]
    exporter.__dir__ = lambda: sorted({*vars(exporter), *modules})  # type: ignore[method-assign]

    def __getattr__(name: str) -> Any:
        if name not in modules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = modules[name].partition(":")
        value = getattr(importlib.import_module(module if "." in module else f"{package}.{module}"), attribute or name)
        setattr(exporter, name, value)  # asked for once: later lookups find it directly
        return value

    return __getattr__
