"""CreativityBench's three scoring rules in a run: every answer graded under ``official``, ``paper`` and
``strict``; the run's own rule in the headline, the other two beside it and in ``by_scoring``; the
official rule accepting an answer without a part; ``entity_order``.

PAINT_TASK (tests/_items.py) lists the towel, the spoon (gold: its ``handle``) and the board, in that
order, so the official rule's first-listed fallback lands on the towel here, not on the gold. TASK adds
the release's comparisons (``judge_output``): the spoon's other part (its bowl) and every distractor part.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _items import PAINT_TASK

from lateralgym.agents import Agent
from lateralgym.envs import Action, Commit, EpisodeConfig, LateralEnv
from lateralgym.envs.benchmarks.creativity import (
    CreativityOptions,
    CreativityOutcome,
    CreativityTask,
    EntityJudgement,
    PartJudgement,
)
from lateralgym.episodes import compare_markdown, leaderboard, run


def _compared(entity: str, *parts: str) -> EntityJudgement:
    verdicts = (PartJudgement(part=p, similar_affordance=False, gold_change=False) for p in parts)
    return EntityJudgement(entity=entity, parts=tuple(verdicts))


TASK = PAINT_TASK.model_copy(
    update={
        "judge_output": (
            _compared("cotton tea towel", "cloth_body", "hanging_loop"),
            _compared("steel soup spoon", "bowl"),
            _compared("bamboo cutting board", "board_face", "juice_groove"),
        )
    }
)
GOLD_FIRST = TASK.model_copy(
    update={"id": "gold-first", "entities": (TASK.entities[1], TASK.entities[0], TASK.entities[2])}
)

# (entity, part, how) per task id, with what each rule says: (gold, entity) correct
ANSWERS: dict[str, tuple[str, str, str]] = {
    "exact": ("steel soup spoon", "handle", "lever it"),  # gold everywhere
    "spaced-part": ("Steel Soup Spoon", "Handle", "lever it"),  # official: part wrong (not written exactly)
    "invented": ("garden trowel", "handle", "lever it"),  # official: the first listed (towel), entity wrong
    "partial": ("spoon", "handle", "lever it"),  # official and paper: gold; strict: a hallucination
    "no-how": ("steel soup spoon", "handle", ""),  # official: never judged (left out of its denominator)
}
EXPECTED = {  # rule -> task id -> (gold, entity)
    "official": {
        "exact": (True, True),
        "spaced-part": (False, True),
        "invented": (False, False),
        "partial": (True, True),
    },
    "paper": {
        "exact": (True, True),
        "spaced-part": (True, True),
        "invented": (False, False),
        "partial": (True, True),
        "no-how": (True, True),
    },
    "strict": {
        "exact": (True, True),
        "spaced-part": (True, True),
        "invented": (False, False),
        "partial": (False, False),
        "no-how": (True, True),
    },
}
TASKS = [TASK.model_copy(update={"id": key, "task": f"{TASK.task} (case {key})"}) for key in ANSWERS]


class Scripted(Agent):
    """Commits the answer ANSWERS gives for the task it recognises by its text (ids stay hidden)."""

    name = "scripted"

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        case = str(info["public"]["task"]).rsplit("(case ", 1)[1].rstrip(")")
        entity, part, how = ANSWERS[case]
        return Commit(entity=entity, part=part, how_to_use=how)


def _config(scoring: str, **options: Any) -> EpisodeConfig:
    return EpisodeConfig.named("creativity-static").with_options(scoring=scoring, **options)


def _summary(scoring: str, tmp_path: Path) -> tuple[dict[str, Any], Path]:
    result = run(
        _config(scoring),
        items=list[CreativityTask](TASKS),
        agent_factory=lambda seed: Scripted(seed),
        out=tmp_path / scoring,
        progress=False,
        concurrency=1,
    )
    return json.loads((result.run_dir / "summary.json").read_text(encoding="utf-8")), result.run_dir


def _rate(rows: dict[str, tuple[bool, bool]], which: int) -> float:
    return 100.0 * sum(v[which] for v in rows.values()) / len(rows)


@pytest.mark.parametrize("scoring", ["official", "paper", "strict"])
def test_every_rule_is_reported_with_its_own_denominator(scoring: str, tmp_path: Path) -> None:
    summary, _ = _summary(scoring, tmp_path)
    headline = summary["headline"]
    assert headline["gold_correct_rate"] == _rate(EXPECTED[scoring], 0)
    assert headline["entity_correct_rate"] == _rate(EXPECTED[scoring], 1)
    assert headline["scored_episodes"] == len(EXPECTED[scoring])
    for rule, expected in EXPECTED.items():
        row = next(r for r in summary["breakdowns"]["by_scoring"] if r["scoring"] == rule)
        assert row["run's own"] == (rule == scoring)
        assert (row["gold_correct_rate"], row["entity_correct_rate"]) == (_rate(expected, 0), _rate(expected, 1))
        assert row["scored_episodes"] == len(expected)
        if rule != scoring:
            assert headline[f"{rule}_gold_correct_rate"] == _rate(expected, 0)
        else:
            assert f"{rule}_gold_correct_rate" not in headline


def test_compare_shows_the_official_rule_beside_ours(tmp_path: Path) -> None:
    _, paper_run = _summary("paper", tmp_path)
    board = leaderboard([paper_run], resamples=0)
    assert {"gold_correct_rate", "official_gold_correct_rate", "strict_gold_correct_rate"} <= set(board.rows[0].metrics)
    table = compare_markdown(board)
    assert "official_gold_correct_rate" in table and "strict_gold_correct_rate" in table


def _outcome(config: EpisodeConfig, task: CreativityTask, commit: Commit) -> tuple[bool, CreativityOutcome]:
    env = LateralEnv(config, items=[task])
    env.reset(seed=0)
    _, _, terminated, _, info = env.step(commit)
    return bool(info["valid_action"]), CreativityOutcome.model_validate(env.outcome().model_dump())


def test_the_official_rule_grades_an_answer_without_a_part_and_ours_refuse_it() -> None:
    commit = Commit(entity="steel soup spoon", part=None, how_to_use="lever it")
    valid, outcome = _outcome(_config("official"), TASK, commit)
    # The empty part is grounded to the spoon's one compared part, its bowl: entity right, part wrong.
    assert valid and outcome.committed and outcome.entity_correct and not outcome.gold_correct
    assert (outcome.rules["official"].grounded_entity, outcome.rules["official"].grounded_part) == (
        "steel soup spoon",
        "bowl",
    )
    for scoring in ("paper", "strict"):
        valid, outcome = _outcome(_config(scoring), TASK, commit)
        assert not valid and not outcome.committed and outcome.unparsed


def test_an_empty_entity_is_the_first_listed_one_officially() -> None:
    commit = Commit(entity=None, part="handle", how_to_use="lever it")
    _, outcome = _outcome(_config("official"), GOLD_FIRST, commit)
    assert outcome.gold_correct and outcome.rules["official"].relation == "gold"
    assert outcome.rules["official"].hallucinated  # our own count: no scene entity has that name


def _listed(config: EpisodeConfig, task: CreativityTask, seed: int) -> list[str]:
    env = LateralEnv(config, items=[task])
    _, info = env.reset(seed=seed)
    return list(info["public"]["entities"])


def test_entity_order_official_lists_the_gold_first_then_the_file_order() -> None:
    names = [e.name for e in PAINT_TASK.entities]
    official = _config("paper", entity_order="official")
    for seed in range(5):
        assert _listed(official, PAINT_TASK, seed) == ["steel soup spoon", names[0], names[2]]
        assert _listed(_config("paper", entity_order="file"), PAINT_TASK, seed) == names
    shuffled = {tuple(_listed(_config("paper", entity_order="shuffled"), PAINT_TASK, s)) for s in range(12)}
    assert len(shuffled) > 1
    assert _listed(_config("paper", shuffle_entities=False), PAINT_TASK, 3) == names  # the older switch


def test_entity_order_in_the_static_prompt_text() -> None:
    env = LateralEnv(_config("paper", entity_order="official"), items=[PAINT_TASK])
    observation, _ = env.reset(seed=1)
    text = observation["text"]
    assert text.index("steel soup spoon:") < text.index("cotton tea towel:") < text.index("bamboo cutting board:")


def test_options_resolve_the_order() -> None:
    assert CreativityOptions().order() == "shuffled"
    assert CreativityOptions(shuffle_entities=False).order() == "file"
    assert CreativityOptions(shuffle_entities=False, entity_order="official").order() == "official"
