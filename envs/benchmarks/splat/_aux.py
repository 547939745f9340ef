"""Auxiliary prompts from a SPLAT run: SPLAT's elicitation of lateral thinking (§5.3, Tables 5-6).

SPLAT shows that the question-and-answer play of situation puzzles helps a model on other
lateral-thinking benchmarks: the start of its games (the first five question-answer pairs of each
of ``m`` puzzles) is put before BrainTeaser and RiddleSense questions. Two variants:

* ``data`` (the paper's †): each puzzle's story and its first five questions with the judge's
  yes / no / irrelevant answers;
* ``reasoning`` (the paper's *): the same, with the player's own reasoning written before each
  question (run the SPLAT player with ``reasoning=cot`` to have it; a direct player's is empty).

The prompt is read from a run directory's step log: ``m`` puzzles drawn at random (seeded) from the
run's puzzles with an answered question, or its first ``m`` (``seed=None``), shown in the order their
episodes started (repeat 0 only), the questions in the order asked. The paper uses one puzzle chosen
at random (SPLAT §5.3), so ``--aux`` defaults to ``m = 1``, drawn with seed 0; how many question-answer
pairs the paper shows is not in its released code, and five is our choice. It holds only what the SPLAT player saw
or wrote: the story (from its first observation), its questions, its reasoning and the judge's
labels. It never holds the hidden answer, the judge's own text, hints, or explanations.
The wording is ours (the paper's prompt text is not reused).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Literal

from lateralgym.agents import LLMConfigError

__all__ = ["AUX_PAIRS", "AuxVariant", "aux_pairs", "aux_prompt"]

AuxVariant = Literal["data", "reasoning"]

AUX_PAIRS = 5
"""Question-answer pairs shown per puzzle (SPLAT §5.3: the first five)."""

_LABELS = {"yes": "Yes", "no": "No", "irrelevant": "Irrelevant"}
_STORY_START = "STORY: "
_STORY_END = "\nFind out what really happened"
_MOVE_LINE = re.compile(r"^\W*(question|q|ask|answer|explanation)\s*[:\-]", re.IGNORECASE)

_INTRO = {
    "data": (
        "Before the task, here are the openings of some situation puzzles, games of lateral thinking: a "
        "short story hides what really happened, and a player uncovers it by asking yes/no questions. "
        "Each shows the story and the player's first questions with the answers they got. Notice how the "
        "questions test the story's unspoken assumptions, and think the same way about the task that follows."
    ),
    "reasoning": (
        "Before the task, here are the openings of some situation puzzles, games of lateral thinking: a "
        "short story hides what really happened, and a player uncovers it by asking yes/no questions. "
        "Each shows the story, then for each of the player's first questions the reasoning that led to it "
        "and the answer it got. Notice how the reasoning questions the story's unspoken assumptions, and "
        "think the same way about the task that follows."
    ),
}


def _records(run_dir: Path) -> list[dict[str, Any]]:
    log = run_dir / "steps.jsonl"
    try:
        lines = log.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise LLMConfigError(
            f"aux: cannot read {log} ({exc.strerror or exc}); give the directory of a finished SPLAT run"
        ) from None
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a torn last line of a killed run
        if isinstance(record, dict):
            records.append(record)
    return records


def _story(run_dir: Path, observation: Any) -> str:
    if not isinstance(observation, dict):
        return ""
    text = observation.get("text")
    if text is None and observation.get("path"):
        try:
            text = (run_dir / str(observation["path"])).read_text(encoding="utf-8")
        except OSError:
            text = ""
    # Two finds, not a lazy regex: that rescanned the rest of the text from every "STORY: " in it.
    text = str(text or "")
    start = text.find(_STORY_START)
    end = text.find(_STORY_END, start + len(_STORY_START)) if start >= 0 else -1
    return " ".join(text[start + len(_STORY_START) : end].split()) if end >= 0 else ""


def _reasoning(step: dict[str, Any]) -> str:
    """The player's text before its move line (its reasoning), whitespace collapsed."""
    llm = step.get("llm") if isinstance(step.get("llm"), dict) else None
    lines = str((llm or {}).get("text") or "").splitlines()
    kept = []
    for line in lines:
        if _MOVE_LINE.match(line):
            break
        kept.append(line)
    return " ".join(" ".join(kept).split())


