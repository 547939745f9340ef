"""Small files in every official release format, with text written for these tests.

The loaders must read the public releases as they are, traps included, so the tests need files in
those exact formats. The text here is our own (short puzzles and tasks made up for the tests); only
the structure follows the releases: keys and their spelling, value types, numpy dtypes, sheet layout,
JSON layout. ``write_official_data(root)`` lays the files out as the shared sample folder does::

    root/brainteaser/  sentence_puzzle.npy  word_puzzle.npy  SP-train.npy  SP_test.npy  SP_test_answer.npy
    root/splat/        puzzles.xlsx
    root/creativitybench/  sample_tasks.json  1_sample_entities.json
    root/lateval/      english.json  chinese.json
    root/riddlesense/  rs_dev.jsonl  rs_test_hidden.jsonl

Every writer is deterministic: the same bytes on every run (the .xlsx zip gets fixed timestamps).
The traps each file carries are listed in its writer's docstring; the tests in ``tests/envs`` check
them by hand-computed expectations, never by asking the loader.
"""

from __future__ import annotations

import datetime
import hashlib
import io
import json
import re
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import openpyxl

NONE_OF_ABOVE = "None of above."
"""BrainTeaser's literal fourth option (sic)."""

Option = str | float
"""A BrainTeaser answer or distractor: text, or a float where the release stored a bare number."""


# ---------------------------------------------------------------- BrainTeaser


def _mcq(
    puzzle_id: str,
    question: str,
    answer: Option,
    distractors: tuple[Option, Option, Option],
    order: Sequence[int],
    *,
    spelling: str = "distrator",
    choice_list: Sequence[str] | None = None,
) -> dict[str, Any]:
    """One release record. ``order[i]`` is the pool index (0 = answer) shown at position ``i``.

    The options in ``choice_list`` are the pool in that order, numbers written as the release writes
    them (``"2000.0"``), unless ``choice_list`` is given: the release sometimes shows an option that
    is not in the pool (the answer disagrees with ``choice_list[label]``).
    """
    pool = [answer, *distractors]
    shown = [str(pool[i]) for i in order] if choice_list is None else list(choice_list)
    record: dict[str, Any] = {"id": puzzle_id, "question": question, "answer": answer}
    for suffix, value in zip(("1", "2", "(unsure)"), distractors, strict=True):
        record[f"{spelling}{suffix}"] = value
    record["label"] = list(order).index(0)
    record["choice_list"] = shown
    record["choice_order"] = list(order)
    return record


# SP-3: the right option holds a non-Latin letter (π).
_SP3 = ("The number of slices.", "Its weight in grams.", NONE_OF_ABOVE)
_SP3_ANSWER = "The ratio of its rim to its width, π."
_SP3_CR = ("The number of spokes.", "The amount of ink used.", NONE_OF_ABOVE)
_SP3_CR_ANSWER = "Each outline divided by its width gives π."
# SP-5: an ordinary group.
_SP5 = ("Every ship had radar that night.", "The harbour was closed for repairs.", NONE_OF_ABOVE)
_SP5_ANSWER = "He slept through a bright summer afternoon."
_SP5_CR = ("The paintings were glued to the walls.", "The thieves were on holiday.", NONE_OF_ABOVE)
_SP5_CR_ANSWER = "He napped at noon while the museum was open and full of light."
# SP-40: "None of above." is the right option in all three variants.
_SP40 = ("Five.", "Three.", "Two.")
_SP40_CR = ("Six.", "Four.", "Two.")
# SP-51: float distractors, trailing whitespace, and (in _CR) an answer field that disagrees.
_SP51 = ("Every year has the same number.", 2000.0, NONE_OF_ABOVE)
_SP51_ANSWER = "A leap year. \n"


def sentence_puzzle_records() -> list[dict[str, Any]]:
    """EMNLP ``sentence_puzzle.npy``: 4 groups x 3 variants, keys spelled ``distrator…``.

    Traps: ``SP-51`` has a float distractor ``2000.0`` and a question and answer with trailing
    ``" \\n"``; ``SP-51_CR`` has three float distractors and an ``answer`` ("Every year.") that
    disagrees with its true option ``choice_list[3] == "None of above."``; the right option of the
    whole ``SP-40`` group is ``"None of above."``; ``SP-3``'s right option contains ``π``.
    """
    return [
        _mcq(
            "SP-3",
            "A baker cuts a round pie into slices of any size she likes, yet one number about the pie never "
            "changes. Which?",
            _SP3_ANSWER,
            _SP3,
            [2, 0, 1, 3],
        ),
        _mcq(
            "SP-3_SR",
            "Whatever size of slices a baker cuts from a round pie, which number about the pie stays the same?",
            _SP3_ANSWER,
            _SP3,
            [1, 2, 0, 3],
        ),
        _mcq(
            "SP-3_CR",
            "A child draws a tiny coin and a huge wheel. Which number is the same for both drawings?",
            _SP3_CR_ANSWER,
            _SP3_CR,
            [0, 2, 1, 3],
        ),
        _mcq(
            "SP-5",
            "A lighthouse keeper switched off the lamp and slept for hours, yet no ship came to harm. How?",
            _SP5_ANSWER,
            _SP5,
            [1, 0, 2, 3],
        ),
        _mcq(
            "SP-5_SR",
            "No ship came to harm although the lighthouse keeper turned the lamp off and slept for hours. Why?",
            _SP5_ANSWER,
            _SP5,
            [2, 1, 0, 3],
        ),
        _mcq(
            "SP-5_CR",
            "A night watchman left every lamp in the museum dark and napped for hours, yet nothing was stolen. How?",
            _SP5_CR_ANSWER,
            _SP5_CR,
            [0, 1, 2, 3],
        ),
        _mcq(
            "SP-40",
            "A potter presses three lumps of clay together, then presses two more lumps into the same ball. "
            "How many lumps does she have?",
            NONE_OF_ABOVE,
            _SP40,
            [1, 3, 2, 0],
        ),
        _mcq(
            "SP-40_SR",
            "After pressing three lumps of clay into one ball and pressing two more into it, how many lumps "
            "does the potter hold?",
            NONE_OF_ABOVE,
            _SP40,
            [3, 1, 2, 0],
        ),
        _mcq(
            "SP-40_CR",
            "A cook pours four cups of soup into a pot and then pours in two more cups. How many pots of soup "
            "are there?",
            NONE_OF_ABOVE,
            _SP40_CR,
            [2, 1, 3, 0],
        ),
        _mcq("SP-51", "Which kind of year has the most days in it? \n", _SP51_ANSWER, _SP51, [2, 0, 1, 3]),
        _mcq(
            "SP-51_SR",
            "Of all kinds of year, which one holds the greatest number of days?",
            _SP51_ANSWER,
            _SP51,
            [1, 2, 0, 3],
        ),
        _mcq(
            "SP-51_CR",
            "Which year of the last century had a 30th of February?",
            "Every year.\n",
            (1900.0, 1950.0, 1999.0),
            [1, 2, 3, 0],
            choice_list=["1900.0", "1950.0", "1999.0", NONE_OF_ABOVE],
        ),
    ]


