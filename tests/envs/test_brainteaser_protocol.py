"""BrainTeaser's paper protocol: few-shot from the official demonstrations, option texts graded
exactly, and ``--limit`` taking whole puzzle groups."""

from __future__ import annotations

from pathlib import Path

import pytest
from official_data import DEMONSTRATION_QUESTIONS, demonstration_records, write_brainteaser_demonstrations

from lateralgym.agents._prompts import conversation_start, prompt_plan
from lateralgym.envs import Commit, ConfigError, EpisodeConfig, LateralEnv, load_sample_items
from lateralgym.envs.benchmarks.brainteaser import BRAINTEASER_EXAMPLES, demonstration_messages
from lateralgym.envs.benchmarks.brainteaser._loaders import load_brainteaser, load_brainteaser_demonstrations
from lateralgym.envs.benchmarks.brainteaser._schema import MCQPuzzle
from lateralgym.episodes import plan_episodes

# -- the official demonstration file ------------------------------------------------------------


@pytest.fixture
def demos(tmp_path: Path) -> Path:
    return write_brainteaser_demonstrations(tmp_path / "prompting")


def test_the_demonstration_file_is_read_with_its_capitalised_keys(demos: Path) -> None:
    items = load_brainteaser_demonstrations(demos)
    records = demonstration_records()
    assert [item.question for item in items] == list(DEMONSTRATION_QUESTIONS)
    assert [item.id for item in items] == [f"demonstration-{n}" for n in range(8)]
    for item, record in zip(items, records, strict=True):
        assert item.choices == tuple(record["choice_list"])
        assert item.choices[item.label] == record["Answer"]
    assert items[-1].choices[items[-1].label] == "None of above."


def test_a_demonstration_file_is_not_a_puzzle_file(demos: Path) -> None:
    from lateralgym.envs import DatasetError

    with pytest.raises(DatasetError, match="few-shot demonstration file.*demos="):
        load_brainteaser(demos)


@pytest.mark.parametrize("shots", [2, 4, 6, 8])
def test_n_demonstrations_are_half_sentence_half_word_puzzles_as_in_the_paper(demos: Path, shots: int) -> None:
    messages = demonstration_messages(str(demos), shots)
    assert [m["role"] for m in messages] == ["user", "assistant"] * shots
    half = shots // 2
    expected = [*range(half), *range(4, 4 + half)]  # the notebooks' examples[:n//2] + examples[4:4+n//2]
    records = demonstration_records()
    for k, index in enumerate(expected):
        shown, answered = messages[2 * k]["content"], messages[2 * k + 1]["content"]
        assert shown.startswith(f"QUESTION: {DEMONSTRATION_QUESTIONS[index]}\nCHOICES:\nA. ")
        assert answered == f"Answer: {'ABCD'[int(records[index]['label'])]}"


@pytest.mark.parametrize("shots", [3, 10])
def test_an_odd_or_too_large_count_of_demonstrations_is_refused(demos: Path, shots: int) -> None:
    with pytest.raises(ConfigError, match=f"few_shot={shots}"):
        demonstration_messages(str(demos), shots)


def test_the_prompt_carries_the_chosen_demonstrations_before_the_puzzle(demos: Path) -> None:
    info = {"benchmark": "brainteaser", "mode": "mcq"}
    plan = prompt_plan(info, few_shot=True, shots=4, demonstrations=str(demos))
    messages = conversation_start(plan, "QUESTION: the puzzle")
    assert [m["role"] for m in messages] == ["system", *["user", "assistant"] * 4, "user"]
    assert DEMONSTRATION_QUESTIONS[4] in messages[5]["content"]
    assert not any(example["question"] in str(messages) for example in BRAINTEASER_EXAMPLES)
    every = conversation_start(prompt_plan(info, few_shot=True, demonstrations=str(demos)), "Q")
    assert len(every) == 2 + 2 * 8  # few_shot=true with a file: all of it


def test_shipped_worked_examples_take_a_count_up_to_their_number() -> None:
    info = {"benchmark": "brainteaser", "mode": "mcq"}
    two = conversation_start(prompt_plan(info, few_shot=True, shots=2), "Q")
    assert len(two) == 2 + 2 * 2 and BRAINTEASER_EXAMPLES[1]["question"] in two[3]["content"]
    with pytest.raises(ConfigError, match="demos=PATH"):
        conversation_start(prompt_plan(info, few_shot=True, shots=4), "Q")
    zero = conversation_start(prompt_plan(info, few_shot=False, shots=4, demonstrations="unused"), "Q")
    assert [m["role"] for m in zero] == ["system", "user"]


