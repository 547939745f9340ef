"""AR-Bench situation puzzles (``arbench-sp``), on files written for these tests in the release's layout
(``data/sp/{train,test}.json``: a story tree two levels deep, two children per node, six key questions;
the test file using one ``index`` twice)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _arbench_release import story
from llm_server import ScriptedLLMServer

from lateralgym.cli import main
from lateralgym.envs import DatasetError, EpisodeConfig, LateralEnv, load_items, split_items, write_jsonl
from lateralgym.envs.benchmarks.arbench import (
    ARBenchOutcome,
    ARBenchPuzzle,
    key_question_hits,
    load_arbench,
    word_f1,
)
from lateralgym.envs.testing import check_scene
from lateralgym.episodes import run

BAKER = story(
    1,
    "A baker throws away a perfect cake every night at midnight. Why?",
    "The baker's late wife baked her last cake at midnight, so he bakes one in her memory and cannot bear to eat it.",
    [
        "A baker bakes a cake in memory of his wife.",
        "His wife died years ago.",
        "She loved baking.",
        "She baked at midnight.",
        "He cannot eat the cake.",
        "Eating it feels like losing her again.",
        "He throws it away at dawn.",
    ],
    [
        "Did someone close to the baker die?",
        "Did his wife love baking?",
        "Did his wife bake at midnight?",
        "Is the cake a memorial?",
        "Is eating the cake too painful for him?",
        "Does he throw it away every night?",
    ],
    someone_dies=True,
)
DIVER = story(
    98,
    "A diver surfaces, smiles, and then never dives again. Why?",
    "The diver found the ring his grandfather lost at sea, so his search was over forever.",
    [
        "A diver found a lost ring.",
        "His grandfather lost a ring at sea.",
        "The ring was a family heirloom.",
        "The diver searched for years.",
        "The search was his only reason to dive.",
        "He was afraid of water.",
        "Finding it ended the search.",
    ],
    [
        "Was the diver searching for something?",
        "Did a relative lose something at sea?",
        "Was the lost thing a family heirloom?",
        "Had he searched for years?",
        "Was finding it his only reason to dive?",
        "Was he afraid of water?",
    ],
)


@pytest.fixture
def release(tmp_path: Path) -> Path:
    folder = tmp_path / "sp"
    folder.mkdir()
    haunted = json.loads(json.dumps(DIVER)) | {"supernatural": True}
    (folder / "test.json").write_text(json.dumps([BAKER, DIVER, haunted]), encoding="utf-8")
    (folder / "train.json").write_text(json.dumps([BAKER | {"index": 0}]), encoding="utf-8")
    return folder


def test_the_release_is_read_with_the_trees_key_questions_in_order(release: Path) -> None:
    puzzles = load_arbench(release / "test.json")
    first = puzzles[0]
    assert [p.id for p in puzzles] == ["arbench-sp-test-0", "arbench-sp-test-1", "arbench-sp-test-2"]
    assert first.story == BAKER["surface"] and first.answer == BAKER["bottom"] and first.split == "test"
    assert first.key_questions[0] == "Did someone close to the baker die?"  # the tree's order, not the list's
    assert first.clues == tuple(
        n
        for n in (
            "His wife died years ago.",
            "She loved baking.",
            "She baked at midnight.",
            "He cannot eat the cake.",
            "Eating it feels like losing her again.",
            "He throws it away at dawn.",
        )
    )
    assert [p.supernatural for p in puzzles] == [False, False, True]
    assert load_arbench(release / "train.json")[0].split == "train"


def test_data_stats_counts_splits_flags_and_the_repeated_index(
    release: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["data", "stats", str(release / "test.json")]) == 0
    out = capsys.readouterr().out
    assert "kind: arbench-sp" in out and "split          test       3" in out
    assert "index 98 is used by 2 puzzles (test)" in out


def test_the_oracle_scores_100_with_the_key_question_metric(release: Path, tmp_path: Path) -> None:
    code = main(["run", "arbench-sp", "--data", str(release / "test.json"), "--player", "oracle",
                 "--out", str(tmp_path / "runs"), "--no-progress"])  # fmt: skip
    assert code == 0
    (run_dir,) = (tmp_path / "runs").iterdir()
    headline = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))["headline"]
    assert headline["acc"] == 100.0 and headline["key_question_rate"] == 100.0
    assert headline["rnd"] == 7.0  # six key questions, then the explanation
    assert headline["answer_word_f1"] == 100.0


def test_key_questions_by_the_offline_rule() -> None:
    puzzle = load_items_from(BAKER)
    assert key_question_hits(puzzle, "Did his wife love baking?") == (1,)
    assert key_question_hits(puzzle, "Was the cake made in memory of someone?") == ()
    assert key_question_hits(puzzle, "did HIS wife bake at MIDNIGHT") == (2,)


def load_items_from(record: dict[str, Any]) -> ARBenchPuzzle:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "test.json"
        path.write_text(json.dumps([record]), encoding="utf-8")
        return load_arbench(path)[0]


def test_a_heuristic_player_hits_some_key_questions_and_the_share_is_per_puzzle(release: Path) -> None:
    items = load_arbench(release / "test.json")
    env = LateralEnv(EpisodeConfig.named("arbench-sp"), items=items)
    env.reset(options={"item_id": items[0].id})
    env.step("ask: Did his wife love baking?")
    env.step("ask: Was it raining?")
    env.step("commit: His wife loved baking and he throws the cake away.")
    outcome = env.outcome()
    assert isinstance(outcome, ARBenchOutcome)
    assert (outcome.key_questions, outcome.key_questions_asked) == (6, [1])
    said = "His wife loved baking and he throws the cake away."
    assert outcome.answer_word_f1 == pytest.approx(word_f1(said, items[0].answer))


def test_word_f1_as_ar_bench_counts_it() -> None:
    assert word_f1("the cat sat", "the cat sat") == 1.0
    assert word_f1("The cat", "the cat") == pytest.approx(2 * 0.5 * 0.5 / 1.0)  # case kept
    assert word_f1("", "a") == 0.0


def test_the_release_split_is_the_train_test_split(release: Path) -> None:
    items = [*load_arbench(release / "train.json"), *load_arbench(release / "test.json")]
    assert [p.id for p in split_items(items, "train")] == ["arbench-sp-train-0"]
    assert len(split_items(items, "test")) == 3


def test_both_release_files_in_one_jsonl_keep_their_split_for_training(release: Path, tmp_path: Path) -> None:
    # `train grpo --data` takes one file: the two release files written as our JSONL keep each puzzle's split
    both = [*load_items(release / "train.json", benchmark="arbench-sp"), *load_items(release / "test.json")]
    write_jsonl(both, tmp_path / "arbench-sp.jsonl")
    back = list(load_items(tmp_path / "arbench-sp.jsonl", benchmark="arbench-sp"))
    assert back == both
    assert [p.id for p in split_items(back, "train")] == ["arbench-sp-train-0"]
    assert len(split_items(back, "test")) == 3


def test_conformance_and_no_leak(release: Path) -> None:
    items = load_items(release / "test.json", benchmark="arbench-sp")
    check_scene(lambda: LateralEnv(EpisodeConfig.named("arbench-sp"), items=list(items)))


def test_an_llm_judge_lists_the_key_questions_asked(release: Path, tmp_path: Path) -> None:
    def respond(body: dict[str, Any]) -> str:
        system = body["messages"][0]["content"]
        if "key questions" in system and "Hit:" in system:
            return "Hit: 2, 9" if "baking" in body["messages"][-1]["content"] else "Hit: none"
        return "yes"

    server = ScriptedLLMServer(responder=respond).start()
    try:
        items = load_arbench(release / "test.json")[:1]
        result = run(
            EpisodeConfig.named("arbench-sp").model_copy(update={"max_turns": 2}),
            items=items,
            player="oracle",
            judge="openai/judge",
            base_url=server.base_url,
            out=tmp_path,
            progress=False,
            cache_dir=tmp_path / "cache",
        )
    finally:
        server.stop()
    # the oracle asks key question 1 ("...die?": Hit none) then 2 ("...love baking?": Hit 2; 9 is no key question)
    assert result.metrics.headline["key_question_rate"] == pytest.approx(100 / 6)


def test_a_record_without_its_tree_is_an_error_naming_it(tmp_path: Path) -> None:
    broken = {k: v for k, v in BAKER.items() if k != "story_tree"} | {"story_tree": {"value": "x", "children": []}}
    path = tmp_path / "test.json"
    path.write_text(json.dumps([broken]), encoding="utf-8")
    with pytest.raises(DatasetError, match="index 0.*no node below its root"):
        load_arbench(path)
