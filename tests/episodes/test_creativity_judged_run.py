"""A CreativityBench run with an LLM player and an LLM judge over the loopback server: summary.json,
the report (Table 3, Tables 5-6, Figure 11) and the viewer carry the judged metrics, equal to
values computed by hand from the scripted judge replies below. These are LateralGym's own instruments
(``judging: lateralgym``: a 1-5 comparison and nine failure codes in one call); the paper's are in
``test_creativity_paper_judging.py``.

Six copies of PAINT_TASK ("case 1" ... "case 6" in the task text). The player answers:

====  ===============================  ==============  =================================
case  answer                           outcome         judge reply
====  ===============================  ==============  =================================
1     steel soup spoon / handle        gold correct    rubric env 2, use 1, recip 0,
                                                       grounding 2, prediction 1, feas 2
2     steel soup spoon / bowl          entity only     comparison 3, env NA, use 2,
                                                       recip 1, grounding 1, feas 2; D1 (+A3)
3     cotton tea towel / cloth_body    both wrong      comparison 1, env 0, use 0, recip NA,
                                                       grounding 0, feas 1; A2 (+C1, B2)
4     bamboo cutting board / face      both wrong      comparison 2, env/use/recip NA,
                                                       grounding 1, feas 0; A1 (+A2)
5     no answer (prose)                unparsed        (no call: dropped under paper)
6     steel soup spoon / handle        gold correct    malformed twice: unjudged
====  ===============================  ==============  =================================

PAINT_TASK's gold has environment and recipient conditions NA, so case 1's 2 and 0 there are NA.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from _items import PAINT_TASK
from llm_server import ScriptedLLMServer

from lateralgym.envs import EpisodeConfig
from lateralgym.envs.benchmarks.creativity import CreativityTask
from lateralgym.episodes import run, write_report, write_viewer

TASKS = [
    PAINT_TASK.model_copy(update={"id": f"paint-{k}", "task": f"{PAINT_TASK.task} (case {k})"}) for k in range(1, 7)
]

ANSWERS = {
    1: ("steel soup spoon", "handle"),
    2: ("steel soup spoon", "bowl"),
    3: ("cotton tea towel", "cloth_body"),
    4: ("bamboo cutting board", "board_face"),
    6: ("steel soup spoon", "handle"),
}

GOLD = {"attribute_grounding": 2, "action_feasibility": 2}
JUDGE = {
    1: GOLD
    | {"environment_condition_coverage": 2, "use_condition_coverage": 1, "recipient_condition_coverage": 0}
    | {"prediction_correctness": 1},
    2: {"gold_comparison": 3, "environment_condition_coverage": "NA", "use_condition_coverage": 2}
    | {"recipient_condition_coverage": 1, "attribute_grounding": 1, "action_feasibility": 2}
    | {"primary_failure": "D1", "contributing_failures": ["A3"]},
    3: {"gold_comparison": 1, "environment_condition_coverage": 0, "use_condition_coverage": 0}
    | {"recipient_condition_coverage": "NA", "attribute_grounding": 0, "action_feasibility": 1}
    | {"primary_failure": "A2", "contributing_failures": ["C1", "B2"]},
    4: {"gold_comparison": 2, "environment_condition_coverage": "NA", "use_condition_coverage": "NA"}
    | {"recipient_condition_coverage": "NA", "attribute_grounding": 1, "action_feasibility": 0}
    | {"primary_failure": "A1", "contributing_failures": ["A2"]},
}


def _case(text: str) -> int:
    match = re.search(r"\(case (\d)\)", text)
    assert match is not None, text
    return int(match.group(1))


def respond(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    user = body["messages"][1]["content"]
    case = _case(user)
    if system.startswith("You are a creative problem-solver"):  # the player
        if case == 5:
            return "I would need to think about this much longer."
        entity, part = ANSWERS[case]
        answer = {"gold_entity": entity, "gold_part": part, "how_to_use": f"Use the {part} (case {case})."}
        return f"Reasoning first.\n{json.dumps(answer)}"
    return "I cannot grade this." if case == 6 else json.dumps(JUDGE[case] | {"comment": f"case {case}"})


@pytest.fixture(scope="module")
def judged_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("judged")
    server = ScriptedLLMServer(responder=respond).start()
    try:
        result = run(
            EpisodeConfig.named("creativity-static").with_options(judging="lateralgym"),
            player="openai/player",
            judge="openai/judge",
            items=list[CreativityTask](TASKS),
            base_url=server.base_url,
            out=out,
            progress=False,
            cache_dir=out / "cache",
        )
        bodies = [r.body for r in server.requests if r.method == "POST"]
    finally:
        server.stop()
    return result, bodies


def _row(rows: list[dict[str, Any]], key: str, value: str) -> dict[str, Any]:
    return next(r for r in rows if r[key] == value)


def test_summary_holds_table_3_tables_5_6_and_figure_11(judged_run: tuple[Any, list[dict[str, Any]]]) -> None:
    result, _ = judged_run
    summary = json.loads((result.run_dir / "summary.json").read_text(encoding="utf-8"))
    headline = summary["headline"]
    # case 5 is unparsed and left out under paper scoring: gold 2/5, entity 3/5
    assert (headline["gold_correct_rate"], headline["entity_correct_rate"]) == (40.0, 60.0)
    assert (headline["scored_episodes"], headline["unparsed"]) == (5, 1)
    quality = summary["breakdowns"]["judged_quality"]
    gold = _row(quality, "outcome", "gold_correct")
    # case 1 alone (case 6 unjudged): use 1 -> 3, grounding 2 -> 5, prediction 1 -> 3, feasibility 2 -> 5
    assert {k: gold[k] for k in ("answers", "judged", "unjudged")} == {"answers": 2, "judged": 1, "unjudged": 1}
    assert gold["environment_condition_coverage"] is None and gold["environment_condition_coverage_na"] == 1
    assert gold["recipient_condition_coverage"] is None and gold["recipient_condition_coverage_na"] == 1
    assert (gold["use_condition_coverage"], gold["attribute_grounding"]) == (3.0, 5.0)
    assert (gold["prediction_correctness"], gold["action_feasibility"], gold["mean_score"]) == (3.0, 5.0, 4.0)
    assert "gold_comparison" not in gold
    entity_only = _row(quality, "outcome", "entity_correct_only")
    # case 2: use 2 -> 5, recipient 1 -> 3, grounding 1 -> 3, feasibility 2 -> 5; mean 16/4
    assert (entity_only["answers"], entity_only["judged"], entity_only["environment_condition_coverage_na"]) == (
        1,
        1,
        1,
    )
    assert [entity_only[k] for k in ("use_condition_coverage", "recipient_condition_coverage")] == [5.0, 3.0]
    assert [entity_only[k] for k in ("attribute_grounding", "action_feasibility", "mean_score")] == [3.0, 5.0, 4.0]
    assert (entity_only["gold_comparison"], entity_only["gold_comparison_3"]) == (3.0, 1)
    both = _row(quality, "outcome", "both_wrong")
    # case 3: env 1, use 1, grounding 1, feasibility 3 (mean 1.5); case 4: grounding 3, feasibility 1 (mean 2)
    assert (both["answers"], both["judged"], both["unjudged"]) == (2, 2, 0)
    assert (both["environment_condition_coverage"], both["environment_condition_coverage_na"]) == (1.0, 1)
    assert (both["use_condition_coverage"], both["recipient_condition_coverage"]) == (1.0, None)
    assert (both["attribute_grounding"], both["action_feasibility"], both["mean_score"]) == (2.0, 2.0, 1.75)
    assert (both["gold_comparison"], both["gold_comparison_1"], both["gold_comparison_2"]) == (1.5, 1, 1)
    attribution = {
        r["category"]: (r["primary"], r["contributing"]) for r in summary["breakdowns"]["failure_attribution"]
    }
    assert attribution == {
        "A1": (1, 0),
        "A2": (1, 1),
        "A3": (0, 1),
        "B1": (0, 0),
        "B2": (0, 1),
        "C1": (0, 1),
        "C2": (0, 0),
        "D1": (1, 0),
        "D2": (0, 0),
    }
    a1 = _row(summary["breakdowns"]["failure_attribution"], "category", "A1")
    assert (a1["primary_both_wrong"], a1["primary_entity_correct_only"]) == (1, 0)


def test_paper_config_temperature_reaches_player_and_judge(judged_run: tuple[Any, list[dict[str, Any]]]) -> None:
    _, bodies = judged_run
    assert bodies and all(body.get("temperature") == 0 for body in bodies)
    judge_calls = [b for b in bodies if not b["messages"][0]["content"].startswith("You are a creative")]
    # five judged answers, case 6 asked twice (the re-ask), case 5 never
    assert len(judge_calls) == 6 and sum(_case(b["messages"][1]["content"]) == 6 for b in judge_calls) == 2


def test_report_shows_the_judged_tables_and_figure_11(judged_run: tuple[Any, list[dict[str, Any]]]) -> None:
    pytest.importorskip("matplotlib")
    result, _ = judged_run
    report = write_report(result.run_dir).read_text(encoding="utf-8")
    assert "### judged_quality" in report and "### failure_attribution" in report
    assert "| gold_correct | 2 | 1 | 1 |" in report  # answers, judged, unjudged
    assert "| A2 | affordance mismatch | 1 | 1 |" in report
    assert "plots/creativity_failure_attribution.png" in report
    assert (result.run_dir / "plots" / "creativity_failure_attribution.png").stat().st_size > 0


def test_viewer_carries_each_episodes_judgement(judged_run: tuple[Any, list[dict[str, Any]]]) -> None:
    result, _ = judged_run
    page = write_viewer(result.run_dir).read_text(encoding="utf-8")
    data = json.loads(
        re.search(r'<script type="application/json" id="lateralgym-data">(.*?)</script>', page, re.S)
        .group(1)  # type: ignore[union-attr]
        .replace("<\\/", "</")
    )
    judgements = {ep["item"]: (ep.get("outcome") or {}).get("judgement") for ep in data["episodes"]}
    assert judgements["paint-3"]["primary_failure"] == "A2" and judgements["paint-3"]["mean"] == 1.5
    assert judgements["paint-6"] == {**judgements["paint-6"], "kind": "gold", "judged": False}
    assert judgements["paint-5"] is None
    assert "Judged (LLM judge)" in page and "judged-table" in page


@pytest.mark.parametrize("fmt", ["jsonl", "trl", "verifiers"])
def test_exports_keep_the_judges_comment_out_of_the_outcome(
    judged_run: tuple[Any, list[dict[str, Any]]], fmt: str, tmp_path: Any
) -> None:
    """A trainer feeding ``outcome`` to a policy must not see the judge's prose about the gold: the
    comment moves to ``judge_notes``; the typed judgement (scores, failure codes) stays."""
    from lateralgym.episodes import export_run

    result, _ = judged_run
    path = export_run(result.run_dir, fmt, tmp_path / f"{fmt}.jsonl").path
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    if fmt == "verifiers":
        rows = [row["traces"][0]["info"] for row in rows]
    notes: dict[str, str] = {}
    for row in rows:
        outcome = json.loads(row["outcome"])
        assert '"comment"' not in row["outcome"], row["outcome"]
        judgement = outcome.get("judgement")
        if judgement is not None:
            assert "comment" not in judgement and "scores" in judgement
        notes.update({json.loads(row["judge_notes"]).get("judgement.comment", ""): row["outcome"]})
    assert {"case 1", "case 2", "case 3", "case 4"} <= set(notes)
