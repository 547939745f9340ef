"""What LateralGym's other layers use from the engine beyond its public API: plumbing, not for users.

The runner, the LLM client, the judges and a benchmark's LLM-facing modules import these; a user
writing a benchmark or running episodes needs ``lateralgym.envs`` (and ``lateralgym.envs.records``
for loaders) only.

It also holds ``lazy_exports``: the names a package exports but loads on first use, so importing it
loads only what its user asks for. A package lists each name's module in a mapping (``_LAZY``) and
imports the same names under ``if TYPE_CHECKING:`` for mypy; ``tests/test_lazy_exports.py`` checks that
the two agree. This module exports its own plumbing that way.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lateralgym.envs._benchmark import guard_recorded_imports, recorded_sources
    from lateralgym.envs._calls import REPLY_CHAR_CAPS, cap_text, capped, reply_cap, writable
    from lateralgym.envs._command_groups import TRAIN_DESCRIPTION, TRAIN_HELP, command_group
    from lateralgym.envs._config import MAX_SEED, check_hints, check_name
    from lateralgym.envs._errors import validation_message
    from lateralgym.envs._judging import extract_answer_label, normalise_answer
    from lateralgym.envs._reply_text import invalid as invalid_reply
    from lateralgym.envs._reply_text import json_objects
    from lateralgym.envs._resampled import any_drawn, mean_across, ratio, sum_across
    from lateralgym.envs._splits import hashed_split
    from lateralgym.envs._sync import background, run_sync
    from lateralgym.envs._text import FORMULA_STARTS, csv_cell, csv_text

_LAZY = {  # name -> the module that defines it, imported on first use
    **dict.fromkeys(("guard_recorded_imports", "recorded_sources"), "lateralgym.envs._benchmark"),
    **dict.fromkeys(("REPLY_CHAR_CAPS", "cap_text", "capped", "reply_cap", "writable"), "lateralgym.envs._calls"),
    **dict.fromkeys(("TRAIN_DESCRIPTION", "TRAIN_HELP", "command_group"), "lateralgym.envs._command_groups"),
    **dict.fromkeys(("MAX_SEED", "check_hints", "check_name"), "lateralgym.envs._config"),
    "validation_message": "lateralgym.envs._errors",
    **dict.fromkeys(("extract_answer_label", "normalise_answer"), "lateralgym.envs._judging"),
    "invalid_reply": "lateralgym.envs._reply_text:invalid",
    "json_objects": "lateralgym.envs._reply_text",
    **dict.fromkeys(("any_drawn", "mean_across", "ratio", "sum_across"), "lateralgym.envs._resampled"),
    "hashed_split": "lateralgym.envs._splits",
    **dict.fromkeys(("background", "run_sync"), "lateralgym.envs._sync"),
    **dict.fromkeys(("FORMULA_STARTS", "csv_cell", "csv_text"), "lateralgym.envs._text"),
}


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


if not TYPE_CHECKING:  # mypy reads the imports above: no fallback types a misspelt name as Any
    __getattr__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "guard_recorded_imports",
    "recorded_sources",
    "TRAIN_DESCRIPTION",
    "TRAIN_HELP",
    "command_group",
    "lazy_callable",
    "lazy_exports",
    "resolved",
    "FORMULA_STARTS",
    "MAX_SEED",
    "REPLY_CHAR_CAPS",
    "cap_text",
    "capped",
    "reply_cap",
    "any_drawn",
    "background",
    "check_hints",
    "check_name",
    "csv_cell",
    "csv_text",
    "extract_answer_label",
    "hashed_split",
    "invalid_reply",
    "json_objects",
    "mean_across",
    "normalise_answer",
    "ratio",
    "run_sync",
    "sum_across",
    "validation_message",
    "writable",
]
