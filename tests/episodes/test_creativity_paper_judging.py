"""``judging: paper`` (the default): Tables 5-6 and Figure 11 measured as the paper's judge measures them,
over the loopback server, against values computed by hand from the scripted replies below.

Four copies of PAINT_TASK ("case 1" ... "case 4"); its gold affordance has a use condition but no
environment or recipient condition (those two are NA whatever the judge says).

====  ==========================  ============  ===========================================================
case  answer                      outcome       judge replies
====  ==========================  ============  ===========================================================
1     steel soup spoon / handle   gold correct  rubric: use "NA" (kept NA: paper), grounding 2, prediction 1,
                                                feasibility 2 -> scores 5, 3, 5; mean 13/3
2     steel soup spoon / bowl     entity only   rubric: env NA, use 2, recip 1, grounding 1, feas 2 -> mean 18/4;
                                                reasonable level 1 -> comparison 3; comparative inferiority
3     cotton tea towel / cloth    both wrong    rubric: env 0, use 0, recip NA, grounding 0, feas 1 -> mean 7/4;
                                                level 0 -> comparison 1; physical invalidity
4     bamboo board / board_face   both wrong    rubric: all conditions NA, grounding 1, feas 0 -> mean 2;
                                                level 2 -> comparison 5; risk or constraint mismatch
====  ==========================  ============  ===========================================================

Wrong answers take two calls (the rubric, then the comparison with the gold on the paper's 0 / 1 / 2
scale), plus one for the failure category when sampled (``attribution_fraction: 1`` samples all).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _items import PAINT_TASK
from llm_server import ScriptedLLMServer

from lateralgym.envs import EpisodeConfig
from lateralgym.envs.benchmarks.creativity import CreativityTask
from lateralgym.envs.benchmarks.creativity._llm_judge import attribution_sampled
from lateralgym.episodes import run

TASKS = [
    PAINT_TASK.model_copy(update={"id": f"paint-{k}", "task": f"{PAINT_TASK.task} (case {k})"}) for k in range(1, 5)
]
ANSWERS = {
    1: ("steel soup spoon", "handle"),
    2: ("steel soup spoon", "bowl"),
    3: ("cotton tea towel", "cloth_body"),
    4: ("bamboo cutting board", "board_face"),
}
GOLD_RUBRIC = {
    "environment_condition_coverage": 2,
    "use_condition_coverage": "NA",
    "recipient_condition_coverage": 0,
    "attribute_grounding": 2,
    "prediction_correctness": 1,
    "action_feasibility": 2,
}
WRONG_RUBRIC = {
    2: {"environment_condition_coverage": "NA", "use_condition_coverage": 2, "recipient_condition_coverage": 1}
    | {"attribute_grounding": 1, "action_feasibility": 2},
    3: {"environment_condition_coverage": 0, "use_condition_coverage": 0, "recipient_condition_coverage": "NA"}
    | {"attribute_grounding": 0, "action_feasibility": 1},
    4: {"environment_condition_coverage": "NA", "use_condition_coverage": "NA", "recipient_condition_coverage": "NA"}
    | {"attribute_grounding": 1, "action_feasibility": 0},
}
LEVEL = {2: 1, 3: 0, 4: 2}
CATEGORY = {2: "comparative inferiority", 3: "physical_invalidity", 4: "Risk or constraint mismatch"}


def _case(text: str) -> int:
    match = re.search(r"\(case (\d)\)", text)
    assert match is not None, text
    return int(match.group(1))


def respond(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    case = _case(body["messages"][1]["content"])
    if system.startswith("You are a creative problem-solver"):
        entity, part = ANSWERS[case]
        return json.dumps({"gold_entity": entity, "gold_part": part, "how_to_use": f"Use the {part} (case {case})."})
    if system.startswith("You are a strict grader"):  # gold-correct rubric
        return json.dumps(GOLD_RUBRIC)
    if "0, 1 or 2: how reasonable" in system:  # the comparison with the gold
        return json.dumps({"reasonable_level": LEVEL[case], "reason": f"reason of case {case}"})
    if "failure category" in system:  # Figure 11's categorisation, on the comparison's reason
        assert f"reason of case {case}" in body["messages"][1]["content"]
        return json.dumps({"failure_category": CATEGORY[case], "reason": "scripted"})
    return json.dumps(WRONG_RUBRIC[case])  # the wrong-answer rubric


def _run(tmp_path: Path, **options: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    server = ScriptedLLMServer(responder=respond).start()
    try:
        config = EpisodeConfig.named("creativity-static")
        if options:
            config = config.with_options(**options)
        result = run(
            config,
            player="openai/player",
            judge="openai/judge",
            items=list[CreativityTask](TASKS),
            base_url=server.base_url,
            out=tmp_path,
            progress=False,
            cache_dir=tmp_path / "cache",
        )
        bodies = [r.body for r in server.requests if r.method == "POST"]
    finally:
        server.stop()
    return json.loads((result.run_dir / "summary.json").read_text(encoding="utf-8")), bodies


def _row(rows: list[dict[str, Any]], key: str, value: str) -> dict[str, Any]:
    return next(r for r in rows if r[key] == value)


@pytest.fixture(scope="module")
def sampled_all(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return _run(tmp_path_factory.mktemp("paper-judging"), attribution_fraction=1.0)


def test_tables_5_6_on_the_papers_scale(sampled_all: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    summary, _ = sampled_all
    rows = summary["breakdowns"]["judged_quality"]
    gold = _row(rows, "outcome", "gold_correct")
    # NA kept: the judge's NA on the use condition (which the gold has) is left out, not scored 0
    assert gold["use_condition_coverage"] is None and gold["use_condition_coverage_na"] == 1
    assert (gold["attribute_grounding"], gold["prediction_correctness"]) == (5.0, 3.0)
    assert gold["mean_score"] == pytest.approx(13 / 3)
    entity_only = _row(rows, "outcome", "entity_correct_only")
    assert (entity_only["gold_comparison"], entity_only["gold_comparison_3"]) == (3.0, 1)
    assert entity_only["mean_score"] == pytest.approx((5 + 3 + 3 + 5) / 4)
    both = _row(rows, "outcome", "both_wrong")
    assert (both["gold_comparison"], both["gold_comparison_1"], both["gold_comparison_5"]) == (3.0, 1, 1)
    assert both["gold_comparison_2"] == both["gold_comparison_4"] == 0  # the paper's scale has no 2 or 4
    assert both["mean_score"] == pytest.approx(((1 + 1 + 1 + 3) / 4 + (3 + 1) / 2) / 2)


def test_figure_11_from_a_separate_call_on_the_reason(sampled_all: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    summary, bodies = sampled_all
    rows = summary["breakdowns"]["failure_attribution"]
    counts = {r["category"]: r["primary"] for r in rows}
    assert counts == {
        "physical_invalidity": 1,
        "practical_infeasibility": 0,
        "risk_or_constraint_mismatch": 1,
        "comparative_inferiority": 1,
    }
    assert all(r["sampled"] == 3 for r in rows)
    judge_calls = [b for b in bodies if not b["messages"][0]["content"].startswith("You are a creative problem-solver")]
    assert len(judge_calls) == 1 + 3 * 3  # gold rubric; per wrong answer: rubric, comparison, category


def test_no_failure_is_categorised_outside_the_sample(tmp_path: Path) -> None:
    summary, bodies = _run(tmp_path, attribution_fraction=0.0)
    rows = summary["breakdowns"]["failure_attribution"]
    assert all(r["primary"] == 0 and r["sampled"] == 0 for r in rows)
    assert not any("failure category" in b["messages"][0]["content"] for b in bodies)
    assert _row(summary["breakdowns"]["judged_quality"], "outcome", "both_wrong")["gold_comparison"] == 3.0


def test_the_sample_is_a_stable_share_of_answers() -> None:
    keys = [f"task-{n}" for n in range(2000)]
    chosen = [k for k in keys if attribution_sampled(k, "spoon", "handle", "lever", 0.1)]
    assert 150 <= len(chosen) <= 250  # about 10 %
    assert chosen == [k for k in keys if attribution_sampled(k, "spoon", "handle", "lever", 0.1)]
    assert not attribution_sampled("x", "a", "b", "c", 0.0) and attribution_sampled("x", "a", "b", "c", 1.0)
