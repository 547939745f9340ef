"""Items are checked and indexed once (an ``ItemTable``) and shared: a new env per episode or per
rollout does no work per item, whatever the dataset's size."""

from __future__ import annotations

import pickle
from pathlib import Path

import gymnasium
import pytest

from lateralgym.envs import (
    ConfigError,
    EpisodeConfig,
    ItemTable,
    LateralEnv,
    get_benchmark,
    item_table,
    load_sample_items,
    write_jsonl,
)
from lateralgym.envs._items import load_config_items


def test_an_env_built_on_another_envs_items_shares_their_table() -> None:
    config = EpisodeConfig.named("creativity-static")
    first = LateralEnv(config, items=load_sample_items("creativity"))
    second = LateralEnv(config, items=first.items)
    assert isinstance(first.items, ItemTable)
    assert second.items is first.items
    obs, info = second.reset(seed=3, options={"item_id": first.items[5].id})
    assert second.item_id == first.items[5].id and obs["text"]


def test_the_table_indexes_every_item_by_id_and_refuses_bad_items() -> None:
    benchmark = get_benchmark("creativity")
    tasks = load_sample_items("creativity")
    table = item_table(benchmark, tasks)
    assert table == tuple(tasks)
    assert all(table[table.positions[t.id]] is t for t in tasks)
    assert item_table(benchmark, table) is table  # a table of the same benchmark: no work
    with pytest.raises(ConfigError, match="repeated"):
        item_table(benchmark, [tasks[0], tasks[1], tasks[0]])
    with pytest.raises(ConfigError, match="needs CreativityTask items"):
        item_table(get_benchmark("creativity"), load_sample_items("brainteaser"))
    riddles = get_benchmark("riddlesense")
    with pytest.raises(ConfigError):
        item_table(riddles, table)  # another benchmark's table is checked again, and refused


def test_a_table_pickles_with_its_index() -> None:
    table = item_table(get_benchmark("creativity"), load_sample_items("creativity")[:20])
    again = pickle.loads(pickle.dumps(table))
    assert isinstance(again, ItemTable)
    assert again == table and again.positions == table.positions and again.benchmark == "creativity"


def test_a_dataset_file_is_loaded_as_one_table_that_gymnasium_make_uses(tmp_path: Path) -> None:
    path = write_jsonl(load_sample_items("creativity")[:30], tmp_path / "tasks.jsonl")
    config = EpisodeConfig.named("creativity-static").model_copy(update={"dataset": str(path)})
    table = load_config_items(config)
    assert isinstance(table, ItemTable) and len(table) == 30
    env = gymnasium.make("lateralgym/Creativity-Static-v1", items=table)
    assert env.unwrapped.items is table  # type: ignore[attr-defined]
    env.reset(seed=0)
