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


def lazy_callable(reference: str) -> Callable[..., Any]:
    """A stand-in for ``module:name`` that imports it on first use (a call, or an attribute such as a
    judge class's ``limits``): a reader, a judge's factory or a format's test named where it is declared,
    its module loaded only when it is used."""
    return _Lazy(reference)


def resolved(value: Any) -> Any:
    """``value`` itself, or what a ``lazy_callable`` stands for (imported now)."""
    return value._target() if isinstance(value, _Lazy) else value


class _Lazy:
    """``lazy_callable``'s stand-in: calls and attribute reads go to the target, imported the first time."""

    def __init__(self, reference: str) -> None:
        self._reference = reference
        self.__name__ = self.__qualname__ = reference.rpartition(":")[2]

    def _target(self) -> Any:
        module, _, name = self._reference.partition(":")
        return getattr(importlib.import_module(module), name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target()(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._target(), name)

    def __repr__(self) -> str:
        return f"<{self._reference}, imported on first use>"
