"""``scoring: official`` grades the entity and part as the model wrote them, not as our parser reads them.

The official ``judge.py`` grounds a predicted part by word F1 among the grounded entity's ``judge_output``
parts, and otherwise accepts it only when ``pred_part == gold_part`` as raw strings (quirk Q6 in
``_official.py``). Our reply parser resolves ``LED bulbs`` to the scene's ``led_bulbs``; the official
rule must still see ``LED bulbs``, while ``paper`` and ``strict`` keep reading the resolved name.

The fairy-lights task is written for these tests, in two versions: the release's layout, where the gold
entity's ``judge_output`` compares its other parts only (so only the exact raw string reaches the gold
part), and one whose ``judge_output`` also lists the gold part (so word F1 grounds a respelling to it).
Each reply goes through the benchmark's own parser and a real episode.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer

from lateralgym.envs import Commit, EpisodeConfig, LateralEnv, get_benchmark
from lateralgym.envs.benchmarks.creativity import (
    Affordance,
    CreativityOutcome,
    CreativityTask,
    Entity,
    EntityJudgement,
    GoldAnswer,
    Part,
    PartJudgement,
    ReferenceSolution,
    SamplingFactors,
    grades_by_rule,
)
from lateralgym.episodes import StepLine, read_log, run

LIGHTS = "string of fairy lights"
JAR = "glass jam jar"

GLOW = Affordance(action="light a dark cupboard", category="illuminate", level=1)

LIGHTS_ENTITY = Entity(
    id="bedroom/string_of_fairy_lights/1",
    name=LIGHTS,
    scene="bedroom",
    parts=(Part(name="copper_wire"), Part(name="led_bulbs", affordances=(GLOW,)), Part(name="battery_box")),
)
JAR_ENTITY = Entity(
    id="bedroom/glass_jam_jar/1",
    name=JAR,
    scene="bedroom",
    parts=(Part(name="screw_lid"), Part(name="jar_body")),
)


def _compared(entity: str, *parts: str) -> EntityJudgement:
    return EntityJudgement(
        entity=entity, parts=tuple(PartJudgement(part=p, similar_affordance=False, gold_change=False) for p in parts)
    )


_BASE = CreativityTask(
    id="fairy-lights",
    scene="bedroom",
    task="The power is out and I cannot see inside the cupboard under the stairs. What can light it?",
    environment="I am in the bedroom beside the stairs, with the fairy lights and a jam jar.",
    entities=(LIGHTS_ENTITY, JAR_ENTITY),
    gold=GoldAnswer(entity=LIGHTS, part="led_bulbs", affordance=GLOW),
    solution=ReferenceSolution(
        prepare_recipient="Open the cupboard door.",
        prepare_use_condition="Switch the battery box on.",
        prepare_environment_condition="Clear the cupboard shelf.",
        apply_affordance="Drape the lit LED bulbs over the shelf.",
    ),
    factors=SamplingFactors(cluster_size_range=(1, 4), gold_level=1, distractor_count=1, distractor_similarity="mixed"),
)
GOLD_NOT_COMPARED = _BASE.model_copy(
    update={"judge_output": (_compared(LIGHTS, "copper_wire", "battery_box"), _compared(JAR, "screw_lid", "jar_body"))}
)
"""The release's layout: the gold entity's ``judge_output`` compares its other parts, never the gold one."""
GOLD_COMPARED = _BASE.model_copy(
    update={
        "judge_output": (
            _compared(LIGHTS, "copper_wire", "led_bulbs", "battery_box"),
            _compared(JAR, "screw_lid", "jar_body"),
        )
    }
)
"""The gold entity's ``judge_output`` lists the gold part too: grounding by word F1 can reach it."""

SPELLINGS = {
    "other case": "LED bulbs",
    "spaces for underscores": "led bulbs",
    "an article": "the led_bulbs",
}


def _answer(task: CreativityTask, part: str, scoring: str = "official") -> CreativityOutcome:
    """One static episode whose model reply names the gold entity and ``part``, read by the benchmark's parser."""
    config = EpisodeConfig.named("creativity-static").with_options(scoring=scoring)
    env = LateralEnv(config, items=[task])
    _, info = env.reset(seed=0)
    reply = json.dumps({"gold_entity": LIGHTS, "gold_part": part, "how_to_use": "hang them in the cupboard"})
    action = get_benchmark("creativity").prompts.parse_reply(reply, info, None)
    assert isinstance(action, Commit) and action.part == "led_bulbs"  # what our rules read
    env.step(action)
    return CreativityOutcome.model_validate(env.outcome().model_dump())


