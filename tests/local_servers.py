"""Helpers of the ``local/`` model tests: GGUF headers written for them, and watching server processes."""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path
from typing import Any

__all__ = ["alive", "wait_gone", "write_gguf"]


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _entry(key: str, kind: int, value: Any) -> bytes:
    head = _string(key) + struct.pack("<I", kind)
    if kind == 8:
        return head + _string(value)
    if kind == 9:  # an array: (item type, items)
        item, items = value
        body = b"".join(_string(v) if item == 8 else struct.pack("<f", v) for v in items)
        return head + struct.pack("<IQ", item, len(items)) + body
    return head + struct.pack({4: "<I", 10: "<Q"}[kind], value)


def write_gguf(path: Path, *, tensors: int = 1, architecture: str | None = "llama", context: int = 4096) -> Path:
    """A GGUF header as llama.cpp writes it (no tensor data: the stand-in never reads them)."""
    entries = [
        _entry("general.name", 8, "Tiny Test Model"),
        _entry("tokenizer.ggml.tokens", 9, (8, ["<s>", "</s>", "a", "b"])),
        _entry("tokenizer.ggml.scores", 9, (6, [0.0, 0.0, -1.0, -2.0])),
    ]
    if architecture:
        entries += [
            _entry("general.architecture", 8, architecture),
            _entry(f"{architecture}.context_length", 4, context),
            _entry(f"{architecture}.block_count", 4, 2),
            _entry(f"{architecture}.embedding_length", 4, 64),
            _entry(f"{architecture}.attention.head_count", 4, 4),
            _entry(f"{architecture}.attention.head_count_kv", 4, 2),
        ]
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, tensors, len(entries)) + b"".join(entries))
    return path


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by its parent) counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return True


def wait_gone(pid: int, seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    return False
