"""Dataset statistics over files in the official formats (generated, ``tests/official_data.py``) and small KBs."""

from __future__ import annotations

import gc
import re
import weakref
from pathlib import Path
from typing import Any

import numpy as np

from lateralgym.envs._loaders import iter_items, load_items
from lateralgym.envs._stats import DatasetStats, dataset_stats
from lateralgym.envs.benchmarks.creativity._schema import Affordance, Entity, Part


def test_brainteaser_groups_and_variants(data: Path) -> None:
    path = data / "brainteaser" / "sentence_puzzle.npy"
    stats = dataset_stats(load_items(path), path)
    assert (
        stats.kind,
        stats.items,
        stats.count("groups", "groups"),
        stats.count("groups", "complete groups"),
    ) == ("brainteaser", 12, 4, 4)
    assert stats.section("kind/variant") == {
        "sentence/original": 4,
        "sentence/semantic": 4,
        "sentence/context": 4,
        "word/original": 0,
        "word/semantic": 0,
        "word/context": 0,
    }
    assert stats.path == str(path)
    assert stats.section("band") == {} and stats.section("scene") == {}


def test_sentence_and_word_together(data: Path) -> None:
    items = [
        *load_items(data / "brainteaser" / "sentence_puzzle.npy"),
        *load_items(data / "brainteaser" / "word_puzzle.npy"),
    ]
    stats = dataset_stats(items)
    assert (stats.items, stats.count("groups", "groups"), stats.count("groups", "complete groups")) == (21, 7, 7)
    assert stats.section("kind/variant")["word/context"] == 3


def test_shuffled_test_split_groups_by_prefix(data: Path) -> None:
    stats = dataset_stats(load_items(data / "brainteaser" / "SP_test.npy"))
    assert (stats.items, stats.count("groups", "groups"), stats.count("groups", "complete groups")) == (6, 6, 0)
    assert stats.section("kind/variant")["sentence/semantic"] == 3
    assert stats.section("kind/variant")["sentence/context"] == 2
    assert stats.section("kind/variant")["sentence/original"] == 1


def test_shuffled_full_groups_stay_complete(data: Path, tmp_path: Path) -> None:
    records = np.load(data / "brainteaser" / "word_puzzle.npy", allow_pickle=True)[[8, 0, 4, 2, 6, 1, 5, 3, 7]]
    np.save(tmp_path / "shuffled.npy", records, allow_pickle=True)
    stats = dataset_stats(load_items(tmp_path / "shuffled.npy"))
    assert (stats.count("groups", "groups"), stats.count("groups", "complete groups")) == (3, 3)


def test_splat_bands(data: Path) -> None:
    stats = dataset_stats(load_items(data / "splat" / "puzzles.xlsx"))
    assert (stats.kind, stats.items) == ("situation", 9)
    assert stats.section("band") == {"easy": 3, "medium": 3, "hard": 3, "none": 0}
    assert stats.section("difficulty level") == {"1": 1, "2": 2, "4": 1, "5": 1, "6": 1, "7": 1, "8": 2}
    assert stats.count("clues", "puzzles with clues") == 0


def test_lateval_has_no_band(data: Path) -> None:
    stats = dataset_stats(load_items(data / "lateval" / "english.json"))
    assert stats.section("band") == {"easy": 0, "medium": 0, "hard": 0, "none": 3}
    assert stats.section("difficulty level") == {}
    assert stats.count("clues", "puzzles with clues") == 3


def test_creativity_factors(data: Path) -> None:
    stats = dataset_stats(load_items(data / "creativitybench" / "sample_tasks.json"))
    assert (stats.kind, stats.items) == ("creativity", 2)
    assert stats.section("distractor count") == {"2": 1, "3": 1}
    assert stats.section("distractor similarity") == {"similar": 1, "mixed": 0, "dissimilar": 1}
    assert stats.section("gold level") == {"normal": 1, "emergency": 1}
    # The paper's three bands: (3, 8) starts below 5 (small), (12, 40) at 10 or more (large).
    assert stats.section("cluster band") == {"small": 1, "medium": 0, "large": 1}
    assert stats.section("scene") == {"kitchen": 1, "garage": 1}


