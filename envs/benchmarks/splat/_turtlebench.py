"""TurtleBench's human-labelled judgements, read as judge cases for ``lateralgym judges eval``.

TurtleBench (public repository mazzzystar/TurtleBench, commit 6547a5f) collects players' guesses
about situation puzzles ("turtle soup" stories), each labelled by people as confirmed by the hidden
story or not. A judge that answers SPLAT questions answers each guess against the story's hidden
answer: ``yes`` means Correct; ``no`` and ``irrelevant`` mean not (TurtleBench scores the task as
binary: ``eval.py`` 211-221 accepts either Incorrect or Unknown for both). A folder holds:

* ``stories.json``: a JSON list of stories; English ``{index, title, chinese_title, surface,
  bottom}``, Chinese ``{title, surface, bottom}``. ``surface`` is what players see, ``bottom`` the
  hidden story;
* ``cases.list``: one guess a line. English: ``guess<TAB>|<TAB>title<TAB>|<TAB>label`` with labels
  ``Correct`` / ``Incorrect`` / ``Unknown`` (split on the exact tab-pipe-tab, ``eval.py`` 29-30);
  Chinese: ``guess<TAB>title<TAB>label`` with ``T`` / ``F`` / ``N``, every space deleted from the
  line before it is split on tabs (``eval.py`` 24-25). A line that does not split, or names no
  story, is an error naming the line (the official script prints and skips it).

Every case becomes a ``JudgeCase``: the story as a ``SituationPuzzle`` (surface as the story, bottom
as the answer), the guess as the message, ``yes`` (Correct) or ``no`` (Incorrect, Unknown) as the
expected label, the story's title as the group.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lateralgym.envs._benchmark import JudgeCase
from lateralgym.envs._errors import DatasetError
from lateralgym.envs.benchmarks.splat._scene import SituationPuzzle
from lateralgym.envs.records import brief, build, json_list, read_text, require_text

__all__ = ["TURTLEBENCH_LABELS", "is_turtlebench", "load_turtlebench"]

TURTLEBENCH_LABELS = {"Correct": "yes", "Incorrect": "no", "Unknown": "no", "T": "yes", "F": "no", "N": "no"}
"""TurtleBench's labels (English and Chinese) -> the binary label a SPLAT judge's reply is compared with."""

BINARY = (("irrelevant", "no"), ("unclear", "no"))
"""A SPLAT judge's labels as TurtleBench's binary task reads them: anything but ``yes`` is not confirmed."""

_EN_SEPARATOR = "\t|\t"


def _folder(path: Path) -> Path:
    return path if path.is_dir() else path.parent


def is_turtlebench(path: Path) -> bool:
    """A TurtleBench folder (or its ``cases.list``): ``stories.json`` and ``cases.list`` side by side."""
    folder = _folder(path)
    return (folder / "stories.json").is_file() and (folder / "cases.list").is_file()


def _stories(path: Path) -> dict[str, SituationPuzzle]:
    stories: dict[str, SituationPuzzle] = {}
    language = path.parent.name or "turtlebench"
    for index, record in enumerate(json_list(path, "TurtleBench stories")):
        where = f"index {index}"
        title = require_text(record, "title", path, where)
        number = record.get("index", index + 1)
        stories[title] = build(
            SituationPuzzle,
            path,
            where,
            {
                "id": f"turtlebench-{language}-{number}",
                "title": title,
                "story": require_text(record, "surface", path, where),
                "answer": require_text(record, "bottom", path, where),
            },
        )
    if not stories:
        raise DatasetError(path, "holds no stories")
    return stories


def _split(line: str) -> list[str] | None:
    """``[guess, title, label]`` of a case line in either language's layout, or None."""
    if _EN_SEPARATOR in line:
        parts = [p.strip() for p in line.split(_EN_SEPARATOR)]
    else:  # the Chinese layout: spaces deleted, then tabs split (eval.py 24-25)
        parts = [p.strip() for p in line.replace(" ", "").split("\t")]
    return parts if len(parts) == 3 and all(parts) else None


def load_turtlebench(path: Path, items: Any = None) -> list[JudgeCase]:
    """Read a TurtleBench folder (``stories.json`` + ``cases.list``) into judge cases (see the module docstring).

    Raises:
        DatasetError: a missing file, a story without its fields, a case line that does not split into
            guess, title and label, an unknown label, or a title no story has (naming the file and line).
    """
    folder = _folder(path)
    stories = _stories(folder / "stories.json")
    compact = {title.replace(" ", ""): story for title, story in stories.items()}
    cases_path = folder / "cases.list"
    cases: list[JudgeCase] = []
    for number, line in enumerate(read_text(cases_path).splitlines(), start=1):
        if not line.strip():
            continue
        parts = _split(line)
        where = f"line {number}"
        if parts is None:
            raise DatasetError(
                cases_path,
                f"cannot split {brief(line)} into guess, title and label (English: TAB|TAB between them; "
                "Chinese: TABs)",
                record=where,
            )
        guess, title, label = parts
        if label not in TURTLEBENCH_LABELS:
            raise DatasetError(
                cases_path,
                f"unknown label {brief(label)}; expected Correct, Incorrect, Unknown (or T, F, N)",
                record=where,
            )
        story = stories.get(title) or compact.get(title.replace(" ", ""))
        if story is None:
            raise DatasetError(cases_path, f"no story titled {brief(title)} in stories.json", record=where)
        cases.append(
            JudgeCase(
                item=story,
                message=guess,
                kind="question",
                expected=TURTLEBENCH_LABELS[label],
                group=story.title,
                source=label,
                collapse=BINARY,
            )
        )
    if not cases:
        raise DatasetError(cases_path, "holds no cases")
    return cases