_WP2 = ("S, for September.", "K, the letter after J.", NONE_OF_ABOVE)
_WP2_ANSWER = "A, for August."
_WP5 = ("In base four, 10 + 5 is written as 3. ", "Count the vowels: 'ten' plus 'five' has three. ", NONE_OF_ABOVE)
_WP5_CR = ("In base five, 20 + 6 is written as 2. ", "Count the numbers: 20 and 6 make two. ", NONE_OF_ABOVE)
_WP9_ANSWER = "None of above. Only a word like 'level' does."


def word_puzzle_records() -> list[dict[str, Any]]:
    """EMNLP ``word_puzzle.npy``: 3 groups x 3 variants, keys spelled ``distrator…``.

    Traps: ``WP-5``'s right options hold an inner newline and its distractors a trailing space;
    the ``WP-9`` group's right option is ``"None of above."`` with an explanation, except in
    ``WP-9_SR`` whose ``choice_list`` shows the bare option while ``answer`` keeps the explanation;
    ``WP-9`` options hold emoji.
    """
    return [
        _mcq("WP-2", "What letter comes next: J, F, M, A, M, J, J, ...?", _WP2_ANSWER, _WP2, [0, 2, 1, 3]),
        _mcq("WP-2_SR", "Continue the row J, F, M, A, M, J, J with one more letter.", _WP2_ANSWER, _WP2, [0, 2, 1, 3]),
        _mcq(
            "WP-2_CR",
            "What letter comes next: M, T, W, T, F, S, ...?",
            "S, for Sunday.",
            ("M, for Monday.", "T, the letter after S.", NONE_OF_ABOVE),
            [1, 0, 2, 3],
        ),
        _mcq(
            "WP-5",
            "How can 10 + 5 = 3 be true?",
            "On a twelve-hour clock:\n10 o'clock plus 5 hours is 3 o'clock",
            _WP5,
            [0, 1, 2, 3],
        ),
        _mcq(
            "WP-5_SR",
            "When is it right to say that 10 + 5 equals 3?",
            "On a twelve-hour clock:\n10 o'clock plus 5 hours is 3 o'clock",
            _WP5,
            [1, 2, 0, 3],
        ),
        _mcq(
            "WP-5_CR",
            "How can 20 + 6 = 2 be true?",
            "On a twenty-four-hour clock:\n20:00 plus 6 hours is 02:00",
            _WP5_CR,
            [2, 0, 1, 3],
        ),
        _mcq(
            "WP-9",
            "Which of these words reads the same backwards: 'lever', 'label' or 'lemon'?",
            _WP9_ANSWER,
            ("lever", "label", "lemon 🍋"),
            [2, 3, 1, 0],
        ),
        _mcq(
            "WP-9_SR",
            "Of 'lever', 'label' and 'lemon', which one is a palindrome?",
            _WP9_ANSWER,
            ("lever", "label", "lemon 🍋"),
            [1, 3, 2, 0],
            choice_list=["lever", "lemon 🍋", "label", NONE_OF_ABOVE],
        ),
        _mcq(
            "WP-9_CR",
            "Which of these words reads the same backwards: 'motor', 'robot' or 'rotten'?",
            "None of above. Only a word like 'rotor' does.",
            ("motor", "robot 🤖", "rotten"),
            [3, 1, 2, 0],
        ),
    ]


def semeval_train_records() -> list[dict[str, Any]]:
    """SemEval-2024 ``SP-train.npy``: the SP-3 and SP-5 groups, keys spelled ``distractor…``, shuffled anew."""
    return [
        _mcq(r["id"], r["question"], r["answer"], distractors, order, spelling="distractor")
        for r, distractors, order in zip(
            sentence_puzzle_records()[:6],
            (_SP3, _SP3, _SP3_CR, _SP5, _SP5, _SP5_CR),
            ([0, 2, 1, 3], [2, 0, 1, 3], [1, 2, 0, 3], [2, 1, 0, 3], [0, 1, 2, 3], [1, 0, 2, 3]),
            strict=True,
        )
    ]