def test_kb_from_release_entities(data: Path) -> None:
    garage, kitchen = load_items(data / "creativitybench" / "sample_tasks.json")
    stats = dataset_stats([*garage.entities, *kitchen.entities])
    assert (stats.kind, stats.items) == ("kb", 7)
    assert stats.section("entities per scene") == {"kitchen": 3, "garage": 4}
    assert (
        stats.count("knowledge base", "parts"),
        stats.count("knowledge base", "affordances"),
        stats.section("affordance level"),
    ) == (16 + 7, 0, {})  # garage + kitchen parts


def _entity(entity_id: str, scene: str, levels: list[list[int]]) -> Entity:
    parts = [
        Part(
            name=f"part_{i}", affordances=tuple(Affordance(action=f"use {i}.{j}", level=lv) for j, lv in enumerate(ls))
        )
        for i, ls in enumerate(levels)
    ]
    return Entity(id=entity_id, name=entity_id, scene=scene, parts=tuple(parts))  # type: ignore[arg-type]


def test_kb_affordance_levels_and_scene_order() -> None:
    kb = [
        _entity("garden/rake", "garden", [[0, 2], [5]]),
        _entity("kitchen/pan", "kitchen", [[0], [0, 1]]),
        _entity("kitchen/ladle", "kitchen", [[3]]),
    ]
    stats = dataset_stats(kb)
    assert stats.section("entities per scene") == {"kitchen": 2, "garden": 1}  # scene order of SCENES, not of the file
    assert (stats.count("knowledge base", "parts"), stats.count("knowledge base", "affordances")) == (5, 7)
    assert stats.section("affordance level") == {"0": 3, "1": 1, "2": 1, "3": 1, "5": 1}


def test_mixed_and_empty(data: Path) -> None:
    mixed = dataset_stats(
        [*load_items(data / "lateval" / "english.json"), *load_items(data / "brainteaser" / "SP_test.npy")]
    )
    assert (mixed.kind, mixed.items, mixed.count("groups", "groups")) == ("mixed", 9, 6)
    assert mixed.section("band")["none"] == 3
    empty = dataset_stats([])
    assert (
        empty.kind,
        empty.items,
        empty.count("groups", "groups"),
        empty.section("kind/variant"),
    ) == ("empty", 0, 0, {})
    assert empty.rows() == [("dataset", "items", 0)]


def test_render_is_a_plain_table(data: Path) -> None:
    path = data / "splat" / "puzzles.xlsx"
    text = dataset_stats(load_items(path), path).render()
    lines = text.splitlines()
    assert lines[0] == f"Dataset stats: {path}"
    assert lines[1] == "kind: situation"
    assert re.match(r"^section\s+key\s+count$", lines[3])
    assert set(lines[4]) <= {"-", " "}
    assert re.search(r"^band\s+easy\s+3$", text, re.MULTILINE)
    assert re.search(r"^band\s+none\s+0$", text, re.MULTILINE)
    assert re.search(r"^dataset\s+items\s+9$", text, re.MULTILINE)
    assert "\x1b" not in text  # no terminal colour codes
    widths = {len(line) for line in lines[3:]}
    assert len(widths) == 1  # every row padded to the same width


def test_render_brainteaser_rows(data: Path) -> None:
    text = dataset_stats(load_items(data / "brainteaser" / "sentence_puzzle.npy")).render()
    assert text.startswith("Dataset stats\nkind: brainteaser\n")
    assert re.search(r"^groups\s+complete groups\s+4$", text, re.MULTILINE)
    assert re.search(r"^kind/variant\s+sentence/context\s+4$", text, re.MULTILINE)


def test_stats_round_trip_as_json(data: Path) -> None:
    stats = dataset_stats(load_items(data / "creativitybench" / "sample_tasks.json"))
    assert DatasetStats.model_validate_json(stats.model_dump_json()) == stats


