"""Loaders for the official releases, against the real sample files in ../shared/data, and their error paths."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import openpyxl
import pytest

from lateralgym.envs._errors import DatasetError
from lateralgym.envs._loaders import (
    GOLD_MARKER,
    detect_format,
    load_brainteaser,
    load_creativitybench,
    load_items,
    load_jsonl,
    load_lateval,
    load_splat,
    parse_parts,
    split_top_level,
)
from lateralgym.envs._loaders_official import parse_clues
from lateralgym.envs._schema import CreativityTask, Entity, MCQPuzzle, SituationPuzzle


def by_id(puzzles: list[MCQPuzzle]) -> dict[str, MCQPuzzle]:
    return {p.id: p for p in puzzles}


def raw_records(path: Path) -> list[dict[str, Any]]:
    return [dict(r) for r in np.load(path, allow_pickle=True)]


def save_records(path: Path, records: list[dict[str, Any]]) -> Path:
    array = np.empty(len(records), dtype=object)
    array[:] = records
    np.save(path, array, allow_pickle=True)
    return path


def assert_names(exc: pytest.ExceptionInfo[DatasetError], path: Path, record: str | None, field: str | None) -> None:
    message = str(exc.value)
    assert str(path) in message
    assert exc.value.path == str(path)
    if record is not None:
        assert exc.value.record == record
        assert f"record {record}" in message
    if field is not None:
        assert exc.value.field == field
        assert repr(field) in message


# ---------------------------------------------------------------- BrainTeaser


def test_emnlp_sentence_puzzles_load_with_groups_and_variants(data: Path) -> None:
    puzzles = load_brainteaser(data / "brainteaser" / "sentence_puzzle.npy")
    assert len(puzzles) == 12
    assert [p.id for p in puzzles[:3]] == ["SP-0", "SP-0_SR", "SP-0_CR"]
    assert {p.group_id for p in puzzles} == {"SP-0", "SP-1", "SP-63", "SP-88"}
    assert [p.variant for p in puzzles[:3]] == ["original", "semantic", "context"]
    assert {p.kind for p in puzzles} == {"sentence"}
    first = puzzles[0]
    assert first.label == 2
    assert first.choices[first.label] == "Each daughter shares the same brother."


def test_choice_list_label_is_truth_even_when_answer_disagrees(data: Path) -> None:
    path = data / "brainteaser" / "sentence_puzzle.npy"
    raw = {r["id"]: r for r in raw_records(path)}
    assert raw["SP-88_CR"]["answer"].strip() == "Every year."  # the release's answer field disagrees
    puzzle = by_id(load_brainteaser(path))["SP-88_CR"]
    assert puzzle.label == 3
    assert puzzle.choices[3] == "None of above."
    assert "Every year." not in puzzle.choices


def test_float_distractors_become_strings_and_whitespace_is_stripped(data: Path) -> None:
    puzzles = by_id(load_brainteaser(data / "brainteaser" / "sentence_puzzle.npy"))
    sp88 = puzzles["SP-88"]
    assert sp88.choices == ("2000.0", "This year.", "Last year.", "None of above.")
    assert sp88.choices[sp88.label] == "This year."
    assert sp88.question == "Name the most recent year in which New Year's came before Christmas."
    assert puzzles["SP-88_CR"].choices[:3] == ("2020.0", "2000.0", "1776.0")


def test_none_of_above_answers_in_sp63_group(data: Path) -> None:
    puzzles = by_id(load_brainteaser(data / "brainteaser" / "sentence_puzzle.npy"))
    for puzzle_id in ("SP-63", "SP-63_SR", "SP-63_CR"):
        puzzle = puzzles[puzzle_id]
        assert puzzle.label == 3
        assert puzzle.choices[puzzle.label] == "None of above."


def test_word_puzzles_keep_inner_newlines_and_explained_none_option(data: Path) -> None:
    puzzles = by_id(load_brainteaser(data / "brainteaser" / "word_puzzle.npy"))
    assert len(puzzles) == 9
    assert {p.kind for p in puzzles.values()} == {"word"}
    wp84 = puzzles["WP-84"]
    assert wp84.choices[wp84.label] == "None of above. No dogs left the yard."
    # Its semantic reconstruction uses the bare option: the loader does not invent text.
    assert puzzles["WP-84_SR"].choices[3] == "None of above."
    wp1 = puzzles["WP-1"]
    assert wp1.choices[wp1.label] == "2. 11 o'clock plus 2 hours = 1 o'clock\n9 o'clock plus 5 hours = 2 o'clock"
    assert puzzles["WP-1"].choices[2].endswith("as well.")  # trailing space stripped


def test_semeval_train_distractor_spelling(data: Path) -> None:
    path = data / "brainteaser" / "SP-train.npy"
    assert "distractor1" in raw_records(path)[0]
    puzzles = by_id(load_brainteaser(path))
    assert len(puzzles) == 6
    assert puzzles["SP-0"].label == 1  # SemEval shuffled the options differently from EMNLP
    assert puzzles["SP-0"].choices[1] == "Each daughter shares the same brother."
    assert puzzles["SP-1_CR"].choices[1] == "People are enjoying themselves in the park."


def test_semeval_test_split_takes_ids_and_labels_from_sibling_answer_file(data: Path) -> None:
    puzzles = load_brainteaser(data / "brainteaser" / "SP_test.npy")
    assert [(p.id, p.group_id, p.variant, p.label) for p in puzzles] == [
        ("SP-122_CR", "SP-122", "context", 0),
        ("SP-4_SR", "SP-4", "semantic", 2),
        ("SP-147_CR", "SP-147", "context", 2),
        ("SP-90_SR", "SP-90", "semantic", 1),
        ("SP-157_SR", "SP-157", "semantic", 3),
        ("SP-123", "SP-123", "original", 0),
    ]
    assert puzzles[1].choices[2].startswith("Romeo and Juliet are fish.")
    assert puzzles[0].choices[1] == "The lazy farmer is not a responsible father as he is lazy."
    assert "\n" in load_brainteaser(data / "brainteaser" / "SP_test.npy")[1].choices[1]  # inner newline kept


def test_explicit_answer_file(data: Path, tmp_path: Path) -> None:
    test_file = shutil.copy(data / "brainteaser" / "SP_test.npy", tmp_path / "my_test.npy")
    puzzles = load_brainteaser(test_file, answers=data / "brainteaser" / "SP_test_answer.npy")
    assert [p.id for p in puzzles][-1] == "SP-123"


def test_shuffled_file_groups_by_prefix(data: Path, tmp_path: Path) -> None:
    records = raw_records(data / "brainteaser" / "sentence_puzzle.npy")
    shuffled = [records[i] for i in (11, 0, 5, 7, 2, 9, 4, 1, 10, 3, 8, 6)]
    puzzles = load_brainteaser(save_records(tmp_path / "shuffled.npy", shuffled))
    groups: dict[str, set[str]] = {}
    for puzzle in puzzles:
        groups.setdefault(puzzle.group_id, set()).add(puzzle.variant)
    assert groups == {g: {"original", "semantic", "context"} for g in ("SP-0", "SP-1", "SP-63", "SP-88")}


def test_rebuilds_options_from_either_distractor_spelling(tmp_path: Path) -> None:
    base = {"question": " Q? \n", "answer": "Right. \n", "label": 1, "choice_order": [2, 0, 1, 3]}
    emnlp = {**base, "id": "SP-5", "distrator1": "Wrong.", "distrator2": 2000.0, "distrator(unsure)": "None of above."}
    semeval = {
        **base,
        "id": "SP-5_SR",
        "distractor1": "Wrong.",
        "distractor2": 2000.0,
        "distractor(unsure)": "None of above.",
    }
    for record in (emnlp, semeval):
        del record["label"]
    puzzles = load_brainteaser(save_records(tmp_path / "rebuilt.npy", [emnlp, semeval]))
    for puzzle in puzzles:
        assert puzzle.question == "Q?"
        assert puzzle.choices == ("2000.0", "Right.", "Wrong.", "None of above.")
        assert puzzle.label == 1


def test_choice_order_locates_the_answer_in_every_release_record(data: Path, tmp_path: Path) -> None:
    # choice_order[i] is the pool index shown at position i (0 = answer), so index(0) is the label;
    # the loader falls back on it for records that lost their label.
    for name in ("sentence_puzzle.npy", "word_puzzle.npy", "SP-train.npy"):
        records = raw_records(data / "brainteaser" / name)
        assert all(list(r["choice_order"]).index(0) == r["label"] for r in records)
        for record in records:
            del record["label"]
        relabelled = load_brainteaser(save_records(tmp_path / name, records))
        assert [p.label for p in relabelled] == [p.label for p in load_brainteaser(data / "brainteaser" / name)]


def test_bad_label_in_answer_file(data: Path, tmp_path: Path) -> None:
    answers = np.load(data / "brainteaser" / "SP_test_answer.npy")
    answers[2, 1] = "x"
    np.save(tmp_path / "bad_answer.npy", answers)
    with pytest.raises(DatasetError, match="bad label 'x'") as exc:
        load_brainteaser(data / "brainteaser" / "SP_test.npy", answers=tmp_path / "bad_answer.npy")
    assert_names(exc, tmp_path / "bad_answer.npy", "row 2", "label")


def test_test_split_without_answer_file_is_a_clear_error(data: Path, tmp_path: Path) -> None:
    lonely = shutil.copy(data / "brainteaser" / "SP_test.npy", tmp_path / "lonely_test.npy")
    with pytest.raises(DatasetError, match="lonely_test_answer.npy") as exc:
        load_brainteaser(lonely)
    assert_names(exc, Path(lonely), "index 0", "id")


def test_answer_file_with_wrong_row_count(data: Path, tmp_path: Path) -> None:
    answers = np.load(data / "brainteaser" / "SP_test_answer.npy")[:4]
    np.save(tmp_path / "short_answer.npy", answers)
    with pytest.raises(DatasetError, match="has 4 rows but the puzzle file has 6") as exc:
        load_brainteaser(data / "brainteaser" / "SP_test.npy", answers=tmp_path / "short_answer.npy")
    assert exc.value.path == str(tmp_path / "short_answer.npy")


def test_loading_the_answer_file_itself_says_what_to_do(data: Path) -> None:
    with pytest.raises(DatasetError, match="is an answer file"):
        load_brainteaser(data / "brainteaser" / "SP_test_answer.npy")


def test_truncated_npy(data: Path, tmp_path: Path) -> None:
    source = (data / "brainteaser" / "sentence_puzzle.npy").read_bytes()
    broken = tmp_path / "truncated.npy"
    broken.write_bytes(source[: len(source) // 2])
    with pytest.raises(DatasetError, match="truncated") as exc:
        load_brainteaser(broken)
    assert_names(exc, broken, None, None)


def test_garbage_and_non_array_npy(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.npy"
    garbage.write_bytes(b"this is not numpy at all")
    with pytest.raises(DatasetError, match="cannot read as a numpy file"):
        load_brainteaser(garbage)
    archive = tmp_path / "archive.npy"
    with archive.open("wb") as handle:
        np.savez(handle, a=np.arange(3))
    with pytest.raises(DatasetError, match="not a numpy array"):
        load_brainteaser(archive)
    with pytest.raises(DatasetError, match="no such file"):
        load_brainteaser(tmp_path / "missing.npy")


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"label": 7}, "label", "bad label 7"),
        ({"label": "two"}, "label", "bad label 'two'"),
        ({"id": "XP-3"}, "id", "bad id 'XP-3'"),
        ({"id": "SP-3_XR"}, "id", "bad id"),
        ({"question": "   "}, "question", "is empty"),
        ({"choice_list": ["a", None, "c", "d"]}, "choice_list[1]", "option is empty"),
    ],
)
def test_bad_brainteaser_records_name_record_and_field(
    tmp_path: Path, change: dict[str, Any], field: str, message: str
) -> None:
    good = {"id": "SP-3", "question": "Q?", "label": 0, "choice_list": ["a", "b", "c", "None of above."]}
    path = save_records(tmp_path / "bad.npy", [good, {**good, **change, "id": change.get("id", "SP-3_SR")}])
    with pytest.raises(DatasetError, match=message) as exc:
        load_brainteaser(path)
    record_id = change.get("id", "SP-3_SR")
    assert_names(exc, path, f"index 1 ({record_id})", field)


def test_missing_question_key(tmp_path: Path) -> None:
    path = save_records(tmp_path / "bad.npy", [{"id": "WP-2", "label": 0, "choice_list": ["a", "b"]}])
    with pytest.raises(DatasetError, match="missing key 'question'") as exc:
        load_brainteaser(path)
    assert_names(exc, path, "index 0 (WP-2)", "question")


# ---------------------------------------------------------------- SPLAT


def test_splat_puzzles(data: Path) -> None:
    puzzles = load_splat(data / "splat" / "puzzles.xlsx")
    assert len(puzzles) == 9
    assert [p.id for p in puzzles] == [f"splat-row-{n}" for n in range(2, 11)]
    first = puzzles[0]
    assert (first.title, first.difficulty, first.band) == ("Red high heels", 7, "hard")
    assert first.story == "A woman buys a new pair of red high heels. Hours later, she dies."
    bands = [p.band for p in puzzles]
    assert (bands.count("easy"), bands.count("medium"), bands.count("hard")) == (3, 3, 3)
    assert [p.difficulty for p in puzzles] == [7, 5, 6, 7, 2, 7, 5, 3, 2]
    match = next(p for p in puzzles if p.title == "A match")
    assert "What happened?\n\nA man is found dead" in match.story


def write_xlsx(path: Path, rows: list[list[Any]]) -> Path:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    for row in rows:
        sheet.append(row)
    workbook.save(path)
    return path


HEADER = ["title", "story", "answer", "level of difficulty", None]


def test_splat_repeated_titles_get_unique_row_ids_and_empty_rows_are_skipped(tmp_path: Path) -> None:
    path = write_xlsx(
        tmp_path / "p.xlsx",
        [
            HEADER,
            ["Bowling ball", "  A story.\nLine two.  \n", "Answer one.", "1/10 EASY"],
            [None, None, None, None],
            ["Bowling ball", "Another story.", "Answer two.", "9/10 HARD"],
            ["", " ", None, ""],
            ["", "Untitled story.", "Answer three.", 4],
        ],
    )
    puzzles = load_splat(path)
    assert [p.id for p in puzzles] == ["splat-row-2", "splat-row-4", "splat-row-6"]
    assert [p.title for p in puzzles] == ["Bowling ball", "Bowling ball", ""]
    assert puzzles[0].story == "A story.\nLine two."
    assert [(p.difficulty, p.band) for p in puzzles] == [(1, "easy"), (9, "hard"), (4, "medium")]


def test_splat_missing_column(tmp_path: Path) -> None:
    path = write_xlsx(tmp_path / "p.xlsx", [["title", "story", "answer"], ["T", "S", "A"]])
    with pytest.raises(DatasetError, match="missing column 'level of difficulty'") as exc:
        load_splat(path)
    assert_names(exc, path, "row 1 (header)", "level of difficulty")


@pytest.mark.parametrize(
    ("level", "message"),
    [("hard-ish", "cannot parse difficulty 'hard-ish'"), ("10/10 HARD", "outside 1..9"), (None, "cannot parse")],
)
def test_splat_bad_difficulty(tmp_path: Path, level: object, message: str) -> None:
    path = write_xlsx(tmp_path / "p.xlsx", [HEADER, ["T", "S", "A", "2/10 EASY"], ["T2", "S2", "A2", level]])
    with pytest.raises(DatasetError, match=message) as exc:
        load_splat(path)
    assert_names(exc, path, "row 3", "level of difficulty")


def test_splat_empty_answer_and_broken_workbook(tmp_path: Path) -> None:
    path = write_xlsx(tmp_path / "p.xlsx", [HEADER, ["T", "S", "", "2/10 EASY"]])
    with pytest.raises(DatasetError, match="is empty") as exc:
        load_splat(path)
    assert_names(exc, path, "row 2", "answer")
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(path.read_bytes()[:300])
    with pytest.raises(DatasetError, match="cannot read as an .xlsx workbook"):
        load_splat(broken)


# ---------------------------------------------------------------- LatEval


def test_lateval_puzzles_and_clues(data: Path) -> None:
    puzzles = load_lateval(data / "lateval" / "english.json")
    assert [p.id for p in puzzles] == ["lateval-0", "lateval-1", "lateval-2"]
    assert puzzles[0].story == "He was killed by breakfast. Why?"
    assert puzzles[0].clues == (
        "Man was camping in the mountains",
        "He used pepper on his breakfast",
        "The sneeze caused by pepper led to an avalanche",
        "The avalanche resulted in his death",
    )
    assert len(puzzles[1].clues) == 5
    assert puzzles[2].clues[-1] == "The murderer dropped the gun in the back seat after shooting the man."
    for puzzle in puzzles:
        assert puzzle.difficulty is None and puzzle.band is None
        assert all("```" not in clue and not clue[0].isdigit() for clue in puzzle.clues)


def test_parse_clues_variants() -> None:
    assert parse_clues("```text\n1. a\n2) b\n\n10.c```") == ("a", "b", "c")
    assert parse_clues("") == ()


def test_lateval_bad_record_and_bad_json(tmp_path: Path) -> None:
    path = tmp_path / "english.json"
    path.write_text(
        json.dumps(
            [
                {"id": 0, "question": "Q", "answer": "A", "clue": "```1.x```"},
                {"id": 1, "question": "Q2", "clue": "```1.y```"},
            ]
        )
    )
    with pytest.raises(DatasetError, match="missing key 'answer'") as exc:
        load_lateval(path)
    assert_names(exc, path, "index 1 (id 1)", "answer")
    path.write_text('[{"id": 0,\n "question": "Q" "answer": "A"}]')
    with pytest.raises(DatasetError, match="not valid JSON") as exc:
        load_lateval(path)
    assert_names(exc, path, "line 2", None)


# ---------------------------------------------------------------- CreativityBench


@pytest.fixture
def task_record(data: Path) -> dict[str, Any]:
    records: list[dict[str, Any]] = json.loads((data / "creativitybench" / "sample_tasks.json").read_text())
    return records[0]


def test_creativitybench_task(data: Path, task_record: dict[str, Any]) -> None:
    (task,) = load_creativitybench(data / "creativitybench" / "sample_tasks.json")
    assert task.id == task_record["task_id"]
    assert task.scene == "dining_room"
    assert task.environment == task_record["environment"].strip()
    assert task.task.startswith("I’m in my dining room after setting the table")
    assert [e.id for e in task.entities] == [
        "dining_room/dimmable_chandelier_with_crystal_droplets_10",
        "dining_room/taper_candle_holder_with_drip_catching_bobeche_8",
        "dining_room/bar_cart_on_casters_with_bottle_rack_2",
        "dining_room/compact_electric_fondue_pot_with_temperature_dial_9",
        "dining_room/cloth_lined_wicker_bread_basket_1",
    ]
    assert [len(e.parts) for e in task.entities] == [7, 5, 6, 7, 6]
    assert task.gold.entity == "dimmable chandelier with crystal droplets 10"
    assert task.gold.part == "led_bulbs"
    factors = task.factors
    assert (factors.cluster_size_range, factors.gold_level, factors.distractor_count) == ((10, 50), 1, 4)
    assert factors.distractor_similarity == "similar"
    assert (factors.cluster_band, factors.level_kind) == ("large", "emergency")
    assert [(i.name, i.interactable) for i in task.items] == [
        ("glass serving bowl with condensation", True),
        ("salad greens", False),
        ("dining tablecloth", False),
        ("water glass", False),
    ]
    assert task.solution.prepare_environment_condition.startswith("No special environment setup")


def test_packed_description_is_split_into_parts(data: Path) -> None:
    (task,) = load_creativitybench(data / "creativitybench" / "sample_tasks.json")
    chandelier = task.entities[0]
    assert [p.name for p in chandelier.parts] == [
        "ceiling_canopy_and_mounting_bracket",
        "suspension_chain_or_downrod",
        "chandelier_frame_body",
        "lamp_sockets_array",
        "led_bulbs",
        "crystal_droplet_assemblies",
        "dimmable_led_driver_and_wiring_harness",
    ]
    bulbs = chandelier.part("led_bulbs")
    assert bulbs is not None
    assert bulbs.physical.description == (
        "A light, rigid candle-shaped LED bulb with a thin frosted polycarbonate diffuser over an aluminum core "
        "and a metal screw base; smooth matte surface, sturdy for frequent replacement, and shaped to fit tight "
        "chandelier clearances."
    )
    assert bulbs.state.description == (
        "Partially visible and partially blocked by nearby chandelier elements but still removable by hand; "
        "dry and slightly hot from recent use; internal state NA."
    )
    last = task.entities[-1].parts[-1]
    assert last.name == "drawstring_tie"
    assert last.state.description.endswith("still operable by hand with extra tugging.")
    assert not last.state.description.endswith("..")


def test_gold_marker_is_absent_everywhere(data: Path) -> None:
    (task,) = load_creativitybench(data / "creativitybench" / "sample_tasks.json")
    raw = (data / "creativitybench" / "sample_tasks.json").read_text()
    assert GOLD_MARKER in raw
    for entity in task.entities:
        assert GOLD_MARKER not in entity.describe()
        for part in entity.parts:
            assert "gold" not in part.name
            assert GOLD_MARKER not in part.physical.description
            assert GOLD_MARKER not in part.state.description
    assert GOLD_MARKER not in task.environment and GOLD_MARKER not in task.task


def test_gold_affordance(data: Path) -> None:
    (task,) = load_creativitybench(data / "creativitybench" / "sample_tasks.json")
    affordance = task.gold.affordance
    assert affordance.action.startswith("wipe and lift small amounts of moisture")
    assert affordance.level == 1
    assert affordance.environment_condition == "NA"
    assert affordance.enabling_attributes[0] == "surface: slightly textured with intermittent metallic sheen"
    assert len(affordance.enabling_attributes) == 5
    assert affordance.example_recipients == (
        "a dining table spot with spilled water",
        "a glass tumbler with condensation",
        "a ceramic plate edge with a small drip",
        "a phone screen with light smudging (gentle wipe only)",
    )


def test_affordance_level_forms(data: Path, tmp_path: Path, task_record: dict[str, Any]) -> None:
    record = copy.deepcopy(task_record)
    record["golds"][0]["gold_affordance"]["level"] = "Normal (its designed use)"
    record["setting"]["level"] = 0
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([record]))
    (task,) = load_creativitybench(path)
    assert (task.gold.affordance.level, task.factors.gold_level, task.factors.level_kind) == (0, 0, "normal")
    del record["golds"][0]["gold_affordance"]["level"]
    record["setting"]["level"] = 3
    path.write_text(json.dumps([record]))
    assert load_creativitybench(path)[0].gold.affordance.level == 3


def test_similarity_tiers(tmp_path: Path, task_record: dict[str, Any]) -> None:
    path = tmp_path / "tasks.json"
    for tier, similarity in (("difficult", "similar"), ("medium", "mixed"), ("low", "dissimilar")):
        record = copy.deepcopy(task_record)
        record["setting"]["difficulty"] = tier
        path.write_text(json.dumps([record]))
        assert load_creativitybench(path)[0].factors.distractor_similarity == similarity


def test_seed_entity_file_is_not_tasks(data: Path) -> None:
    path = data / "creativitybench" / "1_sample_entities.json"
    with pytest.raises(DatasetError, match="seed entities") as exc:
        load_creativitybench(path)
    assert_names(exc, path, "line 1", None)
    with pytest.raises(DatasetError, match="seed entities"):
        load_items(path)


def _break(record: dict[str, Any], how: str) -> None:
    if how == "no scenario":
        del record["scenario"]
    elif how == "attic":
        record["scenario"] = "attic"
    elif how == "extreme":
        record["setting"]["difficulty"] = "extreme"
    elif how == "no golds":
        record["golds"] = []
    elif how == "bad level":
        record["golds"][0]["gold_affordance"]["level"] = "Sometimes"
    elif how == "no affordance":
        del record["golds"][0]["gold_affordance"]["affordance"]
    elif how == "unpacked":
        record["entities"][2]["description"] = "just a cart"
    elif how == "wrong marker":
        entity = record["entities"][0]
        entity["description"] = (
            entity["description"]
            .replace(" [gold part]", "")
            .replace("lamp_sockets_array:", "lamp_sockets_array [gold part]:")
        )
    elif how == "cluster":
        record["setting"]["cluster_size_range"] = [10]
    elif how == "solution":
        del record["solution"]["apply_affordance"]
    elif how == "gold entity":
        record["golds"][0]["gold_entity"] = "a spoon"


@pytest.mark.parametrize(
    ("how", "field", "message"),
    [
        ("no scenario", "scenario", "missing key 'scenario'"),
        ("attic", "scenario", "unknown scene 'attic'"),
        ("extreme", "setting.difficulty", "unknown difficulty 'extreme'"),
        ("no golds", "golds", "is empty"),
        ("bad level", "golds[0].gold_affordance.level", "cannot parse level 'Sometimes'"),
        ("no affordance", "golds[0].gold_affordance.affordance", "missing key 'affordance'"),
        ("unpacked", "entities[2].description", "no '<part>: physical"),
        ("wrong marker", "entities[0].description", "marks \\['lamp_sockets_array'\\] as gold part"),
        ("cluster", "setting.cluster_size_range", "expected \\[low, high\\]"),
        ("solution", "solution.apply_affordance", "missing key"),
        ("gold entity", "record", "gold entity 'a spoon' is not among"),
    ],
)
def test_bad_task_names_file_record_and_field(
    tmp_path: Path, task_record: dict[str, Any], how: str, field: str, message: str
) -> None:
    good = copy.deepcopy(task_record)
    bad = copy.deepcopy(task_record)
    bad["task_id"] = "broken-task"
    _break(bad, how)
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([good, bad]))
    with pytest.raises(DatasetError, match=message) as exc:
        load_creativitybench(path)
    assert_names(exc, path, "index 1 (broken-task)", field)


def test_part_parser_tolerates_spaced_names_and_missing_state(tmp_path: Path) -> None:
    text = "led bulbs [gold part]: physical - A bulb.; state — Warm.. Cord Set: physical — A cord. It bends.. "
    parts, gold = parse_parts(text, tmp_path / "x.json", "index 0")
    assert [(p.name, p.physical.description, p.state.description) for p in parts] == [
        ("led_bulbs", "A bulb.", "Warm."),
        ("cord_set", "A cord. It bends.", ""),
    ]
    assert gold == ["led_bulbs"]


def test_split_top_level() -> None:
    assert split_top_level("a (x, y), b, c [d, e]") == ("a (x, y)", "b", "c [d, e]")
    assert split_top_level("") == ()


# ---------------------------------------------------------------- detection, JSONL and dispatch


def test_detect_format_of_every_sample(data: Path) -> None:
    assert detect_format(data / "brainteaser" / "sentence_puzzle.npy") == "brainteaser"
    assert detect_format(data / "brainteaser" / "SP_test.npy") == "brainteaser"
    assert detect_format(data / "splat" / "puzzles.xlsx") == "splat"
    assert detect_format(data / "lateval" / "english.json") == "lateval"
    assert detect_format(data / "creativitybench" / "sample_tasks.json") == "creativitybench"
    assert detect_format(data / "creativitybench" / "1_sample_entities.json") == "creativitybench"


def test_detect_format_by_content_not_extension(data: Path, tmp_path: Path) -> None:
    assert detect_format(shutil.copy(data / "brainteaser" / "word_puzzle.npy", tmp_path / "wp.bin")) == "brainteaser"
    assert detect_format(shutil.copy(data / "splat" / "puzzles.xlsx", tmp_path / "p.dat")) == "splat"
    assert detect_format(shutil.copy(data / "lateval" / "english.json", tmp_path / "lat.txt")) == "lateval"
    assert len(load_items(tmp_path / "wp.bin")) == 9


def test_load_items_dispatches(data: Path) -> None:
    assert len(load_items(data / "brainteaser" / "word_puzzle.npy")) == 9
    assert len(load_items(data / "splat" / "puzzles.xlsx")) == 9
    assert len(load_items(data / "lateval" / "english.json")) == 3
    assert isinstance(load_items(data / "creativitybench" / "sample_tasks.json")[0], CreativityTask)
    assert load_items(data / "lateval" / "english.json", format="lateval")[0].id == "lateval-0"


def test_jsonl_round_trips_every_record_kind(data: Path, tmp_path: Path) -> None:
    task = load_creativitybench(data / "creativitybench" / "sample_tasks.json")[0]
    sources: dict[str, list[Any]] = {
        "tasks": [task],
        "mcq": load_brainteaser(data / "brainteaser" / "sentence_puzzle.npy"),
        "stories": load_splat(data / "splat" / "puzzles.xlsx"),
        "kb": list(task.entities),
    }
    kinds = {"tasks": CreativityTask, "mcq": MCQPuzzle, "stories": SituationPuzzle, "kb": Entity}
    for name, records in sources.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(r.model_dump_json() for r in records) + "\n\n")
        assert detect_format(path) == "jsonl"
        loaded = load_items(path)
        assert loaded == records
        assert all(isinstance(r, kinds[name]) for r in loaded)


def test_jsonl_errors(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"what": 1}\n')
    with pytest.raises(DatasetError, match="cannot tell the record kind") as exc:
        load_jsonl(path)
    assert_names(exc, path, "line 1", None)
    good = MCQPuzzle(
        id="SP-1", group_id="SP-1", kind="sentence", variant="original", question="Q", choices=("a", "b"), label=0
    )
    path.write_text(good.model_dump_json() + "\n" + good.model_dump_json().replace('"label":0', '"label":5') + "\n")
    with pytest.raises(DatasetError, match="out of range") as exc:
        load_items(path)
    assert_names(exc, path, "line 2", None)
    path.write_text("{not json\n")
    with pytest.raises(DatasetError, match="not valid JSON") as exc:
        load_items(path, format="jsonl")
    assert_names(exc, path, "line 1", None)


def test_dispatch_errors(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such file"):
        load_items(tmp_path / "nope.json")
    with pytest.raises(DatasetError, match="is a directory"):
        load_items(tmp_path)
    empty = tmp_path / "empty.json"
    empty.write_text("\n")
    with pytest.raises(DatasetError, match="is empty"):
        load_items(empty)
    odd = tmp_path / "odd.json"
    odd.write_text('[{"colour": "red"}]')
    with pytest.raises(DatasetError, match="cannot tell the dataset format"):
        detect_format(odd)
    with pytest.raises(DatasetError, match="unknown format 'csv'"):
        load_items(odd, format="csv")
