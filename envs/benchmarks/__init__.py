"""The built-in benchmarks, one folder or module each; importing this package registers them.

Each folder holds everything named after its benchmark (see its env card, the module docstring).
What the multiple-choice ones share (scene, outcome, judge, offline policies, the LLM protocol)
is here: ``MultipleChoiceBenchmark`` and ``MultipleChoiceItem``. See ``docs/adding-a-benchmark.md``
for registering your own.
"""

# isort: off
# The first four register in the order they always have; the newer ones after them.
from lateralgym.envs.benchmarks import brainteaser, creativity, riddlesense, splat
from lateralgym.envs.benchmarks import arbench, macgyver

# isort: on
from lateralgym.envs.benchmarks._mcq import (
    ChoiceOutcome,
    ChoiceScene,
    ExactChoiceJudge,
    MultipleChoiceBenchmark,
    MultipleChoiceItem,
    grade_choice,
)

__all__ = [
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