SEMEVAL_TEST: tuple[tuple[str, int, str, tuple[str, str, str, str]], ...] = (
    (
        "SP-12_CR",
        0,
        "A goalkeeper never touched the ball in the whole match, yet his team won. How?",
        (
            "The other team never reached his half of the pitch.",
            "He was the best player on the field.",
            "The referee stopped the match early.",
            NONE_OF_ABOVE,
        ),
    ),
    (
        "SP-6_SR",
        2,
        "Both engines of the plane stopped, yet nobody on board was worried. Why?",
        (
            "The pilot had a parachute.",
            "The plane flew on\nby itself.",
            "The plane was parked at the gate.",
            NONE_OF_ABOVE,
        ),
    ),
    (
        "SP-21_CR",
        2,
        "A girl stood under a waterfall for a minute, yet her hair stayed dry. How?",
        ("She held her breath.", "The water was warm.", "She wore a tight swimming cap.", NONE_OF_ABOVE),
    ),
    (
        "SP-9_SR",
        1,
        "Which is heavier to carry up a hill: a kilo of stones or a kilo of feathers?",
        ("The stones.", "They weigh the same.", "The feathers.", NONE_OF_ABOVE),
    ),
    (
        "SP-30_SR",
        3,
        "How many birthdays does a person usually have in one year?",
        ("Two.", "Zero.", "Five.", NONE_OF_ABOVE),
    ),
    (
        "SP-17",
        0,
        "A painter slipped off the top rung of her ladder, yet she was not hurt at all. How?",
        (
            "The ladder was lying flat on the grass.",
            "She landed in a pile of paint cans.",
            "She was wearing a helmet.",
            NONE_OF_ABOVE,
        ),
    ),
)
"""SemEval test split: (id, label, question, options) in file order, which is shuffled across groups."""


def semeval_test_records() -> list[dict[str, Any]]:
    """SemEval ``SP_test.npy``: records with only ``question`` and ``choice_list`` (no id, no label).

    ``SP-6_SR``'s second option holds an inner newline.
    """
    return [{"question": question, "choice_list": list(options)} for _, _, question, options in SEMEVAL_TEST]


def semeval_test_answers() -> np.ndarray:
    """SemEval ``SP_test_answer.npy``: a ``<U21`` array of shape (N, 2), ``[id, label-as-string]`` per row."""
    return np.array([[puzzle_id, str(label)] for puzzle_id, label, _, _ in SEMEVAL_TEST], dtype="<U21")


