"""A checkpoint folder's manifest: what the model in it was trained from, on what, and how.

``lateralgym train sft`` and ``train grpo`` write ``manifest.json`` next to the final ``model/``; another
run continues from the folder (``train grpo --init FOLDER``) only when the manifest names the same base
model and config, and none of its held-out items is among the items the folder's model was trained on
(``trained_items.json``, every stage of the chain). Nothing in a folder that does not fit is overwritten.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lateralgym.envs import EpisodeConfig
from lateralgym.integrations.grpo._settings import GRPOError

__all__ = ["MANIFEST", "CheckpointError", "CheckpointManifest", "read_checkpoint", "trained_items", "write_checkpoint"]

MANIFEST = "manifest.json"
TRAINED = "trained_items.json"
MODEL_DIR = "model"


class CheckpointError(GRPOError):
    """A checkpoint folder that cannot be continued from here (no manifest, another model or config)."""


class CheckpointManifest(BaseModel):
    """``manifest.json`` of a checkpoint folder."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    stage: Literal["sft", "grpo"]
    """What wrote the folder."""
    config: str
    benchmark: str
    mode: str | None
    model: str
    """The base model spec the chain started from (``local/smollm2``, a folder)."""
    init: str | None = None
    """The checkpoint folder this stage continued from (None: the base model)."""
    data: str
    """The dataset the items came from (``sample``: the config's shipped sample)."""
    split: Literal["train"] = "train"
    """The side of the split every trained item is on."""
    trained_items: int
    """Items trained on, over the whole chain (their ids: ``trained_items.json``)."""
    trained_sha256: str
    """SHA-256 of the sorted ids, one a line."""
    examples_sha256: str | None = None
    """SFT: the SHA-256 of the examples file it trained on."""
    seed: int
    settings: dict[str, Any] = Field(default_factory=dict)
    versions: dict[str, str] = Field(default_factory=dict)


def _digest(ids: Sequence[str]) -> str:
    return hashlib.sha256("".join(f"{i}\n" for i in sorted(ids)).encode("utf-8")).hexdigest()


def data_name(config: EpisodeConfig) -> str:
    """What ``CheckpointManifest.data`` says of the config's items."""
    return str(config.dataset) if config.dataset else "sample"


def write_checkpoint(
    out: Path,
    *,
    stage: Literal["sft", "grpo"],
    config: EpisodeConfig,
    model: str,
    trained: Sequence[str],
    seed: int,
    settings: dict[str, Any],
    versions: dict[str, str],
    init: Path | None = None,
    examples_sha256: str | None = None,
) -> CheckpointManifest:
    """Write ``manifest.json`` and ``trained_items.json`` (``trained``: this stage's items and ``init``'s)."""
    ids = sorted(set(trained) | set(trained_items(init) if init is not None else ()))
    manifest = CheckpointManifest(
        stage=stage,
        config=config.name,
        benchmark=config.benchmark,
        mode=config.mode,
        model=model,
        init=str(init) if init is not None else None,
        data=data_name(config),
        trained_items=len(ids),
        trained_sha256=_digest(ids),
        examples_sha256=examples_sha256,
        seed=seed,
        settings=settings,
        versions=versions,
    )
    (out / TRAINED).write_text(json.dumps(ids) + "\n", encoding="utf-8")
    (out / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return manifest


def trained_items(folder: Path) -> list[str]:
    """The items a checkpoint folder's model was trained on (every stage of its chain)."""
    return list(json.loads((folder / TRAINED).read_text(encoding="utf-8")))


def read_checkpoint(
    path: Path, config: EpisodeConfig, model: str, held_out: Sequence[str] = ()
) -> tuple[Path, CheckpointManifest]:
    """The run folder ``path`` names (itself, or the folder holding it as ``model/``) and its manifest,
    checked against this run.

    Raises:
        CheckpointError: no such folder or manifest, one that names another base model or config, or a
            model trained on one of ``held_out`` (this run's held-out items).
    """
    folder = path.parent if path.name == MODEL_DIR and (path.parent / MANIFEST).is_file() else path
    where = f"--init {path}"
    try:
        manifest = CheckpointManifest.model_validate_json((folder / MANIFEST).read_text(encoding="utf-8"))
        ids = trained_items(folder)
    except OSError:
        raise CheckpointError(
            f"{where}: no {MANIFEST} there: give a run folder that lateralgym train sft or train grpo wrote"
        ) from None
    except (ValidationError, ValueError):
        raise CheckpointError(f"{where}: its {MANIFEST} or {TRAINED} is damaged: train that stage again") from None
    if manifest.model != model:
        raise CheckpointError(
            f"{where} was trained from model {manifest.model!r}, not {model!r}: give --model {manifest.model} "
            f"or a checkpoint of {model}"
        )
    if (manifest.config, manifest.benchmark) != (config.name, config.benchmark):
        raise CheckpointError(
            f"{where} was trained on config {manifest.config!r}, not {config.name!r}: give --config "
            f"{manifest.config} or a checkpoint of {config.name}"
        )
    if len(ids) != manifest.trained_items or _digest(ids) != manifest.trained_sha256:
        raise CheckpointError(f"{where}: {TRAINED} does not match its {MANIFEST}: train that stage again")
    if not (folder / MODEL_DIR / "config.json").is_file():
        raise CheckpointError(f"{where}: no model in {folder / MODEL_DIR}: the run did not finish; train it again")
    seen = sorted(set(held_out) & set(ids))
    if seen:
        raise CheckpointError(
            f"{where} was trained on {len(seen)} of this run's held-out items (first {seen[0]!r}): evaluate on "
            "items it never saw (the dataset it was trained with, --data)"
        )
    return folder, manifest
