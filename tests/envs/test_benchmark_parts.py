"""A benchmark is composed of parts (``lateralgym.envs._parts``): each benchmark binds its own copy, a part
that only sets values is one line, and a hook left on the class (where it would do nothing) is refused."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from lateralgym.envs import (
    Benchmark,
    DataPart,
    JudgingPart,
    MetricsPart,
    get_benchmark,
    register_benchmark,
)
from lateralgym.envs.benchmarks import MultipleChoiceItem
from lateralgym.envs.benchmarks._mcq import ChoiceOutcome, ChoiceScene


def _quiz(**attributes: Any) -> type[Benchmark[Any, Any]]:
    body: dict[str, Any] = {
        "name": "parts-quiz",
        "item_type": MultipleChoiceItem,
        "outcome_type": ChoiceOutcome,
        "scene_type": ChoiceScene,
        "modes": ("mcq",),
        "action_forms": {"commit": "commit: <letter>"},
        **attributes,
    }
    return type("PartsQuiz", (Benchmark,), body)


def test_a_part_that_only_sets_values_is_one_line_and_binds_to_its_own_benchmark() -> None:
    quiz = _quiz(
        judging=JudgingPart.having(default_judge="exact", verdict_labels=("correct", "incorrect")),
        metrics=MetricsPart.having(headline=("accuracy",)),
    )()
    assert quiz.judging.verdict_labels == ("correct", "incorrect")
    assert quiz.default_config()["judge"] == "exact"
    assert quiz.judging.benchmark is quiz and quiz.data.benchmark is quiz
    other = _quiz()()
    assert other.judging.verdict_labels == ("correct", "not_yet", "incorrect")  # the defaults, untouched
    assert other.data is not quiz.data


def test_an_unknown_setting_names_the_ones_a_part_has() -> None:
    with pytest.raises(TypeError, match="DataPart has no setting 'sample'; its settings: .*sample_file"):
        DataPart.having(sample="quiz.jsonl")


def test_a_hook_left_on_the_benchmark_class_is_refused_with_where_it_goes() -> None:
    with pytest.raises(TypeError, match=r"defines offline_judges: it belongs to its judging part \(JudgingPart\)"):
        register_benchmark(_quiz(offline_judges={"exact": object}))
    with pytest.raises(TypeError, match="defines oracle_action: it belongs to its policies part"):
        register_benchmark(_quiz(oracle_action=lambda self, item, info: None))


def test_a_part_outside_a_benchmark_says_so() -> None:
    with pytest.raises(RuntimeError, match="belongs to no benchmark yet"):
        DataPart().sample_items()


class _Counted(DataPart[MultipleChoiceItem]):
    sample_file: ClassVar[str | None] = None

    def stat_axes(self, item: MultipleChoiceItem) -> dict[str, Any]:
        return {"options": len(item.choices)}


def test_a_subclassed_part_reaches_its_benchmark() -> None:
    quiz = _quiz(data=_Counted())()
    items = [
        MultipleChoiceItem(id=f"q{n}", question="Which?", choices=("a", "b", "c")[: n + 2], label=0) for n in range(2)
    ]
    block = quiz.data.stats(items)
    assert block.kind == "parts-quiz" and block.sections == {"options": {"2": 1, "3": 1}}
    assert get_benchmark("brainteaser").data.first_items  # a built-in's part is reached the same way