def save_records(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    """Save dicts as the releases do: a 1-d numpy object array, pickled."""
    array = np.empty(len(records), dtype=object)
    array[:] = list(records)
    np.save(path, array, allow_pickle=True)
    return path


def write_brainteaser(directory: Path) -> Path:
    """The five BrainTeaser files: EMNLP sentence and word puzzles, SemEval train, test and answers."""
    directory.mkdir(parents=True, exist_ok=True)
    save_records(directory / "sentence_puzzle.npy", sentence_puzzle_records())
    save_records(directory / "word_puzzle.npy", word_puzzle_records())
    save_records(directory / "SP-train.npy", semeval_train_records())
    save_records(directory / "SP_test.npy", semeval_test_records())
    np.save(directory / "SP_test_answer.npy", semeval_test_answers())
    return directory


def _demonstration(
    question: str, answer: str, distractors: tuple[str, str], order: list[int], last: str = NONE_OF_ABOVE
) -> dict[str, Any]:
    """A ``demonstration.npy`` record: ``Question`` with a capital Q, ``Answer``, ``Choice1-3``
    (``Choice3`` is ``None of above.`` unless that is the answer), ``choice_list`` in
    ``choice_order`` (the pool index shown at each position; pool = Answer, Choice1-3) and
    ``label``; no ``id``."""
    pool = [answer, *distractors, last]
    return {
        "Question": question,
        "Answer": answer,
        "Choice1": distractors[0],
        "Choice2": distractors[1],
        "Choice3": last,
        "label": order.index(0),
        "choice_list": [pool[i] for i in order],
        "choice_order": order,
    }


DEMONSTRATION_QUESTIONS = (
    "A man walked all night in the rain without a hat or umbrella, yet not one hair got wet. Why?",
    "A lorry driver went the wrong way down a one-way street and the police watched. Why no ticket?",
    "What can you hold in your right hand but never in your left?",
    "How can a woman born in 1990 celebrate only her eighth birthday in 2022?",
    "Which word becomes shorter when you add two letters to it?",
    "What starts with T, ends with T and has T in it?",
    "What has a neck but no head?",
    "Which month has twenty-eight days?",
)
"""The eight demonstration questions in file order: four sentence puzzles, then four word puzzles."""


def demonstration_records() -> list[dict[str, Any]]:
    """BrainTeaser's ``Prompting/demonstration.npy``: 8 solved puzzles for few-shot prompts.

    Traps: the question key is ``Question``; no ``id``; the last demonstration's answer is
    ``None of above.`` with three real distractors (as the release's spaceship puzzle).
    """
    q = DEMONSTRATION_QUESTIONS
    return [
        _demonstration(q[0], "He was bald.", ("He ran fast.", "The rain was light."), [2, 0, 1, 3]),
        _demonstration(
            q[1], "He was walking, not driving.", ("It was night.", "The police were off duty."), [1, 2, 0, 3]
        ),
        _demonstration(q[2], "Your left elbow.", ("A pen.", "A cup."), [0, 1, 2, 3]),
        _demonstration(q[3], "She was born on 29 February.", ("She lied.", "She forgot."), [1, 0, 2, 3]),
        _demonstration(q[4], "Short.", ("Long.", "Tall."), [2, 1, 0, 3]),
        _demonstration(q[5], "A teapot.", ("A tent.", "A toast."), [1, 2, 0, 3]),
        _demonstration(q[6], "A bottle.", ("A giraffe.", "A swan."), [1, 0, 2, 3]),
        _demonstration(q[7], NONE_OF_ABOVE, ("February.", "June."), [1, 2, 3, 0], last="Only February."),
    ]


def write_brainteaser_demonstrations(directory: Path) -> Path:
    """``demonstration.npy`` (as in the official repository's ``Prompting`` folder); returns its path."""
    directory.mkdir(parents=True, exist_ok=True)
    return save_records(directory / "demonstration.npy", demonstration_records())


# ---------------------------------------------------------------- SPLAT

SPLAT_HEADER = ("title", "story", "answer", "level of difficulty")

SPLAT_ROWS: tuple[tuple[str, str, str, str], ...] = (
    (
        "The silent concert",
        "An orchestra played for two hours in a full hall.\nNobody in the audience heard a note.\n"
        "Everyone stood up and cheered at the end.",
        "The audience was deaf. They felt the music through the wooden floor and cheered by waving their hands.",
        "8/10 HARD",
    ),
    (
        "Wet footprints",
        "A trail of wet footprints crosses a dry floor and stops in the middle of the room. Nobody is there. ",
        "A child came in from the swimming pool, and her father picked her up and carried her out.",
        "4/10 MEDIUM",
    ),
    (
        "The lost key",
        "Lena cannot find her house key anywhere.\nShe still gets into her home without breaking anything.",
        "Her husband was at home and opened the door when she knocked.",
        "2/10 EASY",
    ),
    (
        "The empty train",
        "A train arrives exactly on time. Nobody gets off and nobody gets on.\nThe driver is delighted.",
        "It was a new train on its first test run; arriving on time with no passengers meant the test had passed.",
        "6/10 MEDIUM",
    ),
    (
        "Snow on the roof",
        "Every house in the street has snow on its roof except one.\nThe owner of that house is arrested the next day.",
        "He was growing plants under hot lamps in his attic. The heat melted the snow and gave him away.",
        "8/10 HARD",
    ),
    (
        "Sunglasses at night",
        "A woman wears dark sunglasses at midnight and walks down an unlit street without trouble.",
        "She is blind and walks the street every day with her cane; the glasses are only a habit.",
        "1/10 EASY",
    ),
    (
        "A broken window",
        "A window is broken and a ball lies on the floor.\n\nWhat happened?\n\nA boy is crying outside, but he never "
        "touched the ball.",
        "His sister kicked the ball through the window and ran away. He is crying because he will be blamed.",
        "5/10 MEDIUM",
    ),
    (
        "The empty train",
        "A train leaves the station with no driver and no passengers, and nobody is worried.",
        "It is a toy train going round a track in a child's bedroom.",
        "2/10 EASY",
    ),
    (
        "Late again",
        "A man arrives late for work every day for a whole year, and his boss gives him a prize.",
        "He works the night shift, so he always arrives late in the evening; the prize was for never missing a shift.",
        "7/10 HARD",
    ),
)
"""SPLAT puzzles, one per spreadsheet row from row 2: (title, story, answer, level of difficulty).

Levels 8, 4, 2, 6, 8, 1, 5, 2, 7: three per band. "The empty train" is the title of rows 5 and 9.
Stories carry inner newlines (row 8 blank lines) and row 3's story a trailing space.
"""

_FIXED_TIME = datetime.datetime(2024, 1, 1, 0, 0, 0)


def _fixed_zip(data: bytes) -> bytes:
    """Repack an .xlsx with fixed entry timestamps and document dates, so the bytes never change."""
    stamp = _FIXED_TIME.strftime("%Y-%m-%dT%H:%M:%SZ")
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            content = source.read(info.filename)
            if info.filename == "docProps/core.xml":
                content = re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stamp.encode(), content)
            target.writestr(zipfile.ZipInfo(info.filename, date_time=_FIXED_TIME.timetuple()[:6]), content)
    return out.getvalue()


def write_splat(path: Path, rows: Sequence[Sequence[object]] = SPLAT_ROWS) -> Path:
    """SPLAT ``puzzles.xlsx``: one sheet "Sheet1"; the header's fifth cell exists but is empty."""
    path.parent.mkdir(parents=True, exist_ok=True)
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "Sheet1"
    sheet.append(list(SPLAT_HEADER))
    sheet.cell(row=1, column=5)  # the release's sheet spans A1:E…, with nothing in E1
    for row in rows:
        sheet.append(list(row))
    workbook.properties.created = _FIXED_TIME
    buffer = io.BytesIO()
    workbook.save(buffer)
    path.write_bytes(_fixed_zip(buffer.getvalue()))
    return path


# ---------------------------------------------------------------- CreativityBench

GOLD = " [gold part]"


def pack_parts(parts: Sequence[tuple[str, str, str]], gold: str | None = None) -> str:
    """A release entity description: ``"<part>: physical — ...; state — ..".. <next_part>: ..."``."""
    return " ".join(
        f"{name}{GOLD if name == gold else ''}: physical — {physical}; state — {state}."
        for name, physical, state in parts
    )


