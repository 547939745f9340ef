"""The verifiers v1 plugin ``lateralgym-env``: found by verifiers' own loader, evaluated by its own CLI
(``vf-eval``) against the tests' OpenAI-compatible server, with the mean reward ``lateralgym run`` gets
from the same scripted replies."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lateralgym.episodes import read_log, run

vf = pytest.importorskip("verifiers.v1", reason="verifiers is not installed: pip install 'lateralgym[verifiers]'")
from llm_server import ScriptedLLMServer  # noqa: E402

KEY = "sk-test-verifiers"


def _player(body: dict[str, Any]) -> str:
    """A scripted model that plays every config the same way whoever asks: multiple choice by the
    question's length, situation puzzles with two questions and then an explanation from the story."""
    messages = body["messages"]
    last = str(messages[-1].get("content"))
    if "Choice:" in last or "CHOICES:" in last:
        return f"Answer: {'ABCD'[len(last) % 4]}"
    asked = sum(1 for m in messages if m["role"] == "assistant")
    opening = next(str(m.get("content")) for m in messages if m["role"] == "user")
    if asked < 1 + len(opening) % 3:  # one to three questions, by puzzle, then explanations
        return f"Question: Is round {asked + 1} about the weather?"
    story = re.search(r"STORY: (.*)", opening)
    return f"Answer: {story.group(1)[:200] if story else 'it was a dream'}"


@pytest.fixture
def scripted() -> Any:
    server = ScriptedLLMServer(responder=_player, require_key=KEY).start()
    try:
        yield server
    finally:
        server.stop()


def test_verifiers_own_loader_finds_the_plugin() -> None:
    env = vf.load_environment(vf.resolve_env_config({"taskset": {"id": "lateralgym-env", "config": "riddlesense"}}))
    assert type(env).__name__ == "LateralVerifiersEnv"
    tasks = list(env.taskset.select(vf.SelectConfig(limit=3)))
    assert len(tasks) == 3 and all(task.data.item_id and task.data.system_prompt for task in tasks)
    # the prompt is the LLM player's chat, which names no answer
    assert all("CHOICES" in str(task.data.prompt) for task in tasks)


@pytest.mark.parametrize("name", ["brainteaser", "splat"])
def test_vf_eval_scores_a_config_as_lateralgym_run_does(
    name: str, scripted: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vf_eval = shutil.which("vf-eval") or str(Path(sys.executable).with_name("vf-eval"))
    command = [vf_eval, "lateralgym-env", "--env.taskset.config", name, "-m", "scripted"]
    command += ["--client.base-url", scripted.base_url, "--client.api-key-var", "LATERALGYM_TEST_KEY"]
    command += ["--no-push", "--no-rich", "-o", str(tmp_path / "vf"), "--run.name", "check"]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={**os.environ, "LATERALGYM_TEST_KEY": KEY, "PRIME_RUNS_MODE": "disabled"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    episodes = [json.loads(line) for line in (tmp_path / "vf" / "check" / "traces.jsonl").read_text().splitlines()]
    traces = [trace for episode in episodes for trace in episode["traces"]]
    assert traces and all(episode["ok"] for episode in episodes)
    vf_rewards = {t["task"]["data"]["name"]: t["rewards"]["env_reward"]["score"] for t in traces}
    vf_turns = {t["task"]["data"]["name"]: t["metrics"]["turns"] for t in traces}

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    result = run(name, player="openai/scripted", base_url=scripted.base_url, out=tmp_path / "runs", progress=False)
    ends = [r for r in read_log(result.run_dir / "steps.jsonl") if r.type == "episode_end"]
    run_rewards = {end.episode_id: end.reward for end in ends}
    assert vf_rewards == run_rewards  # every episode, by its id: the same reward
    assert vf_turns == {end.episode_id: (end.outcome or {})["turns"] for end in ends}
    if name == "brainteaser":  # the replies decide (offline SPLAT's word-overlap judge accepts none of them)
        assert len(set(run_rewards.values())) > 1


def test_an_unknown_config_is_refused_by_vf_eval_in_its_own_words(tmp_path: Path) -> None:
    vf_eval = shutil.which("vf-eval") or str(Path(sys.executable).with_name("vf-eval"))
    command = [vf_eval, "lateralgym-env", "--env.taskset.config", "no-such-config", "-m", "scripted"]
    command += ["--client.base-url", "http://127.0.0.1:9/v1", "--no-push", "--no-rich", "-o", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode != 0
    said = " ".join((done.stdout + done.stderr).split())
    assert "unknown config 'no-such-config'" in said and "Traceback" not in said