@pytest.mark.parametrize("spelling", list(SPELLINGS.values()), ids=list(SPELLINGS))
def test_the_gold_part_respelled_is_wrong_officially_when_only_the_raw_string_can_match(spelling: str) -> None:
    outcome = _answer(GOLD_NOT_COMPARED, spelling)
    official = outcome.rules["official"]
    assert (outcome.entity_correct, outcome.gold_correct) == (True, False)
    assert (official.part_match, official.relation) == (False, "not similar")
    assert official.grounded_part == "copper_wire"  # no word shared with any compared part: the first
    assert outcome.rules["paper"].part_correct and outcome.rules["strict"].part_correct  # ours read led_bulbs


@pytest.mark.parametrize("spelling", list(SPELLINGS.values()), ids=list(SPELLINGS))
def test_the_gold_part_respelled_is_gold_officially_when_grounding_reaches_it(spelling: str) -> None:
    outcome = _answer(GOLD_COMPARED, spelling)
    official = outcome.rules["official"]
    assert (outcome.entity_correct, outcome.gold_correct) == (True, True)
    assert (official.grounded_part, official.relation) == ("led_bulbs", "gold")  # word F1 1.0 (0.8 with "the")
    assert outcome.rules["paper"].part_correct and outcome.rules["strict"].part_correct


def test_the_exact_gold_part_is_gold_officially_in_both_layouts() -> None:
    for task in (GOLD_NOT_COMPARED, GOLD_COMPARED):
        assert _answer(task, "led_bulbs").gold_correct, task.judge_output


def test_a_run_scored_paper_reads_the_resolved_names() -> None:
    outcome = _answer(GOLD_NOT_COMPARED, "LED bulbs", scoring="paper")
    assert outcome.gold_correct and not outcome.rules["official"].part_correct
    assert outcome.answer is not None and outcome.answer.part == "led_bulbs"


def test_the_written_names_are_part_of_the_graded_answer() -> None:
    """Grading the same resolved answer twice with other written names grades afresh each time
    (``grades_by_rule`` keeps the last answer's facts)."""
    written = get_benchmark("creativity").prompts.parse_reply(
        json.dumps({"gold_entity": LIGHTS, "gold_part": "LED bulbs", "how_to_use": "x"}),
        {"mode": "static", "public": {"entities": [LIGHTS, JAR], "revealed": {LIGHTS: {"led_bulbs": ""}}}},
        None,
    )
    resolved = Commit(entity=LIGHTS, part="led_bulbs", how_to_use="x")
    assert isinstance(written, Commit) and (written.entity, written.part) == (resolved.entity, resolved.part)
    for commit, gold in ((resolved, True), (written, False), (resolved, True)):
        assert grades_by_rule(GOLD_NOT_COMPARED, commit)["official"].part_correct is gold


def test_an_llm_run_keeps_what_the_model_wrote(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    """A real run with an LLM player under ``official``: the model writes ``LED bulbs``, the step log keeps
    that beside the resolved ``led_bulbs``, and the official rate counts it wrong."""
    llm_server.enqueue(json.dumps({"gold_entity": LIGHTS, "gold_part": "LED bulbs", "how_to_use": "hang them up"}))
    result = run(
        EpisodeConfig.named("creativity-static").with_options(scoring="official"),
        items=[GOLD_NOT_COMPARED],
        player="openai/test-player",
        base_url=llm_server.base_url,
        out=tmp_path,
        use_cache=False,
        progress=False,
    )
    summary = json.loads((result.run_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["headline"]["gold_correct_rate"] == 0.0 and summary["headline"]["entity_correct_rate"] == 100.0
    assert summary["headline"]["paper_gold_correct_rate"] == 100.0
    (commit,) = [r.action for r in read_log(result.run_dir / "steps.jsonl") if isinstance(r, StepLine)]
    assert commit["part"] == "led_bulbs" and "LED bulbs" in commit["fields"].values()