def _judged(part: str, affordance: dict[str, Any] | None = None) -> dict[str, Any]:
    """One ``judge_output`` entry: whether a distractor part could also do the job."""
    if affordance is None:
        reason = f"No. The {part} is not shaped or made for this job."
        return {
            "similar_affordance_reason": reason,
            "similar_affordance": "No",
            "affordance": "NA",
            "gold_change_reason": reason,
            "gold_change": "No",
            "decision_making_difficulty": "NA",
        }
    return {
        "similar_affordance_reason": f"Yes. The {part} could do a similar job with some effort.",
        "similar_affordance": "Yes",
        "affordance": affordance,
        "gold_change_reason": "Accessibility: the target is better because it is free and works at once.",
        "gold_change": "No",
        "decision_making_difficulty": "2",
    }


DRILL = "cordless drill with magnetic bit holder 6"
DRILL_PARTS = (
    (
        "battery_pack",
        "A palm-sized, heavy lithium battery block in a hard plastic shell with a sliding latch; rigid and durable.",
        "Visible and clipped to the drill; dry at room temperature; charged.",
    ),
    (
        "keyless_chuck",
        "A ribbed steel and plastic collar with three jaws that close on a bit; rigid, hand-tightened.",
        "Visible and free; dry; holding no bit at the moment.",
    ),
    (
        "magnetic_bit_holder",
        "A finger-length steel sleeve with a strong ring magnet inside; smooth, rigid and slim enough to reach into "
        "narrow gaps.",
        "Visible and free at the front of the drill; dry and clean; the magnet pulls small steel parts firmly.",
    ),
    (
        "trigger_switch",
        "A short plastic trigger with a variable speed spring; small and rigid.",
        "Visible; locked by the safety catch; dry.",
    ),
    (
        "handle_grip",
        "A rubber-coated pistol grip, about hand length, soft to the touch and sturdy.",
        "Visible and free; dry; slightly dusty.",
    ),
)
MIRROR = "telescoping inspection mirror 2"
MIRROR_PARTS = (
    ("mirror_head", "A round glass mirror, coin-sized, in a thin metal rim.", "Visible and free; dry; clean."),
    (
        "telescoping_shaft",
        "A slim chrome shaft in four sections that slide out to arm length; light and rigid.",
        "Visible; collapsed to its shortest length; dry.",
    ),
    ("swivel_joint", "A small ball joint that tilts the mirror head.", "Visible; a little stiff; dry."),
    ("rubber_handle", "A short rubber handle with a hanging hole.", "Visible and free; dry."),
)
TAPE = "steel tape measure with belt clip 4"
TAPE_PARTS = (
    (
        "blade",
        "A curved steel ribbon five metres long, printed with markings; springy and thin with sharp edges.",
        "Wound inside the housing; dry.",
    ),
    ("housing", "A palm-sized plastic case with a rubber bumper.", "Visible and free; dry; scuffed."),
    ("belt_clip", "A flat spring-steel clip on the back of the case.", "Visible; firm; dry."),
    (
        "end_hook",
        "A small riveted steel hook at the tip of the blade; loose by design to measure inside and outside.",
        "Visible and free; dry; not magnetic.",
    ),
)
HOSE = "coiled garden hose with spray nozzle 1"
HOSE_PARTS = (
    ("hose_tube", "A long green rubber tube, flexible and heavy when full.", "Coiled on a hook; wet inside."),
    ("spray_nozzle", "A plastic pistol nozzle with a dial of spray patterns.", "Visible; dripping slightly."),
    (
        "brass_coupling",
        "A threaded brass ring that joins the hose to a tap.",
        "Visible but stiff; slightly corroded; still operable by hand with extra twisting.",
    ),
)

MITT = "silicone oven mitt with quilted lining 5"
MITT_PARTS = (
    ("silicone_shell", "A thick, heat-proof silicone outer layer with a ridged grip.", "Visible and free; dry; cool."),
    (
        "quilted_lining",
        "A soft, padded cotton lining that keeps heat away from the hand.",
        "Inside the mitt; dry; clean.",
    ),
    ("hanging_loop", "A small fabric loop at the cuff.", "Visible; hung on a hook by the stove."),
)
WHISK = "wire whisk with balloon head 1"
WHISK_PARTS = (
    ("balloon_wires", "Eight thin steel wires bent into a balloon shape; springy.", "Visible; dry; clean."),
    ("whisk_handle", "A round steel handle, hand length, hollow and light.", "Visible and free; dry."),
)
BOWL = "ceramic fruit bowl 3"
BOWL_PARTS = (
    ("bowl_body", "A wide, shallow glazed ceramic bowl; heavy and brittle.", "On the counter; holding three lemons."),
    ("foot_ring", "An unglazed ring under the bowl; rough to the touch.", "Hidden under the bowl; dry."),
)


def _gold_affordance(
    action: str, level: str, attributes: list[list[str]], recipients: str, use: str, recipient: str
) -> dict[str, Any]:
    return {
        "use_condition": use,
        "environment_condition": "NA",
        "attribute": attributes,
        "affordance": action,
        "level": level,
        "recipient_condition": recipient,
        "example_recipient": recipients,
    }