# -- an option's text is that option ------------------------------------------------------------


def _puzzle(item_id: str, choices: tuple[str, ...], label: int) -> MCQPuzzle:
    group = item_id.split("_")[0]
    return MCQPuzzle(
        id=item_id, group_id=group, kind="word", variant="context", question="Who am I?", choices=choices, label=label
    )


WP_4_CR = _puzzle("WP-4_CR", ("The letter N.", "The Letter N.", "The Letter E.", "None of above."), 1)
WP_104_CR = _puzzle("WP-104_CR", ("The letter 'o'.", "The letter 't'.", "The letter 'o'.", "None of above."), 2)


@pytest.mark.parametrize(
    ("item", "action", "correct"),
    [
        (WP_4_CR, "commit: The Letter N.", True),
        (WP_4_CR, "commit: The letter N.", False),
        (WP_4_CR, "commit: B", True),
        (WP_104_CR, "commit: The letter 'o'.", True),
        (WP_104_CR, "commit: A", True),  # reads exactly as the intended option C
        (WP_104_CR, "commit: C", True),
        (WP_104_CR, "commit: The letter 't'.", False),
        (WP_104_CR, Commit(answer="none of the above"), False),
    ],
)
def test_the_env_grades_an_options_text_as_that_option(item: MCQPuzzle, action: object, correct: bool) -> None:
    env = LateralEnv(EpisodeConfig.named("brainteaser"), items=[item])
    env.reset(seed=0)
    _, _, terminated, _, info = env.step(action)
    assert terminated and info["outcome"]["correct"] is correct


def test_an_ambiguous_text_is_an_invalid_answer_not_a_guess() -> None:
    env = LateralEnv(EpisodeConfig.named("brainteaser"), items=[WP_4_CR])
    env.reset(seed=0)
    obs, _, _, _, _ = env.step("commit: the letter n")
    assert "Choose one of the options A-D" in obs["text"]


def test_riddlesense_allows_e_and_brainteaser_does_not() -> None:
    riddle = load_sample_items("riddlesense")[0]
    assert len(riddle.choices) == 5
    env = LateralEnv(EpisodeConfig.named("riddlesense"), items=[riddle])
    env.reset(seed=0)
    _, _, _, _, info = env.step("commit: E")
    assert info["outcome"]["choice"] == 4
    teaser = LateralEnv(EpisodeConfig.named("brainteaser"), items=load_sample_items("brainteaser")[:1])
    teaser.reset(seed=0)
    obs, _, _, _, _ = teaser.step("commit: E")
    assert "A-D" in obs["text"]


# -- --limit takes whole groups -----------------------------------------------------------------


def test_limit_5_plays_only_complete_groups(official_data: Path) -> None:
    items = load_brainteaser(official_data / "brainteaser" / "sentence_puzzle.npy")
    planned = [spec.item_id for spec in plan_episodes(items, seed=0, limit=5)]
    by_id = {item.id: item for item in items}
    groups = {by_id[i].group_id for i in planned}
    assert groups == {item.group_id for item in items[:5]}
    assert sorted(planned) == sorted(item.id for item in items if item.group_id in groups)
    assert len(planned) > 5 and len(planned) % 3 == 0  # every group here has its three variants
    assert planned == [item.id for item in items if item.id in planned]  # dataset order


def test_limit_on_a_shuffled_file_gathers_each_touched_group() -> None:
    items = load_sample_items("brainteaser")[:9]
    shuffled = [items[0], items[3], items[6], items[1], items[4], items[7], items[2], items[5], items[8]]
    planned = [spec.item_id for spec in plan_episodes(shuffled, seed=0, limit=1, repeats=2)]
    group = items[0].group_id
    assert {i.split("#")[0] for i in planned} == {item.id for item in items if item.group_id == group}
    assert len(planned) == 6


def test_other_benchmarks_keep_the_plain_cut() -> None:
    riddles = load_sample_items("riddlesense")
    assert [s.item_id for s in plan_episodes(riddles, seed=0, limit=5)] == [r.id for r in riddles[:5]]
    assert plan_episodes(load_sample_items("brainteaser"), seed=0, limit=0) == []
