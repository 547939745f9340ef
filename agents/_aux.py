"""Auxiliary prompts for an LLM player, built from another run's log (elicitation).

A player spec's ``aux=RUN_DIR`` option puts an auxiliary prompt, built from that run's step log, at
the end of the player's system prompt. The run's benchmark builds it (``Benchmark.prompts.aux_prompt``):
a benchmark whose play can teach a model something about other tasks offers one (the situation
puzzles' question-and-answer openings, for instance); ``aux_puzzles`` says how many of the run's
items it shows (default 1), ``aux_seed`` the seed they are drawn at random with (default 0;
``aux_seed=first``: the run's first items) and ``aux_variant`` which form it takes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from lateralgym.agents._llm_errors import LLMConfigError
from lateralgym.agents._llm_spec import OptionParser
from lateralgym.envs import ConfigError, all_benchmarks, get_benchmark

__all__ = ["AUX_OPTIONS", "DEFAULT_AUX_PUZZLES", "DEFAULT_AUX_SEED", "AuxVariant", "aux_prompt", "with_aux"]

AuxVariant = Literal["data", "reasoning"]


def _variant(value: str) -> str:
    if value not in ("data", "reasoning"):
        raise ValueError(f"expected 'data' or 'reasoning', got {value!r}")
    return value


def _puzzles(value: str) -> int:
    if not value.strip().isdigit() or int(value) < 1:
        raise ValueError(f"expected a whole number of puzzles from 1, got {value!r}")
    return int(value)


def _seed(value: str) -> int | str:
    if value.strip() == "first":
        return "first"
    if not value.strip().isdigit():
        raise ValueError(f"expected a whole number (the draw's seed) or 'first', got {value!r}")
    return int(value)


AUX_OPTIONS: dict[str, OptionParser] = {
    "aux": str,
    "aux_puzzles": _puzzles,
    "aux_variant": _variant,
    "aux_seed": _seed,
}
"""The elicitation options of a player spec: ``aux`` (a run directory), ``aux_puzzles`` (m, default 1),
``aux_variant`` (``data`` or ``reasoning``), ``aux_seed`` (the random draw's seed, default 0; ``first``:
the run's first items)."""

DEFAULT_AUX_PUZZLES = 1
"""``m`` when none is given: one item, drawn at random (the benchmark's paper may say why; its ``aux_prompt`` does)."""
DEFAULT_AUX_SEED = 0
"""The seed of the random draw of the ``m`` puzzles when none is given."""


def _benchmark_of_run(root: Path) -> str:
    """The benchmark named by a run's first log record."""
    offering = ", ".join(b.name for b in all_benchmarks() if b.prompts.gives_aux_prompt())
    log = root / "steps.jsonl"
    try:
        with log.open(encoding="utf-8") as handle:
            first = handle.readline()
    except OSError as exc:
        raise LLMConfigError(
            f"aux: cannot read {log} ({exc.strerror or exc}); give the directory of a finished run of a benchmark "
            f"that gives auxiliary prompts ({offering})"
        ) from None
    try:
        record = json.loads(first)
    except ValueError:
        record = None
    name = record.get("benchmark") if isinstance(record, dict) else None
    if not isinstance(name, str):
        raise LLMConfigError(f"aux: {root} holds no episode; give the directory of a finished run ({offering})")
    return name


def aux_prompt(
    run_dir: str | os.PathLike[str],
    *,
    puzzles: int = DEFAULT_AUX_PUZZLES,
    variant: AuxVariant | str = "data",
    seed: int | str | None = DEFAULT_AUX_SEED,
) -> str:
    """The auxiliary prompt the benchmark of the run in ``run_dir`` builds from its log (``puzzles`` of its
    items drawn with ``seed``; ``"first"`` or None: its first ones).

    Raises:
        LLMConfigError: no readable step log, a bad variant or count, or a run whose benchmark gives
            no auxiliary prompt.
    """
    root = Path(run_dir)
    name = _benchmark_of_run(root)
    try:
        drawn = None if seed in (None, "first") else int(seed)
        return get_benchmark(name).prompts.aux_prompt(root, puzzles=puzzles, variant=variant, seed=drawn)
    except LLMConfigError:
        raise
    except ConfigError as exc:
        raise LLMConfigError(f"aux: {exc}") from None


def with_aux(
    player: str,
    run_dir: str | os.PathLike[str],
    *,
    puzzles: int | None,
    variant: str | None,
    seed: int | str | None = None,
) -> str:
    """``player`` (a model spec) with the elicitation options added: ``aux`` as an absolute path, so
    the spec written to the manifest names the run wherever the run is resumed from.

    The prompt is built once here, so a bad run directory fails before anything runs.

    Raises:
        LLMConfigError: ``player`` is not a model spec, or the run gives no auxiliary prompt.
    """
    from urllib.parse import quote

    from lateralgym.agents._players import is_model_spec

    if not is_model_spec(player):
        raise LLMConfigError(f"--aux gives an auxiliary prompt to an LLM player; {player!r} is not a model spec")
    path = Path(run_dir).resolve()
    aux_prompt(
        path,
        puzzles=puzzles or DEFAULT_AUX_PUZZLES,
        variant=variant or "data",
        seed=DEFAULT_AUX_SEED if seed is None else seed,
    )
    options = [f"aux={quote(str(path), safe='/')}"]
    if puzzles is not None:
        options.append(f"aux_puzzles={puzzles}")
    if variant is not None:
        options.append(f"aux_variant={variant}")
    if seed is not None:
        options.append(f"aux_seed={seed}")
    return player + ("&" if "?" in player else "?") + "&".join(options)