def creativitybench_tasks() -> list[dict[str, Any]]:
    """CreativityBench ``sample_tasks.json`` records: two tasks.

    Task 0 (garage): gold ``magnetic_bit_holder`` of the first entity, 3 distractors, setting
    ``difficult`` (similar), ``level`` 1 with an "Emergency 1 (...)" affordance level, cluster
    [12, 40] (large); its id spells out the gold entity and part. Task 1 (kitchen): gold
    ``quilted_lining``, 2 distractors, ``low`` (dissimilar), level 0 with a "Normal (...)" affordance
    level, cluster [3, 8] (small). Entity names end in a variant index; descriptions are packed with
    the gold part marked ``" [gold part]"``; ``environment`` names parts spaced, not snake_case.
    """
    garage = {
        "task_id": "garage-cordless-drill-with-magnetic-bit-holder-6-magnetic-bit-holder-1-iter1-difficult-3entity-"
        "sample1",
        "scenario": "garage",
        "setting": {
            "difficulty": "difficult",
            "entity_count": 3,
            "sample_index": 1,
            "max_cases_per_tier": 1,
            "entity_counts_macro": [3, 6, 9],
            "scenario": "garage",
            "level": 1,
            "cluster_size_range": [12, 40],
            "iteration": 1,
            "cluster_id": "0417",
        },
        "sampled_entity_count": 3,
        "golds": [
            {
                "gold_entity": DRILL,
                "gold_part": "magnetic_bit_holder",
                "gold_affordance": _gold_affordance(
                    "pick up a small steel part from a narrow gap by magnetic attraction",
                    "Emergency 1 (The holder is made to keep bits in place, not to fish for lost screws, but its "
                    "magnet does the job in a pinch.)",
                    [
                        ["magnetism: strong permanent ring magnet", "physical"],
                        ["shape: slim sleeve that fits narrow gaps", "physical", "visual"],
                        ["rigidity: very rigid", "physical"],
                        ["availability: free", "state"],
                    ],
                    "a steel screw under a workbench, a dropped sewing needle (small, sharp), "
                    "a washer in a drain grate",
                    "Hold the drill by its grip and slide the front of the bit holder into the gap until it touches "
                    "the screw.",
                    "small steel parts, light enough for a small magnet; out of reach of fingers",
                ),
            }
        ],
        "entities": [
            {
                "name": DRILL,
                "description": pack_parts(DRILL_PARTS, gold="magnetic_bit_holder"),
                "judge_output": {name: _judged(name) for name, _, _ in DRILL_PARTS if name != "magnetic_bit_holder"},
            },
            {
                "name": MIRROR,
                "description": pack_parts(MIRROR_PARTS),
                "judge_output": {
                    "mirror_head": _judged(
                        "mirror_head",
                        {
                            "use_condition": "NA",
                            "environment_condition": "NA",
                            "attribute": [["reflective surface", "surface: glass mirror"]],
                            "affordance": "show where the screw lies inside the gap",
                            "recipient_condition": "objects in dark, narrow places",
                            "example_recipient": ["a screw under a bench", "a ring behind a sink"],
                            "failure_case": "Fails to pick anything up: it only shows where things are.",
                        },
                    ),
                    **{name: _judged(name) for name, _, _ in MIRROR_PARTS[1:]},
                },
            },
            {
                "name": TAPE,
                "description": pack_parts(TAPE_PARTS),
                "judge_output": {name: _judged(name) for name, _, _ in TAPE_PARTS},
            },
            {
                "name": HOSE,
                "description": pack_parts(HOSE_PARTS),
                "judge_output": {name: _judged(name) for name, _, _ in HOSE_PARTS},
            },
        ],
        "items": [
            {
                "name": "small steel screw",
                "description": "A short steel screw lying in a narrow gap under the workbench, out of reach.",
                "interactable": "Yes",
            },
            {"name": "bicycle wheel", "description": "A front wheel leaning on the bench.", "interactable": "No"},
            {"name": "box of rags", "description": "Clean cotton rags in a cardboard box.", "interactable": "No"},
            {"name": "oil can", "description": "A small can of bike oil.", "interactable": "No"},
        ],
        "environment": f"I am in the garage. Around me there is the {DRILL} with its battery pack, keyless chuck, "
        f"magnetic bit holder, trigger switch, and handle grip. There is also the {MIRROR}, the {TAPE}, and the "
        f"{HOSE}. On the workbench there is a bicycle wheel, a small steel screw, a box of rags, and an oil can. ",
        "task": "I’m fixing my bike in the garage and a small screw rolled into a narrow gap under the workbench. "
        "My fingers can’t reach it and I don’t own a magnetic pickup tool. What can I use?",
        "solution": {
            "prepare_recipient": "Find where the screw lies in the gap. (Note: Verify the screw is steel, so a "
            "magnet holds it.)",
            "prepare_use_condition": "Take the bit out of the drill's magnetic bit holder so the magnet is bare. "
            "(Note: Verify the holder is free and dry.)",
            "prepare_environment_condition": "No special environment setup is needed. (Note: NA)",
            "apply_affordance": "Slide the front of the magnetic bit holder into the gap until it touches the "
            "screw, then draw it back slowly with the screw stuck to it. (Note: Verify the screw comes out with the "
            "holder.)",
        },
    }
    kitchen = {
        "task_id": "kitchen-silicone-oven-mitt-with-quilted-lining-5-quilted-lining-1-iter1-low-2entity-sample1",
        "scenario": "kitchen",
        "setting": {
            "difficulty": "low",
            "entity_count": 2,
            "sample_index": 1,
            "max_cases_per_tier": 1,
            "entity_counts_macro": [2, 4, 6],
            "scenario": "kitchen",
            "level": 0,
            "cluster_size_range": [3, 8],
            "iteration": 1,
            "cluster_id": "0052",
        },
        "sampled_entity_count": 2,
        "golds": [
            {
                "gold_entity": MITT,
                "gold_part": "quilted_lining",
                "gold_affordance": _gold_affordance(
                    "insulate the hand from a hot handle",
                    "Normal (keeping heat from the hand is what the lining is for)",
                    [["insulation: thick padded cotton", "physical"], ["moisture: dry", "state"]],
                    "a hot saucepan handle, a baking tray fresh from the oven",
                    "Put the mitt on so the lining covers the palm.",
                    "hot handles and trays up to oven temperature",
                ),
            }
        ],
        "entities": [
            {
                "name": WHISK,
                "description": pack_parts(WHISK_PARTS),
                "judge_output": {name: _judged(name) for name, _, _ in WHISK_PARTS},
            },
            {
                "name": MITT,
                "description": pack_parts(MITT_PARTS, gold="quilted_lining"),
                "judge_output": {name: _judged(name) for name, _, _ in MITT_PARTS if name != "quilted_lining"},
            },
            {
                "name": BOWL,
                "description": pack_parts(BOWL_PARTS),
                "judge_output": {name: _judged(name) for name, _, _ in BOWL_PARTS},
            },
        ],
        "items": [
            {"name": "soup pot", "description": "A full pot of soup with hot metal handles.", "interactable": "Yes"},
            {"name": "stove", "description": "A gas stove with one burner on.", "interactable": "No"},
        ],
        "environment": f"I am in the kitchen. Around me there is the {MITT} with its silicone shell, quilted "
        f"lining, and hanging loop. There is also the {WHISK} and the {BOWL}. On the stove there is a soup pot.",
        "task": "My soup pot’s metal handles are too hot to touch and I need to move it off the stove. What can I use?",
        "solution": {
            "prepare_recipient": "Turn off the burner. (Note: NA)",
            "prepare_use_condition": "Put the oven mitt on. (Note: Verify the lining is dry.)",
            "prepare_environment_condition": "Clear a spot on the counter for the pot. (Note: NA)",
            "apply_affordance": "Grip the hot handle through the mitt and lift the pot onto the counter.",
        },
    }
    return [garage, kitchen]


