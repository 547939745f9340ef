"""``lateralgym serve`` with a real small model as SPLAT's judge (opt-in: ``pytest --runllm``, the ``local`` extra).

The server starts SmolLM2's llama.cpp server for its judge (``--judge local/smollm2``) and stops it with
itself; a few openenv-core clients ask questions at once; every answer is in the judge's vocabulary, the
judge's calls are logged in each episode's usage, and the model's sha256 is in the run's manifest."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from lateralgym.episodes import read_log

pytestmark = pytest.mark.runllm

openenv_core = pytest.importorskip(
    "openenv.core", reason="openenv-core is not installed: pip install 'lateralgym[serve]'"
)


def test_a_served_splat_episode_is_judged_by_a_local_model(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "lateralgym.cli", "serve", "splat", "--judge", "local/smollm2", "--port", "0"]
    process = subprocess.Popen(
        [*command, "--out", str(tmp_path / "runs"), "--max-sessions", "4", "--no-cache"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        line = ""
        while not line.startswith("serving splat"):
            line = process.stdout.readline()
            assert line or process.poll() is None, process.stderr.read() if process.stderr else ""
        url = line.split(" at ", 1)[1].split(": OpenEnv", 1)[0]

        async def ask(seed: int) -> list[str]:
            async with openenv_core.GenericEnvClient(base_url=url, message_timeout_s=300) as client:
                await client.reset(seed=seed)
                labels = []
                for question in ("ask: Did anyone die?", "ask: Was it an accident?"):
                    result = await client.step({"text": question})
                    labels.append(str(result.observation["info"].get("judge_label")))
                return labels

        async def three() -> list[list[str]]:
            return await asyncio.gather(*(ask(seed) for seed in range(3)))

        answers = asyncio.run(three())
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert all(label in {"yes", "no", "irrelevant", "unclear"} for labels in answers for label in labels), answers
    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    ends = [r for r in read_log(run_dir / "steps.jsonl") if r.type == "episode_end"]
    assert len(ends) == 3 and all(end.usage["judge"].calls >= 1 for end in ends)
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["options"]["judge"] == "local/smollm2" and manifest["options"]["player"] == "remote"
    (served,) = manifest["served"]
    assert served["spec"] == "local/smollm2" and len(served["sha256"]) == 64
