"""What a GGUF file is, read from its header: enough to refuse a file that is no model and to size a
llama.cpp server for it (``lateralgym.agents._local_model``).

GGUF (llama.cpp's model format, versions 2 and 3) starts with ``GGUF``, a version, the tensor count and
typed key-value metadata. This reads the metadata it needs (the architecture, the trained context
length and the shape of the attention cache) and skips the rest (the tokenizer's vocabulary) without
loading it. A file that is not GGUF, a GGUF without tensors (a vocabulary file) or without an
architecture is refused with one line saying what it is.
"""

from __future__ import annotations

import hashlib
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from lateralgym.agents._llm_errors import LLMConfigError

__all__ = ["GGUFInfo", "LocalModelError", "file_sha256", "read_gguf"]

MAGIC = b"GGUF"
_MAX_ENTRIES = 1_000_000
_MAX_STRING = 1 << 24
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_VOCAB_KEY = "tokenizer.ggml.tokens"
"""An array: only its length is kept."""
_WANTED_SUFFIXES = (
    ".context_length",
    ".block_count",
    ".embedding_length",
    ".attention.head_count",
    ".attention.head_count_kv",
    ".attention.key_length",
    ".attention.value_length",
)


class LocalModelError(LLMConfigError):
    """A local model cannot be served: the file is no model, the runtime or the weights are not
    installed, the port is taken, or the server would not start."""


@dataclass(frozen=True)
class GGUFInfo:
    """A GGUF model file's facts (from its header)."""

    path: Path
    size_bytes: int
    version: int
    tensors: int
    architecture: str
    name: str
    """``general.name`` when the file has one, else the file's stem."""
    context_length: int | None
    """The context the model was trained for (``<arch>.context_length``), when stated."""
    kv_bytes_per_token: int | None
    """Bytes of attention cache each token of context takes at 16 bits (keys and values, every layer),
    when the header states the shapes."""
    vocab_size: int | None = None
    """Tokens in the vocabulary (``tokenizer.ggml.tokens``), when the file lists them."""


def read_gguf(path: str | os.PathLike[str]) -> GGUFInfo:
    """The facts of a GGUF model file.

    Raises:
        LocalModelError: the file is missing, not GGUF, truncated, or holds no model (no tensors or no
            architecture); the message says which and what to give instead.
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise LocalModelError(f"{path}: no such model file; give the path of a .gguf model (llama.cpp's format)")
    try:
        with path.open("rb") as handle:
            head = handle.read(4)
            if head != MAGIC:
                raise LocalModelError(
                    f"{path} is not a GGUF model (it starts with {head!r}, not b'GGUF'): give a .gguf file in "
                    "llama.cpp's format (convert others with llama.cpp's convert_hf_to_gguf.py)"
                )
            version = _read(handle, "<I")
            if version not in (2, 3):
                raise LocalModelError(f"{path} is GGUF version {version}; llama.cpp reads versions 2 and 3")
            tensors, entries = _read(handle, "<Q"), _read(handle, "<Q")
            if entries > _MAX_ENTRIES:
                raise LocalModelError(f"{path} claims {entries} metadata entries: the file is damaged")
            meta = _metadata(handle, entries)
    except (struct.error, EOFError, UnicodeDecodeError):
        raise LocalModelError(f"{path} is a damaged or truncated GGUF file: download or convert it again") from None
    except OSError as exc:
        raise LocalModelError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    architecture = meta.get("general.architecture")
    if not tensors:
        raise LocalModelError(f"{path} holds no tensors (a vocabulary-only GGUF?): give a model's .gguf file")
    if not isinstance(architecture, str) or not architecture:
        raise LocalModelError(f"{path} names no architecture (general.architecture): it is not a llama.cpp model")
    return GGUFInfo(
        path=path,
        size_bytes=path.stat().st_size,
        version=version,
        tensors=tensors,
        architecture=architecture,
        name=str(meta.get("general.name") or path.stem),
        context_length=_positive(meta.get(f"{architecture}.context_length")),
        kv_bytes_per_token=_kv_bytes(meta, architecture),
        vocab_size=_positive(meta.get(_VOCAB_KEY)),
    )


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read(handle: IO[bytes], fmt: str) -> Any:
    size = struct.calcsize(fmt)
    data = handle.read(size)
    if len(data) < size:
        raise EOFError
    return struct.unpack(fmt, data)[0]


def _string(handle: IO[bytes], keep: bool = True) -> str:
    length = _read(handle, "<Q")
    if length > _MAX_STRING:
        raise EOFError
    if not keep:
        handle.seek(length, os.SEEK_CUR)
        return ""
    data = handle.read(length)
    if len(data) < length:
        raise EOFError
    return data.decode("utf-8")


def _value(handle: IO[bytes], kind: int, keep: bool) -> Any:
    if kind in _SCALARS:
        return _read(handle, _SCALARS[kind])
    if kind == _STRING:
        return _string(handle, keep)
    if kind == _ARRAY:
        item, count = _read(handle, "<I"), _read(handle, "<Q")
        if item in _SCALARS:  # skipped in one seek: a vocabulary's scores hold thousands
            handle.seek(struct.calcsize(_SCALARS[item]) * count, os.SEEK_CUR)
        else:
            for _ in range(count):
                _value(handle, item, keep=False)
        return count if keep else None  # an array kept is known by its length
    raise EOFError  # an unknown type: the rest cannot be read


def _metadata(handle: IO[bytes], entries: int) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for _ in range(entries):
        key = _string(handle)
        kind = _read(handle, "<I")
        keep = key.startswith("general.") or key.endswith(_WANTED_SUFFIXES) or key == _VOCAB_KEY
        value = _value(handle, kind, keep)
        if keep:
            meta[key] = value
    return meta


def _positive(value: Any) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _kv_bytes(meta: dict[str, Any], architecture: str) -> int | None:
    layers = _positive(meta.get(f"{architecture}.block_count"))
    width = _positive(meta.get(f"{architecture}.embedding_length"))
    heads = _positive(meta.get(f"{architecture}.attention.head_count"))
    kv_heads = _positive(meta.get(f"{architecture}.attention.head_count_kv")) or heads
    if not (layers and width and heads and kv_heads):
        return None
    key = _positive(meta.get(f"{architecture}.attention.key_length")) or width // heads
    value = _positive(meta.get(f"{architecture}.attention.value_length")) or width // heads
    return layers * kv_heads * (key + value) * 2