SEED_ENTITIES: tuple[tuple[str, str], ...] = (
    ("bamboo cutting board with juice groove", "kitchen"),
    ("reclining armchair with footrest", "living_room"),
    ("wool throw blanket with fringe", "bedroom"),
    ("shower caddy with suction cups", "bathroom"),
    ("rubber mallet with wooden handle", "garage"),
)
"""CreativityBench seed entities of the annotation pipeline: (name, scenario)."""


def write_creativitybench(directory: Path) -> Path:
    """``sample_tasks.json`` (an indented JSON list) and ``1_sample_entities.json`` (JSON lines, despite its name)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "sample_tasks.json").write_text(
        json.dumps(creativitybench_tasks(), indent=2, ensure_ascii=False), encoding="utf-8"
    )
    lines = [json.dumps({"name": name, "scenario": scene}) for name, scene in SEED_ENTITIES]
    (directory / "1_sample_entities.json").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return directory


# ---------------------------------------------------------------- LatEval

LATEVAL_ENGLISH: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "A gardener cheered when lightning struck the best tree in his garden. Why?",
        "The tree had been dead for years and leaned over his house.  He could not afford to have it cut down, "
        "and the lightning split it so that it fell away from the house.",
        (
            "The tree was dead",
            "It leaned over his house",
            "Cutting it down would have cost a lot",
            "The lightning made it fall away from the house",
        ),
    ),
    (
        "A woman opened a letter, read it, and laughed until she cried. The page was blank. Why?",
        "Her young son had posted his first letter all by himself.  He could not write yet, so he sent an empty page.",
        (
            "The letter came from her son",
            "The son was very young",
            "It was the first letter he ever posted",
            "He could not write yet",
            "She was proud of him",
        ),
    ),
    (
        "A man paid a stranger to break a window of his own house. Why?",
        "He had locked himself out with a pot on the stove.  The stranger was a locksmith who could not open the old "
        "lock in time, so breaking the window was quicker.",
        (
            "He was locked out of his house",
            "A pot was cooking on the stove",
            "The stranger was a locksmith who could not open the old lock in time.",
        ),
    ),
)
"""LatEval English puzzles: (question, answer, clues); ids are their positions."""

LATEVAL_CHINESE: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "妈妈打开冰箱，发现蛋糕少了一块，却开心地笑了。为什么？",
        "那天是妈妈的生日，孩子们偷偷切下一块蛋糕，和贺卡一起放在了她的床头。",
        ("那天是妈妈的生日", "蛋糕是给妈妈准备的", "孩子们把那块蛋糕送给了她"),
    ),
    (
        "一位老人每天晚上都关掉所有的灯，可他家的窗户总是亮着。为什么？",
        "窗户上贴满了会发光的星星贴纸，是孙子送给他的礼物。",
        ("窗户上贴着东西", "那些东西在黑暗中会发光", "这是孙子送的礼物"),
    ),
    (
        "小李在考试中交了一张白纸，老师却给了他满分。为什么？",
        "那是一场美术考试，题目是画一场大雪，老师认为小李的白纸是最好的答案。",
        ("这是一场美术考试", "题目和下雪有关", "老师很欣赏他的想法"),
    ),
    (
        "一个渔夫出海一整天，一条鱼也没有钓到，回家时却非常高兴。为什么？",
        "他出海是为了寻找走失的小狗，最后在一座小岛上找到了它。",
        ("他出海不是为了钓鱼", "他在找一样重要的东西", "他找到了走失的小狗"),
    ),
)
"""LatEval Chinese puzzles: (question, answer, clues); ids are their positions."""


def lateval_records(puzzles: Sequence[tuple[str, str, tuple[str, ...]]]) -> list[dict[str, Any]]:
    """LatEval records: ``{id (int), question, answer, clue}``, the clue a fenced, numbered list."""
    return [
        {
            "id": number,
            "question": question,
            "answer": answer,
            "clue": "```" + "\n".join(f"{n}.{clue}" for n, clue in enumerate(clues, start=1)) + "```",
        }
        for number, (question, answer, clues) in enumerate(puzzles)
    ]


def write_lateval(directory: Path) -> Path:
    """``english.json`` and ``chinese.json``: JSON lists indented by one space, no final newline."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, puzzles in (("english.json", LATEVAL_ENGLISH), ("chinese.json", LATEVAL_CHINESE)):
        text = json.dumps(lateval_records(puzzles), indent=1, ensure_ascii=False)
        (directory / name).write_text(text, encoding="utf-8")
    return directory


