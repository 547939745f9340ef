"""Read a ``model.zip`` that ``train_ppo`` saved, without unpickling anything from it.

stable-baselines3's ``load`` rebuilds every ``:serialized:`` entry of the zip's ``data`` JSON with
cloudpickle, so a crafted ``model.zip`` runs its own code when loaded. ``read_model`` trusts only
plain JSON from ``data`` (the observation width, the number of actions, ``RowLayout``'s sizes and
starts, which SB3 writes in readable form beside each pickle) and the weights in ``policy.pth``, read
by ``torch.load(weights_only=True)`` (tensors only). ``load_policy`` builds the policy from our own
classes with those settings; the pickles, the optimizer state and ``pytorch_variables.pth`` are never
read. A file that is not such a model is one ``ModelFileError`` line naming it.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from lateralgym.envs._errors import LateralGymError

__all__ = ["ModelFileError", "SavedModel", "read_model"]

MAX_DATA = 8 << 20
"""The most bytes the ``data`` JSON may expand to (a saved policy's is a few KB)."""
MAX_WEIGHTS = 256 << 20
"""The most bytes ``policy.pth`` may expand to (the policies trained here are well under 1 MB)."""

_LAYOUT_SIZES = ("scene_size", "row_width", "text_dims", "afford_dims")
_LAYOUT_STARTS = ("text_init", "afford_init")
_ROW_LAYOUT = "<class 'lateralgym.envs.benchmarks.creativity.rl.ppo.RowLayout'>"
_KNOWN_POLICY_KWARGS = frozenset(
    {"features_extractor_class", "features_extractor_kwargs", "optimizer_class", "optimizer_kwargs"}
)
"""The optimizer's settings matter only to training, which a loaded policy does not do."""


class ModelFileError(LateralGymError, ValueError):
    """A ``model.zip`` cannot be read as a policy ``train_ppo`` saved: the message names the file."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(f"{path}: {message}; expected a model.zip written by lateralgym train ppo")


@dataclass(frozen=True)
class SavedModel:
    """What a saved policy is built from: read as plain data, never unpickled."""

    observation_size: int
    """The width of the flat observation vector."""
    n_actions: int
    """The number of discrete actions."""
    layout: dict[str, int | float] | None
    """``RowLayout``'s keyword arguments, or None for a model saved before ``RowLayout`` (SB3's flat extractor)."""
    weights: dict[str, torch.Tensor]
    """The policy's ``state_dict``."""


def read_model(path: Path) -> SavedModel:
    """The settings and weights of ``path`` (a ``model.zip``), read without unpickling anything."""
    try:
        with zipfile.ZipFile(path) as archive:
            data = _json(path, archive)
            weights = _weights(path, archive)
    except (zipfile.BadZipFile, OSError, RuntimeError, EOFError) as exc:
        raise ModelFileError(path, f"cannot read as a zip file ({type(exc).__name__}: {exc})") from exc
    model = SavedModel(
        observation_size=_observation_size(path, data.get("observation_space")),
        n_actions=_n_actions(path, data.get("action_space")),
        layout=_layout(path, data.get("policy_kwargs")),
        weights=weights,
    )
    if model.layout is not None:  # the observation is the scene block, then one row per action
        width = int(model.layout["scene_size"]) + model.n_actions * int(model.layout["row_width"])
        if model.observation_size != width:
            raise ModelFileError(
                path,
                f"its observation width {model.observation_size} is not scene_size + actions x row_width ({width})",
            )
    return model


def _part(path: Path, archive: zipfile.ZipFile, name: str, limit: int) -> bytes:
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise ModelFileError(path, f"has no {name!r} part") from None
    if info.file_size > limit:
        raise ModelFileError(path, f"its {name!r} part expands past {limit >> 20} MiB")
    return archive.read(info)


def _json(path: Path, archive: zipfile.ZipFile) -> dict[str, Any]:
    try:
        data = json.loads(_part(path, archive, "data", MAX_DATA))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ModelFileError(path, f"its 'data' part is not JSON ({type(exc).__name__})") from exc
    if not isinstance(data, dict):
        raise ModelFileError(path, "its 'data' part is not a JSON object")
    return data


def _weights(path: Path, archive: zipfile.ZipFile) -> dict[str, torch.Tensor]:
    raw = _part(path, archive, "policy.pth", MAX_WEIGHTS)
    try:  # weights_only: torch's restricted unpickler, tensors and plain containers only
        weights = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises UnpicklingError, RuntimeError, ... for what it refuses
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise ModelFileError(
            path, f"its policy.pth holds more than weights ({type(exc).__name__}: {first[:200]})"
        ) from exc
    if not isinstance(weights, dict) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in weights.items()
    ):
        raise ModelFileError(path, "its policy.pth is not a mapping of names to tensors")
    return weights


def _readable(value: object) -> dict[str, Any]:
    """The readable part of an entry: a plain JSON object, or the attributes SB3 writes beside a pickle."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if k not in (":type:", ":serialized:")}


def _whole(value: object) -> int | None:
    """A whole number written as a JSON int or as the digits SB3 writes for a NumPy integer."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 10:
        return int(value)
    return None


def _observation_size(path: Path, entry: object) -> int:
    shape = _readable(entry).get("_shape")
    size = _whole(shape[0]) if isinstance(shape, list) and len(shape) == 1 else None
    if size is None or not 0 < size < 1 << 24:
        raise ModelFileError(path, f"no flat observation width in its settings (observation_space._shape {shape!r})")
    return size


def _n_actions(path: Path, entry: object) -> int:
    readable = _readable(entry)
    n = _whole(readable.get("n"))
    if n is None or not 0 < n < 1 << 20 or _whole(readable.get("start", 0)) != 0:
        raise ModelFileError(path, f"no discrete action count in its settings (action_space.n {readable.get('n')!r})")
    return n


def _layout(path: Path, entry: object) -> dict[str, int | float] | None:
    kwargs = _readable(entry)
    unknown = sorted(set(kwargs) - _KNOWN_POLICY_KWARGS)
    if unknown:
        raise ModelFileError(path, f"its policy settings name {unknown[0]!r}, which this policy does not take")
    if "features_extractor_class" not in kwargs:
        return None
    if kwargs["features_extractor_class"] != _ROW_LAYOUT:
        raise ModelFileError(path, f"its features extractor is {str(kwargs['features_extractor_class'])[:120]!r}")
    given = kwargs.get("features_extractor_kwargs")
    if not isinstance(given, dict) or not set(given) <= {*_LAYOUT_SIZES, *_LAYOUT_STARTS}:
        raise ModelFileError(path, f"its RowLayout settings are not {', '.join(_LAYOUT_SIZES + _LAYOUT_STARTS)}")
    layout: dict[str, int | float] = {}
    for name, value in given.items():
        if name in _LAYOUT_SIZES:
            size = _whole(value) if isinstance(value, int) else None
            if size is None or not 0 <= size < 1 << 24:
                raise ModelFileError(path, f"its RowLayout {name} is {value!r}, not a size")
            layout[name] = size
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) < 1e6:
            layout[name] = float(value)
        else:
            raise ModelFileError(path, f"its RowLayout {name} is {value!r}, not a number")
    if "scene_size" not in layout or "row_width" not in layout:
        raise ModelFileError(path, "its RowLayout settings lack scene_size or row_width")
    return layout
