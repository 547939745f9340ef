"""The built-in benchmarks, one folder or module each, and the table the registry finds them by.

Each folder holds everything named after its benchmark (see its env card, the module docstring).
``BUILTIN`` names each benchmark's module and Gymnasium ids: the registry imports a benchmark's module
the first time that benchmark is looked up, and ``import lateralgym`` registers the ids from the table,
so neither imports a benchmark it does not run (``tests/envs/test_builtin_table.py`` checks the table
against the classes). What the multiple-choice ones share (scene, outcome, judge, offline policies,
the LLM protocol) is here too, loaded on first use: ``MultipleChoiceBenchmark`` and
``MultipleChoiceItem``. See ``docs/adding-a-benchmark.md`` for registering your own.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, NamedTuple

from lateralgym.envs.support import lazy_exports

if TYPE_CHECKING:
    from lateralgym.envs.benchmarks import arbench, brainteaser, creativity, macgyver, riddlesense, splat
    from lateralgym.envs.benchmarks._mcq import (
        ChoiceOutcome,
        ChoiceScene,
        ExactChoiceJudge,
        MultipleChoiceBenchmark,
        MultipleChoiceItem,
        grade_choice,
    )


class Builtin(NamedTuple):
    """Where a built-in benchmark lives, and the Gymnasium ids its class declares (``Benchmark.env_ids``)."""

    module: str
    """The module whose import registers it."""
    env_ids: dict[str, str]
    """Env id -> the shipped config it runs."""


BUILTIN: dict[str, Builtin] = {
    # The first four are listed in the order they always have; the newer ones after them.
    "brainteaser": Builtin(f"{__name__}.brainteaser", {"lateralgym/BrainTeaser-v1": "brainteaser"}),
    "creativity": Builtin(
        f"{__name__}.creativity",
        {
            "lateralgym/Creativity-Static-v1": "creativity-static",
            "lateralgym/Creativity-CoT-v1": "creativity-cot",
            "lateralgym/Creativity-Interactive-v2": "creativity-interactive",
            "lateralgym/Creativity-Explore-v1": "creativity-explore",
        },
    ),
    "riddlesense": Builtin(f"{__name__}.riddlesense", {"lateralgym/RiddleSense-v0": "riddlesense"}),
    "splat": Builtin(f"{__name__}.splat", {"lateralgym/Splat-v1": "splat"}),
    "arbench-sp": Builtin(f"{__name__}.arbench", {}),
    "macgyver": Builtin(f"{__name__}.macgyver", {}),
}
"""Benchmark name -> its module and env ids, in the order ``all_benchmarks`` lists them."""

_LAZY = {  # name -> the module that defines it, imported on first use
    **dict.fromkeys(
        (
            "ChoiceOutcome",
            "ChoiceScene",
            "ExactChoiceJudge",
            "MultipleChoiceBenchmark",
            "MultipleChoiceItem",
            "grade_choice",
        ),
        "_mcq",
    ),
}

if not TYPE_CHECKING:  # mypy reads the imports above: no fallback types a misspelt name as Any
    _shared = lazy_exports(__name__, _LAZY)

    def __getattr__(name: str) -> Any:
        if any(builtin.module == f"{__name__}.{name}" for builtin in BUILTIN.values()):
            return importlib.import_module(f"{__name__}.{name}")  # as ``import lateralgym.envs.benchmarks.splat``
        return _shared(name)


__all__ = [
    "BUILTIN",
    "Builtin",
    "arbench",
    "ChoiceOutcome",
    "ChoiceScene",
    "ExactChoiceJudge",
    "MultipleChoiceBenchmark",
    "MultipleChoiceItem",
    "brainteaser",
    "creativity",
    "grade_choice",
    "macgyver",
    "riddlesense",
    "splat",
]
