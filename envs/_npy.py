"""Read a ``.npy`` file without letting it run code: the one reader of pickled release arrays.

``np.load(allow_pickle=True)`` would run whatever a crafted pickle asks for. ``read_npy`` reads the
header with ``numpy.lib.format``, loads plain arrays with ``allow_pickle=False``, and feeds object
arrays' pickles to an unpickler that admits plain data and NumPy's array and scalar rebuild only,
after a walk that refuses memo slots and lengths a small file cannot hold. Anything else is a
one-line ``DatasetError`` naming the refused global; nothing is imported by name, nothing runs.
"""

from __future__ import annotations

import importlib
import io
import math
import os
import pickle
import pickletools
from pathlib import Path
from typing import IO, Any

import numpy as np
from numpy.lib import format as npy_format

from lateralgym.envs._errors import DatasetError
from lateralgym.envs._samples import plain

NPY_MAGIC = b"\x93NUMPY"
"""The first bytes of every ``.npy`` file."""


def _admitted_globals() -> dict[tuple[str, str], Any]:
    """The only globals a release's pickle may name: NumPy's array and scalar rebuild.

    The release's object arrays hold dicts of strings, numbers and lists, which pickle needs no
    global for; the array around them is ``_reconstruct(ndarray, shape, dtype)`` plus its state.
    ``scalar`` rebuilds a NumPy number or string inside a record (files written from pandas hold
    them); it only decodes bytes under a dtype. Files written by NumPy 1 name ``numpy.core``, by
    NumPy 2 ``numpy._core``: both resolve to this NumPy's functions, nothing is imported by name.
    """
    try:
        multiarray = importlib.import_module("numpy._core.multiarray")  # NumPy 2
    except ImportError:  # NumPy 1
        multiarray = importlib.import_module("numpy.core.multiarray")
    admitted: dict[tuple[str, str], Any] = {("numpy", "ndarray"): np.ndarray, ("numpy", "dtype"): np.dtype}
    for module in ("numpy.core.multiarray", "numpy._core.multiarray"):
        admitted[(module, "_reconstruct")] = multiarray._reconstruct
        admitted[(module, "scalar")] = multiarray.scalar
    return admitted


_ADMITTED_GLOBALS = _admitted_globals()
_MEMO_PUTS = frozenset({"PUT", "BINPUT", "LONG_BINPUT"})


class _DataOnlyUnpickler(pickle.Unpickler):
    """Unpickles plain data and NumPy arrays; any other global is refused before it is even imported."""

    def __init__(self, payload: bytes, path: Path) -> None:
        super().__init__(io.BytesIO(payload), encoding="ASCII")  # np.load's default, for Python 2 pickles
        self._path = path

    def find_class(self, module: str, name: str) -> Any:
        admitted = _ADMITTED_GLOBALS.get((module, name))
        if admitted is None:
            raise DatasetError(
                self._path,
                f"refused to load: its pickle asks for {plain(f'{module}.{name}')}, but a release .npy holds "
                "only dicts, lists, text, numbers and NumPy arrays; nothing was run. Is it the release file?",
            )
        return admitted

    def persistent_load(self, pid: Any) -> Any:
        raise DatasetError(
            self._path, "refused to load: its pickle asks for an outside object (a persistent id); nothing was run"
        )


def _check_pickle(payload: bytes, path: Path) -> None:
    """Walk the pickle's instructions without running them; refuse one that would make the unpickler
    allocate without bound before ``find_class`` is asked: a memo slot past the number of instructions
    (``LONG_BINPUT 4000000000`` alone reserves 64 GB) or a length past the end of the file."""
    highest = count = 0
    for opcode, arg, _ in pickletools.genops(payload):  # ValueError when a length overruns the payload
        count += 1
        if opcode.name in _MEMO_PUTS and isinstance(arg, int):
            highest = max(highest, arg)
    if highest >= count:
        raise DatasetError(
            path, f"refused to load: its pickle writes memo slot {highest} but holds only {count} instructions"
        )


def read_npy(path: Path) -> np.ndarray:
    """A ``.npy`` array, read without running anything the file holds.

    Plain arrays (the ``<U21`` answer files) load with ``allow_pickle=False``. Object arrays (the
    puzzle files: dicts in a pickle) go through an unpickler that admits only plain data and
    NumPy's array rebuild (``_admitted_globals``); any other global is a ``DatasetError`` naming it.
    """
    try:
        with path.open("rb") as handle:
            return _read_npy(handle, path)
    except DatasetError:
        raise
    except OSError as exc:
        raise DatasetError(path, f"cannot read the file ({exc.strerror or exc}); check the path") from exc
    except Exception as exc:  # numpy and pickle raise many types for truncated or foreign files
        reason = " ".join(str(exc).split())[:200]
        raise DatasetError(
            path, f"cannot read as a numpy file ({type(exc).__name__}: {reason}); is it truncated or not a .npy file?"
        ) from exc


def _read_npy(handle: IO[bytes], path: Path) -> np.ndarray:
    if handle.read(2) == b"PK":
        raise DatasetError(path, "not a numpy array but a zip archive (an .npz?); give the .npy release file")
    handle.seek(0)
    version = npy_format.read_magic(handle)
    if version == (1, 0):
        shape, _, dtype = npy_format.read_array_header_1_0(handle)
    elif version == (2, 0):
        shape, _, dtype = npy_format.read_array_header_2_0(handle)
    else:
        raise DatasetError(path, f"is .npy format version {version[0]}.{version[1]}; expected 1.0 or 2.0")
    if not dtype.hasobject:
        declared = math.prod(shape) * dtype.itemsize
        held = os.fstat(handle.fileno()).st_size - handle.tell()
        if declared > held:
            raise DatasetError(path, f"is truncated: its header promises {declared} bytes of data, it holds {held}")
        handle.seek(0)
        array: object = npy_format.read_array(handle, allow_pickle=False)
    else:
        payload = handle.read()
        _check_pickle(payload, path)
        array = _DataOnlyUnpickler(payload, path).load()
    if not isinstance(array, np.ndarray):
        raise DatasetError(path, f"not a numpy array (got {type(array).__name__}); give the .npy release file")
    if array.shape != shape or array.dtype != dtype:
        raise DatasetError(
            path, f"its header says {dtype} {shape} but it holds an array of {array.dtype} {array.shape}"
        )
    return array