# ---------------------------------------------------------------- RiddleSense

RIDDLES_DEV: tuple[tuple[str, str, tuple[str, str, str, str, str], str], ...] = (
    (
        "I have a neck but no head, and I wear a cap when I am closed. What am I?",
        "neck",
        ("giraffe", "shirt", "bottle", "guitar", "swan"),
        "C",
    ),
    (
        "I run all day around my round home yet never leave it. What am I?",
        "run",
        ("mouse", "clock hand", "river", "train", "spider"),
        "B",
    ),
    (
        "I am full of holes, yet I keep the pasta and let the water go. What am I?",
        "hole",
        ("bucket", "sponge", "colander", "net", "cheese"),
        "C",
    ),
    (
        "I grow shorter the longer I work, and I cry wax as I go. What am I?",
        "wax",
        ("pencil", "crayon", "soap", "bee", "candle"),
        "E",
    ),
    (
        "I float across the sky without wings and weep over the town without eyes. What am I?",
        "sky",
        ("bird", "cloud", "kite", "plane", "moon"),
        "B",
    ),
    (
        "My pages stay empty until you fill them, and a tiny key guards my secrets. What am I?",
        "key",
        ("book", "diary", "door", "piano", "map"),
        "B",
    ),
    (
        "I have teeth but never eat, and I tidy your hair every morning. What am I?",
        "teeth",
        ("shark", "saw", "comb", "zipper", "dentist"),
        "C",
    ),
    (
        "I follow you in the sunshine and vanish in the dark. What am I?",
        "sunshine",
        ("dog", "hat", "friend", "shadow", "reflection"),
        "D",
    ),
    (
        "I have one eye but cannot see, and I pull a thread wherever I go. What am I?",
        "eye",
        ("needle", "cyclops", "storm", "potato", "camera"),
        "A",
    ),
    (
        "The more you wash me, the smaller and smoother I get. What am I?",
        "wash",
        ("towel", "soap", "car", "stone", "sponge"),
        "B",
    ),
)
"""RiddleSense dev riddles: (stem, question_concept, five options A–E, answer key)."""

RIDDLES_TEST: tuple[tuple[str, str, tuple[str, str, str, str, str]], ...] = (
    (
        "I wear a white coat in winter and take it off in summer, yet I never leave my place. What am I?",
        "coat",
        ("bear", "mountain", "tree", "scarecrow", "house"),
    ),
    (
        "I have a spine but no bones, and I tell stories without a voice. What am I?",
        "spine",
        ("fish", "book", "cactus", "hedgehog", "radio"),
    ),
    (
        "I climb when it is hot and sink when it is cold, though I have no legs. What am I?",
        "climb",
        ("cat", "thermometer", "smoke", "balloon", "elevator"),
    ),
)
"""RiddleSense hidden-test riddles: (stem, question_concept, five options A–E); no answer key."""


def riddle_id(stem: str) -> str:
    """A 32-hex-digit id as CommonsenseQA-style files carry, derived from the stem (so it never changes)."""
    return hashlib.md5(stem.encode("utf-8")).hexdigest()


def riddlesense_record(stem: str, concept: str, options: Sequence[str], key: str | None) -> dict[str, Any]:
    """One CommonsenseQA-style record: ``{answerKey?, id, question{question_concept, choices, stem}}``."""
    question = {
        "question_concept": concept,
        "choices": [{"label": label, "text": text} for label, text in zip("ABCDE", options, strict=True)],
        "stem": stem,
    }
    record: dict[str, Any] = {} if key is None else {"answerKey": key}
    record.update(id=riddle_id(stem), question=question)
    return record


def write_riddlesense(directory: Path) -> Path:
    """``rs_dev.jsonl`` (with ``answerKey``) and ``rs_test_hidden.jsonl`` (without): one JSON object a line."""
    directory.mkdir(parents=True, exist_ok=True)
    dev = [riddlesense_record(stem, concept, options, key) for stem, concept, options, key in RIDDLES_DEV]
    test = [riddlesense_record(stem, concept, options, None) for stem, concept, options in RIDDLES_TEST]
    for name, records in (("rs_dev.jsonl", dev), ("rs_test_hidden.jsonl", test)):
        (directory / name).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return directory


# ---------------------------------------------------------------- all of them


def write_official_data(root: Path) -> Path:
    """Write every format under ``root`` in the shared sample folder's layout; return ``root``."""
    write_brainteaser(root / "brainteaser")
    write_splat(root / "splat" / "puzzles.xlsx")
    write_creativitybench(root / "creativitybench")
    write_lateval(root / "lateval")
    write_riddlesense(root / "riddlesense")
    return root
