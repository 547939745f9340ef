"""Read AR-Bench's situation puzzles (``data/sp/train.json`` / ``test.json``; public repository
tmlr-group/AR-Bench, commit 9971322).

Each file is a JSON list of ``{supernatural, someone_dies, core_sentence, story_tree, bottom, surface,
key_question, index}``. ``story_tree`` is a root ``{value, children}`` whose descendants are nodes
``{value, based_question, key_question, children}``: the released trees are two levels deep with two
children per node (six nodes), each node a fact of the hidden story (``value``) and a yes/no question
whose ``yes`` uncovers it (``key_question``; ``arbench/data_generation/sp/sp_generator.py`` 20-57). The
top-level ``key_question`` list holds the same questions in arbitrary order (the generator stores
``list(set(...))``, line 147), so they are read from the tree, in its order. Ids come from the list
position (``arbench-sp-test-97``): the test file's ``index`` 98 appears twice. The split is the file's
name (``train`` / ``test``), else none.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lateralgym.envs._errors import DatasetError
from lateralgym.envs.benchmarks.arbench._schema import ARBenchPuzzle
from lateralgym.envs.records import as_list, as_mapping, brief, build, existing_file, json_list, require, require_text

__all__ = ["ARBENCH_KEYS", "is_arbench", "load_arbench", "tree_nodes"]

ARBENCH_KEYS = frozenset({"story_tree", "surface", "bottom"})
"""The keys every AR-Bench situation puzzle record holds."""


def is_arbench(path: Path, record: Any) -> bool:
    """An AR-Bench situation puzzle record: ``story_tree``, ``surface`` and ``bottom``."""
    return isinstance(record, dict) and ARBENCH_KEYS <= record.keys()


def tree_nodes(tree: Mapping[str, Any], path: Path, where: str) -> list[Mapping[str, Any]]:
    """The story tree's nodes below the root, depth first (a node before its children), in file order."""
    nodes: list[Mapping[str, Any]] = []

    def walk(node: Mapping[str, Any], field: str, depth: int) -> None:
        if depth > 8:
            raise DatasetError(path, "the story tree is deeper than 8 levels", record=where, field=field)
        children = as_list(node.get("children", []), path, where, f"{field}.children")
        for number, child in enumerate(children):
            name = f"{field}.children[{number}]"
            child = as_mapping(child, path, where, name)
            nodes.append(child)
            walk(child, name, depth + 1)

    walk(tree, "story_tree", 0)
    return nodes


def _puzzle(record: Mapping[str, Any], position: int, split: str | None, path: Path) -> ARBenchPuzzle:
    where = f"index {position}"
    tree = as_mapping(require(record, "story_tree", path, where), path, where, "story_tree")
    nodes = tree_nodes(tree, path, where)
    if not nodes:
        raise DatasetError(path, "the story tree has no node below its root", record=where, field="story_tree")
    facts = [require_text(node, "value", path, where, "story_tree node.") for node in nodes]
    keys = [require_text(node, "key_question", path, where, "story_tree node.") for node in nodes]
    number = record.get("index")
    flags = {}
    for flag in ("supernatural", "someone_dies"):
        value = record.get(flag, False)
        if not isinstance(value, bool):
            raise DatasetError(path, f"expected true or false, got {brief(value)}", record=where, field=flag)
        flags[flag] = value
    return build(
        ARBenchPuzzle,
        path,
        where,
        {
            "id": f"arbench-sp-{split or path.stem}-{position}",
            "title": "",
            "story": require_text(record, "surface", path, where),
            "answer": require_text(record, "bottom", path, where),
            "clues": tuple(facts),
            "key_questions": tuple(keys),
            "core_sentence": str(record.get("core_sentence") or tree.get("value") or ""),
            "index": number if isinstance(number, int) and not isinstance(number, bool) and number >= 0 else None,
            "split": split,
            **flags,
        },
    )


def load_arbench(path: str | Path) -> list[ARBenchPuzzle]:
    """Read an AR-Bench ``train.json`` / ``test.json`` (see the module docstring).

    Raises:
        DatasetError: a record without its story, answer or tree, a tree node without its fact or key
            question, or a flag that is not true / false (naming the file, the record and the field).
    """
    path = existing_file(path)
    split = path.stem if path.stem in ("train", "test") else None
    return [
        _puzzle(record, position, split, path) for position, record in enumerate(json_list(path, "AR-Bench puzzles"))
    ]
