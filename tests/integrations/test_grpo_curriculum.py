"""GRPO's curriculum without a model: the sampler keeps each prompt's group whole and draws each batch
after the rewards before it, and the reward function reports each prompt's mean reward and level."""

from __future__ import annotations

import json
from collections import Counter

import pytest

import lateralgym.cli
from lateralgym.envs import Curriculum, curriculum_for, get_benchmark, split_items
from lateralgym.integrations import ChatEnv, GRPOSettings
from lateralgym.integrations.grpo._curriculum import CurriculumSampler, observed_reward, row_items
from lateralgym.integrations.grpo._text import reward_funcs, training_rows


def test_the_sampler_keeps_groups_whole_and_draws_each_batch_after_the_last_rewards() -> None:
    curriculum = Curriculum(["easy"] * 3 + ["hard"] * 3, "adaptive", seed=0)
    rows = [5, 4, 3, 2, 1, 0]  # item n is row 5 - n
    sampler = CurriculumSampler(curriculum, rows, prompts=2, generations=4, reuse=2, length=12)
    stream = iter(sampler)
    first = [next(stream) for _ in range(16)]  # one generation batch: 2 prompts x 4 completions, read twice
    assert first[:8] == first[8:] and first[:4] == [first[0]] * 4 and first[4:8] == [first[4]] * 4
    assert [5 - d.index for d in curriculum.draws] == [first[0], first[4]]
    for _ in range(30):  # "easy" always solved: the draws turn to "hard" (its average stays at 0.5)
        for index in curriculum.members["easy"]:
            curriculum.update(index, 1.0)
    later = list(stream)
    assert len(first) + len(later) == len(sampler) == 6 * 16  # 6 batches of 2 prompts x 4, read twice
    drawn = Counter(curriculum.item_levels[5 - row] for row in later[::4])
    assert drawn["hard"] > drawn["easy"]


def test_the_reward_reports_each_prompts_mean_reward_and_counts_its_level() -> None:
    chat = ChatEnv("creativity-static")
    items = split_items(list(chat.items), "train")[:6]
    chat = ChatEnv("creativity-static", items=items)
    rows = training_rows(chat)
    positions = row_items(rows, items)
    curriculum = curriculum_for(get_benchmark("creativity"), items, "uniform")
    levels: Counter[str] = Counter()
    row_item = {str(row["info"]): p for row, p in zip(rows, positions, strict=True)}
    (plain,) = reward_funcs(chat, shaping=0.0)
    reward = observed_reward(plain, curriculum, row_item, levels)
    assert reward.__name__ == plain.__name__  # TRL logs a reward function by its name
    infos = [rows[0]["info"]] * 3 + [rows[1]["info"]] * 3
    wrong = [[{"role": "assistant", "content": "I would use nothing at all"}]] * 6
    assert reward(None, wrong, info=infos) == plain(None, wrong, info=infos) == [0.0] * 6
    assert [(d.index, d.success) for d in curriculum.draws] == [(positions[0], 0.0), (positions[1], 0.0)]
    assert sum(levels.values()) == 6 and set(levels) <= set(curriculum.levels)
    assert json.loads(rows[0]["info"])["item_id"] == items[positions[0]].id


def test_the_flag_reaches_the_settings_and_a_bad_one_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert GRPOSettings().curriculum == "uniform" and GRPOSettings(curriculum="adaptive").curriculum == "adaptive"
    with pytest.raises(SystemExit):
        lateralgym.cli.main(["train", "grpo", "--config", "splat", "--model", "x", "--curriculum", "hardest"])
    assert "invalid choice: 'hardest'" in capsys.readouterr().err
