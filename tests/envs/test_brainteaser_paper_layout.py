"""BrainTeaser as the paper's notebook prompts it (``layout: paper``, the ``brainteaser`` config's default):
``(A)`` options in one user message ending ``Answer:``, demonstrations inside that message answered
``Answer:(B) <option text>``, a generic system line, replies read by their first bracketed letter; and
group accuracy's mean over repeats (the paper's random row: three seeds, one command)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _items import PUZZLES
from llm_server import ScriptedLLMServer
from official_data import DEMONSTRATION_QUESTIONS, write_brainteaser_demonstrations

import lateralgym
from lateralgym.envs import EpisodeConfig, ScoredEpisode
from lateralgym.envs.benchmarks.brainteaser import BrainTeaserOutcome, BrainTeaserScorer
from lateralgym.episodes import STEP_LOG, EpisodeStart, read_log, rollouts_from_log, run

EXPECTED_OPENING = (
    "Choose the best option for the brain teaser below. It has exactly one solution, which may be the "
    "option None of above. Answer with the option only.\n \n"
    "Question: Without ever leaving the ground, a pilot flew for hours. How?\n"
    "Choice:\n(A) The plane was broken.\n(B) He flew a simulator.\n(C) He slept.\n(D) None of above.\n\nAnswer:"
)


def test_the_observation_is_the_notebooks_layout() -> None:
    env = lateralgym.make("brainteaser", items=list(PUZZLES))
    observation, info = env.reset(options={"item_id": "SP-1_SR"})
    assert observation["text"] == EXPECTED_OPENING
    assert info["public"]["layout"] == "paper"
    ours = lateralgym.make(EpisodeConfig.named("brainteaser").with_options(layout="lateralgym"), items=list(PUZZLES))
    text = ours.reset(options={"item_id": "SP-1_SR"})[0]["text"]
    assert text.startswith("QUESTION: Without ever leaving") and "B. He flew a simulator." in text


def _played(tmp_path: Path, player: str, replies: list[str]) -> tuple[Any, list[dict[str, Any]]]:
    server = ScriptedLLMServer().start()
    try:
        server.enqueue(*replies)
        result = run(
            "brainteaser",
            player=player.replace("URL", server.base_url),
            items=[PUZZLES[1]],
            out=tmp_path / "runs",
            progress=False,
            cache_dir=tmp_path / "cache",
        )
        bodies = [r.body for r in server.requests if r.method == "POST"]
    finally:
        server.stop()
    return result, bodies


def test_zero_shot_is_one_user_message_under_a_generic_system_line(tmp_path: Path) -> None:
    result, bodies = _played(tmp_path, "openai/m?base_url=URL", ["(B) He flew a simulator."])
    (body,) = bodies
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][0]["content"] == "You are a helpful assistant.\n"
    assert body["messages"][1]["content"] == EXPECTED_OPENING
    assert result.metrics.headline["overall_acc"] == 100.0


def test_few_shot_demonstrations_sit_inside_the_one_message(tmp_path: Path) -> None:
    demos = write_brainteaser_demonstrations(tmp_path / "demos")
    result, bodies = _played(tmp_path, f"openai/m?base_url=URL&few_shot=4&demos={demos}", ["(A)"])
    (body,) = bodies
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    message = body["messages"][1]["content"]
    instruction, _, rest = message.partition("\n \n")
    blocks = rest.split("\n\n")
    # four demonstrations (the first two sentence puzzles, the first two word puzzles), then the puzzle
    questions = [DEMONSTRATION_QUESTIONS[i] for i in (0, 1, 4, 5)]
    demo_blocks = [b for b in blocks if b.startswith("Question: ") and not b.startswith("Question: Without")]
    assert [b.split("\n")[0] for b in demo_blocks] == [f"Question: {q}" for q in questions]
    assert "Answer:(B) He was bald." in message  # the first demonstration (choice order 2, 0, 1, 3): letter, text
    assert message.endswith("(D) None of above.\n\nAnswer:") and instruction.startswith("Choose the best option")
    # the log keeps the message the player read, so the rollout is rebuilt exactly
    start = next(r for r in read_log(result.run_dir / STEP_LOG) if isinstance(r, EpisodeStart))
    assert start.first_message == message
    (rollout,) = list(rollouts_from_log(result.run_dir))
    assert rollout.messages[1]["content"] == message


@pytest.mark.parametrize(
    ("reply", "choice"),
    [
        ("(B) He flew a simulator.", 1),
        ("Answer:(d)", 3),
        ("I pick (C) because (A) is silly.", 2),  # the first bracket decides, as in the notebook
        ("(Z) nothing; Answer: A", 0),  # no option letter in the first bracket: our parser reads the rest
        ("He flew a simulator.", 1),
    ],
)
def test_replies_are_read_by_their_first_bracketed_letter(reply: str, choice: int) -> None:
    unit = lateralgym.envs.get_benchmark("brainteaser")
    info = {"public": {"choices": list(PUZZLES[1].choices), "layout": "paper"}}
    action = unit.prompts.parse_reply(reply, info, None)
    assert action.kind == "commit" and action.choice == choice


def _outcome(item: Any, correct: bool) -> BrainTeaserOutcome:
    return BrainTeaserOutcome(
        turns=1,
        max_turns=1,
        invalid_actions=0,
        committed=True,
        choice=0,
        correct=correct,
        group_id=item.group_id,
        kind=item.kind,
        variant=item.variant,
    )


def test_group_accuracy_mean_over_repeats_next_to_best_of_r() -> None:
    # One group (SP-1: original, semantic, context), three repeats:
    #   repeat 0: all right; repeat 1: original and semantic right, context wrong; repeat 2: original wrong.
    right = {
        "SP-1": (True, True, False),
        "SP-1_SR": (True, True, True),
        "SP-1_CR": (True, False, True),
    }
    scorer = BrainTeaserScorer(mode="mcq", max_turns=1)
    for item in PUZZLES:
        for repeat, correct in enumerate(right[item.id]):
            scorer.add(ScoredEpisode(item.id, repeat, _outcome(item, correct), {}))
    headline = scorer.score().headline
    # best-of-3: every member solved in some repeat
    assert headline["group_ori_sem_acc_best_of_3"] == headline["group_ori_sem_con_acc_best_of_3"] == 100.0
    # mean-of-3: ori&sem solved in repeats 0 and 1 (2/3); all three only in repeat 0 (1/3)
    assert headline["group_ori_sem_acc_mean_of_3"] == pytest.approx(200 / 3)
    assert headline["group_ori_sem_con_acc_mean_of_3"] == pytest.approx(100 / 3)
    assert headline["original_acc_mean_of_3"] == pytest.approx(200 / 3)


def test_the_random_row_is_one_command(tmp_path: Path) -> None:
    result = run("brainteaser", player="random", repeats=3, out=tmp_path, progress=False)
    summary = json.loads((result.run_dir / "summary.json").read_text(encoding="utf-8"))
    row = next(r for r in summary["breakdowns"]["by_kind"] if r["kind"] == "all")
    for name in ("group_ori_sem_acc", "group_ori_sem_con_acc"):
        assert 0.0 <= row[f"{name}_mean_of_3"] <= row[f"{name}_best_of_3"] <= 100.0