def test_real_sample_stats(shared_data: Path) -> None:
    """Extra check on the real release samples in ../shared/data (skipped without them)."""
    sentence = dataset_stats(load_items(shared_data / "brainteaser" / "sentence_puzzle.npy"))
    assert (
        sentence.items,
        sentence.count("groups", "groups"),
        sentence.count("groups", "complete groups"),
    ) == (12, 4, 4)
    splat = dataset_stats(load_items(shared_data / "splat" / "puzzles.xlsx"))
    assert splat.section("difficulty level") == {"2": 2, "3": 1, "5": 2, "6": 1, "7": 3}
    creativity = dataset_stats(load_items(shared_data / "creativitybench" / "sample_tasks.json"))
    assert (creativity.section("distractor count"), creativity.section("scene")) == ({"4": 1}, {"dining_room": 1})
    (task,) = load_items(shared_data / "creativitybench" / "sample_tasks.json")
    assert dataset_stats(list(task.entities)).count("knowledge base", "parts") == 31


def test_stats_flag_release_defects(tmp_path: Path) -> None:
    """Two kinds of broken situation puzzle that the SPLAT release holds (rows 172 and 565)."""
    from official_data import SPLAT_ROWS, write_splat

    from lateralgym.envs import dataset_stats, load_items

    story = "A man walks into a bar and asks for a glass of water."
    rows = [
        *SPLAT_ROWS,
        ("Copied", story, story, "2/10 EASY"),
        ("Inside", "He had hiccups. " + story, "He had hiccups.", "3/10 EASY"),
    ]
    path = write_splat(tmp_path / "puzzles.xlsx", rows)
    stats = dataset_stats(load_items(path), path=path)
    assert len(stats.defects) == 2
    assert "is the story itself" in stats.defects[0] and "inside the story" in stats.defects[1]
    assert "2 release defect(s) found" in stats.render()
    clean = dataset_stats(load_items(write_splat(tmp_path / "clean.xlsx")))
    assert clean.defects == []


def _distinct_verdict_tasks(path: Path, count: int) -> Path:
    """``count`` copies of the sample tasks, each with verdicts of its own (as real data has)."""
    from lateralgym.envs import load_sample_items, write_jsonl

    tasks = load_sample_items("creativity")

    def copy(i: int) -> Any:
        task = tasks[i % len(tasks)]
        judged = tuple(
            j.model_copy(
                update={"parts": tuple(p.model_copy(update={"gold_change_reason": f"task {i}"}) for p in j.parts)}
            )
            for j in task.judge_output
        )
        return task.model_copy(update={"id": f"{task.id}-{i}", "judge_output": judged})

    write_jsonl([copy(i) for i in range(count)], path)
    return path


def test_stats_of_a_stream_are_those_of_the_loaded_file_and_keep_no_task(tmp_path: Path) -> None:
    path = _distinct_verdict_tasks(tmp_path / "tasks.jsonl", 300)
    streamed = dataset_stats(iter_items(path), path=path)
    assert streamed == dataset_stats(load_items(path), path=path)
    assert streamed.items == 300 and streamed.kind == "creativity"
    assert sum(streamed.section("scene").values()) == 300
    # read one at a time: the tasks already read are gone while the stream goes on
    stream = iter_items(path)
    read = [weakref.ref(next(stream)) for _ in range(200)]
    gc.collect()
    assert sum(ref() is not None for ref in read) <= 1
    stream.close()


def test_copies_of_list_items_stop_being_kept_when_they_prove_distinct() -> None:
    from lateralgym.envs._jsonl import _Copies

    distinct, repeated = _Copies(), _Copies()
    for n in range(_Copies.TRIAL):
        for copies, entry in (
            (distinct, {"action": f"use {n}", "level": 0}),
            (repeated, {"action": f"use {n % 7}", "level": 0}),
        ):
            key, found = copies.find(entry)
            if found is None:
                copies.add(key, Affordance.model_validate(entry))
    assert distinct.off and not distinct.known
    assert not repeated.off and len(repeated.known) == 7
    assert distinct.find({"action": "use 1", "level": 0}) == (b"", None)  # validated as any item, kept by no key