def aux_pairs(run_dir: str | os.PathLike[str], puzzles: int, *, seed: int | None = None) -> list[dict[str, Any]]:
    """``puzzles`` puzzles of a SPLAT run with their first five question-answer pairs: drawn at random
    with ``seed`` from those with an answered question, or the first ones when ``seed`` is None.

    Each is ``{"item_id", "title", "story", "pairs": [{"question", "answer", "reasoning"}, ...]}``.
    Puzzles without an answered question are skipped.

    Raises:
        LLMConfigError: no readable step log, not a SPLAT run, or no puzzle with an answered question.
    """
    root = Path(run_dir)
    starts: dict[str, dict[str, Any]] = {}
    pairs: dict[str, list[dict[str, Any]]] = {}
    for record in _records(root):
        episode = str(record.get("episode_id", ""))
        if not episode.endswith("#0"):
            continue
        if record.get("type") == "episode_start":
            if record.get("benchmark") != "splat":
                raise LLMConfigError(
                    f"aux: {root} is a {record.get('benchmark')!r} run; give the directory of a SPLAT run"
                )
            meta = record.get("meta") if isinstance(record.get("meta"), dict) else {}
            starts.setdefault(episode, {"item_id": record.get("item_id"), "title": (meta or {}).get("title") or ""})
            starts[episode]["story"] = _story(root, record.get("observation"))
            pairs.setdefault(episode, [])
        elif record.get("type") == "step" and episode in pairs and len(pairs[episode]) < AUX_PAIRS:
            action = record.get("action") if isinstance(record.get("action"), dict) else {}
            label = record.get("judge_label")
            if (action or {}).get("kind") == "ask" and label in _LABELS:
                question = " ".join(str((action or {}).get("question") or "").split())
                pairs[episode].append({"question": question, "answer": label, "reasoning": _reasoning(record)})
    candidates = [{**starts[e], "pairs": p} for e, p in pairs.items() if p and starts[e].get("story")]
    if seed is not None and len(candidates) > puzzles:
        import numpy as np

        drawn = np.random.default_rng(seed).choice(len(candidates), size=puzzles, replace=False)
        chosen = [candidates[int(n)] for n in sorted(drawn)]
    else:
        chosen = candidates[:puzzles]
    if not starts:
        raise LLMConfigError(f"aux: {root} holds no episode; give the directory of a finished SPLAT run")
    if not chosen:
        raise LLMConfigError(f"aux: no puzzle of {root} has an answered question; use a run whose player asked some")
    return chosen


def aux_prompt(
    run_dir: str | os.PathLike[str],
    *,
    puzzles: int = 1,
    variant: AuxVariant | str = "data",
    seed: int | None = None,
) -> str:
    """The auxiliary prompt built from a SPLAT run (see the module docstring).

    Args:
        run_dir: The SPLAT run directory.
        puzzles: ``m``, how many puzzles to show (fewer when the run has fewer with questions).
        variant: ``data`` (†) or ``reasoning`` (*).
        seed: Draw the ``m`` puzzles at random with this seed; None: the run's first ``m``.

    Raises:
        LLMConfigError: a bad variant or puzzle count, or a run that gives no prompt (see ``aux_pairs``).
    """
    if variant not in _INTRO:
        raise LLMConfigError(f"aux_variant must be 'data' or 'reasoning', got {variant!r}")
    if puzzles < 1:
        raise LLMConfigError(f"aux_puzzles must be at least 1, got {puzzles!r}")
    blocks = [_INTRO[variant]]
    for number, puzzle in enumerate(aux_pairs(run_dir, puzzles, seed=seed), start=1):
        title = f": {puzzle['title']}" if puzzle["title"] else ""
        lines = [f"Situation puzzle {number}{title}", f"Story: {puzzle['story']}"]
        for pair in puzzle["pairs"]:
            if variant == "reasoning":
                lines.append(f"Reasoning: {pair['reasoning'] or '(none written)'}")
            lines.append(f"Question: {pair['question']}")
            lines.append(f"Judge: {_LABELS[pair['answer']]}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
