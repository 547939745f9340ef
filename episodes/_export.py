"""``lateralgym export``: a run's episodes as training data, in three formats.

Every format is JSON lines, one episode a line, and loads with ``datasets.load_dataset("json",
data_files=PATH)`` as one table that reads back unchanged (fields whose shape varies are JSON
text). Episodes of one item share ``group_id`` (GRPO groups: ``lateralgym run ... --repeats R``
gives R rollouts of each item).

* ``jsonl`` (ours, complete): ``Rollout`` as it is: the chat (``messages``, of which the first
  ``prompt_messages`` are the prompt), each turn's action, validity, reward, judge label, the env's
  reply and token data (``tokens``, ``logprobs``, ``token_ids`` when recorded), the per-turn
  ``rewards``, the total ``reward``, ``solved``, the outcome, ids, seed, specs and any error.

Every format's ``outcome`` holds the benchmark's typed outcome fields only; a judge's free text
(an LLM judge's comment, which may talk about the hidden answer) is in ``judge_notes``, a column a
trainer can leave out (``Outcome.judge_prose`` names those fields).
* ``trl``: TRL's conversational prompt-completion columns: ``prompt`` (system, worked examples,
  first observation) and ``completion`` (the player's replies and the env's answers, in order),
  ``reward`` (total), ``label`` (solved: TRL's unpaired-preference column, as KTO reads it),
  ``turn_rewards``, ``logprobs`` (one list per assistant turn; empty when not recorded) and the ids.
  Extra columns reach GRPO reward functions as keyword arguments.
* ``verifiers``: verifiers' saved-rollout records (``traces.jsonl`` of ``verifiers.v1``: an
  ``Episode`` with one ``Trace`` whose message nodes form the chat, assistant nodes ``sampled``
  and, when token ids were recorded, carrying ``token_ids``, ``mask`` and ``logprobs``); reward
  ``reward``, metrics ``solved`` and ``turns``, the group in ``group.id``.

A run with per-question process rewards (a benchmark's ``reward: dense``) adds them, already inside
every ``reward`` above: ``jsonl`` gives each turn a ``process_reward``; ``trl`` adds the columns
``process_rewards`` (one per turn, 0 for a move that earned none) and ``process_reward`` (their sum);
``verifiers`` adds the metric ``process_reward`` and ``turn_process_rewards`` to the trace's ``info``.
A run without them writes exactly the columns above.
  ``verifiers.v1.utils.trace_store.read_episodes(DIR, Trace[WireTaskData, State, WireAgentConfig])``
  reads the file when it is named ``traces.jsonl`` (the default).

Errored episodes (an API outage) are left out unless ``include_errored``: their reward means nothing.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from lateralgym.episodes._rollouts import ExportError, Rollout, rollouts_from_log

__all__ = ["EXPORT_FORMATS", "ExportFormat", "ExportResult", "export_run", "trl_row", "verifiers_record"]

ExportFormat = Literal["jsonl", "trl", "verifiers"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("jsonl", "trl", "verifiers")
_DEFAULT_NAMES: dict[str, str] = {"jsonl": "rollouts.jsonl", "trl": "trl.jsonl", "verifiers": "traces.jsonl"}


class ExportResult(BaseModel):
    """What an export wrote."""

    path: Path
    """The file written."""
    format: str
    episodes: int
    """Episodes written."""
    errored_skipped: int = 0
    """Errored episodes left out (``include_errored`` off)."""


def trl_row(rollout: Rollout) -> dict[str, Any]:
    """One row of the ``trl`` format (see the module docstring)."""
    row = {
        "prompt": rollout.prompt,
        "completion": rollout.completion,
        "reward": rollout.reward,
        "label": rollout.solved,
        "turn_rewards": rollout.rewards,
        "logprobs": [turn.logprobs or [] for turn in rollout.turns],
        "group_id": rollout.group_id,
        "episode_id": rollout.episode_id,
        "item_id": rollout.item_id,
        "seed": rollout.seed,
        "benchmark": rollout.benchmark,
        "config": rollout.config,
        "outcome": rollout.outcome,
        "judge_notes": rollout.judge_notes,
    }
    process = rollout.process_rewards
    if process is not None:
        row |= {"process_rewards": process, "process_reward": math.fsum(process)}
    return row


def verifiers_record(rollout: Rollout) -> dict[str, Any]:
    """One line of the ``verifiers`` format: a ``verifiers.v1`` ``Episode`` with one ``Trace``."""
    prompt = rollout.prompt
    system = prompt[0]["content"] if prompt and prompt[0]["role"] == "system" else None
    task = {
        "type": "LateralGymTask",
        "data": {
            "id": rollout.item_id,
            "name": rollout.episode_id,
            "prompt": prompt[1:] if system is not None else prompt,
            "system_prompt": system,
            "info": {
                "config": rollout.config,
                "benchmark": rollout.benchmark,
                "mode": rollout.mode,
                "item_id": rollout.item_id,
                "seed": rollout.seed,
            },
        },
    }
    nodes: list[dict[str, Any]] = []
    assistant = iter(rollout.turns)
    for n, message in enumerate(rollout.messages):
        # Every node carries the token fields (empty when unknown), so the file is one table.
        node: dict[str, Any] = {"parent": n - 1 if n else None, "message": message, "sampled": False}
        node |= {"token_ids": [], "mask": [], "logprobs": []}
        if message["role"] == "assistant" and n >= rollout.prompt_messages:
            turn = next(assistant, None)
            node["sampled"] = True
            if turn is not None and turn.token_ids and turn.logprobs and len(turn.token_ids) == len(turn.logprobs):
                node |= {"token_ids": turn.token_ids, "mask": [True] * len(turn.token_ids), "logprobs": turn.logprobs}
        nodes.append(node)
    ok = rollout.error is None
    errors = [] if ok else [{"type": "EpisodeError", "message": rollout.error}]
    metrics = {"solved": float(rollout.solved), "turns": float(len(rollout.turns))}
    info: dict[str, Any] = {
        "run_id": rollout.run_id,
        "episode_id": rollout.episode_id,
        "player": rollout.player,
        "judge": rollout.judge,
        "outcome": rollout.outcome,
        "judge_notes": rollout.judge_notes,
        "turn_rewards": rollout.rewards,
        "turn_logprobs": [turn.logprobs or [] for turn in rollout.turns],
        "final_reply": rollout.final_reply,
    }
    process = rollout.process_rewards
    if process is not None:  # already inside the reward: a metric, not a second reward
        metrics["process_reward"] = math.fsum(process)
        info["turn_process_rewards"] = process
    trace = {
        "task": task,
        "agent": {"config": {}, "name": "player"},
        "nodes": nodes,
        "rewards": {"reward": {"score": rollout.reward, "weight": 1.0}},
        "metrics": metrics,
        "info": info,
        "is_completed": ok,
        "ok": ok,
        "stop_condition": "terminated" if rollout.terminated else "truncated" if rollout.truncated else "error",
        "errors": errors,
    }
    return {
        "id": f"{rollout.run_id}/{rollout.episode_id}",
        "env": {"id": f"lateralgym/{rollout.config}"},
        "task": task,
        "group": {"id": rollout.group_id},
        "ok": ok,
        "errors": errors,
        "traces": [trace],
    }


def _rows(rollouts: Iterable[Rollout], fmt: str) -> Iterable[dict[str, Any]]:
    for rollout in rollouts:
        if fmt == "trl":
            yield trl_row(rollout)
        elif fmt == "verifiers":
            yield verifiers_record(rollout)
        else:
            yield rollout.model_dump(mode="json")


def export_run(
    run_dir: str | Path,
    fmt: str = "jsonl",
    out: str | Path | None = None,
    *,
    include_errored: bool = False,
) -> ExportResult:
    """Write a run's episodes in ``fmt`` (``jsonl``, ``trl`` or ``verifiers``; see the module docstring).

    Args:
        run_dir: The run directory.
        fmt: The format.
        out: The file to write (default ``RUN_DIR/export/`` + ``rollouts.jsonl``, ``trl.jsonl`` or
            ``traces.jsonl``); written whole, then moved into place.
        include_errored: Keep episodes that ended in an error (``error`` set, reward meaningless).

    Raises:
        ExportError: An unknown format, no step log, a prompt that cannot be rebuilt, or an output
            that cannot be written.
    """
    if fmt not in EXPORT_FORMATS:
        raise ExportError(f"unknown export format {fmt!r}; use one of {', '.join(EXPORT_FORMATS)}")
    run_dir = Path(run_dir)
    path = Path(out) if out is not None else run_dir / "export" / _DEFAULT_NAMES[fmt]
    counts = {"kept": 0, "skipped": 0}

    def chosen() -> Iterator[Rollout]:  # streamed: a long run's episodes never sit in memory together
        for rollout in rollouts_from_log(run_dir):
            if rollout.error is not None and not include_errored:
                counts["skipped"] += 1
            else:
                counts["kept"] += 1
                yield rollout

    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("w", encoding="utf-8") as handle:
            for row in _rows(chosen(), fmt):
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ExportError(f"cannot write {path} (--out): {exc.strerror or exc}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)  # a bad log line or a prompt that cannot be rebuilt: no half file left
        raise
    return ExportResult(path=path, format=fmt, episodes=counts["kept"], errored_skipped=counts["skipped"])
