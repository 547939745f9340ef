"""The task pipeline (stages A-H): clustering, tiers and splits, and whole builds from the CLI against the
loopback server (scripted stage replies, an invalid reply re-asked, a rerun that costs nothing, a dry run)."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from llm_server import ScriptedLLMServer

from lateralgym.cli import main as cli_main
from lateralgym.databuild import LexicalEmbedder
from lateralgym.envs import load_items, load_sample_items, read_jsonl, snake
from lateralgym.envs._splits import hashed_split
from lateralgym.envs.benchmarks.creativity import AffordanceKB, CreativityTask, split_tasks
from lateralgym.envs.benchmarks.creativity.databuild import TaskBuildConfig
from lateralgym.envs.benchmarks.creativity.databuild._cluster import (
    band_of,
    cluster_affordances,
    complete_linkage,
    use_key,
)
from lateralgym.envs.benchmarks.creativity.databuild._tasks_inputs import read_kb
from lateralgym.envs.benchmarks.creativity.databuild._tasks_pipeline import assign_splits
from lateralgym.envs.benchmarks.creativity.databuild._tiers import gold_strata

KB_SAMPLE = Path(__file__).resolve().parents[2] / "scripts" / "sample_data" / "kb_a.jsonl"


def test_complete_linkage_never_exceeds_the_diameter_cap() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(60, 8))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    groups = complete_linkage(vectors, 0.35)
    assert sorted(r for g in groups for r in g) == list(range(60))
    for group in groups:
        distances = 1 - vectors[group] @ vectors[group].T
        assert distances.max() <= 0.35 + 1e-6
    twins = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    assert complete_linkage(twins, 0.35) == [[0, 1], [2]]


def test_variants_count_a_shared_use_once_and_yield_one_gold_per_use() -> None:
    kb = read_kb([KB_SAMPLE])
    first = kb.entities[0]
    twin = first.model_copy(update={"id": first.id.rsplit("/", 1)[0] + "/9"})
    doubled = AffordanceKB(entities=(*kb.entities, twin))
    options: dict[str, Any] = {"diameter": 0.35, "field": "category", "scope": "kb"}
    plain = asyncio.run(cluster_affordances(kb, LexicalEmbedder(), **options))
    both = asyncio.run(cluster_affordances(doubled, LexicalEmbedder(), **options))
    assert [c.size for c in both.clusters] == [c.size for c in plain.clusters]
    assert len(both.refs) == len(plain.refs) + sum(len(p.affordances) for p in first.parts)
    golds = [g for refs in gold_strata(doubled, both, seed=0).values() for g in refs]
    entities = {e.id: e for e in doubled.entities}
    assert len({use_key(entities[g.entity_id], g) for g in golds}) == len(golds)
    assert len(golds) == sum(len(refs) for refs in gold_strata(kb, plain, seed=0).values())


def test_bands_are_the_papers_ranges() -> None:
    assert [band_of(n) for n in (1, 2, 4, 5, 9, 10, 50, 51)] == [
        None,
        (2, 4),
        (2, 4),
        (5, 10),
        (5, 10),
        (10, 50),
        (10, 50),
        None,
    ]


def test_split_falls_back_to_a_stable_hash_and_never_splits_a_gold_entity() -> None:
    tasks = load_sample_items("creativity")
    bare = [t.model_copy(update={"split": None}) for t in tasks]
    test, train = split_tasks(bare, "test"), split_tasks(bare, "train")
    assert len(test) + len(train) == len(bare) and test and train
    gold_ids = {t.entity(t.gold.entity).id for t in test}  # type: ignore[union-attr]
    assert not gold_ids & {t.entity(t.gold.entity).id for t in train}  # type: ignore[union-attr]
    assert hashed_split("kitchen/wooden_spoon/1") == hashed_split("kitchen/wooden_spoon/1")
    with pytest.raises(ValueError, match="train' or 'test"):
        split_tasks(bare, "dev")  # type: ignore[arg-type]
    again = assign_splits(bare, 0.25)
    share = sum(t.split == "test" for t in again) / len(again)
    assert 0.2 <= share <= 0.35


def _between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


def responder(body: dict[str, Any]) -> str:
    """Stage replies computed from the prompt: a task text, or verdicts on exactly the parts listed."""
    prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")  # a re-ask appends turns
    if "Hidden answer" in prompt:
        facts = json.loads(_between(prompt, "Hidden answer (never reveal it):\n", "\n\nWrite the task"))
        recipient = facts["example_recipients"][0] if facts["example_recipients"] else "the thing in front of me"
        return json.dumps(
            {
                "task": f"I have {recipient} here and it needs sorting out before dinner. What can I use?",
                "recipient": {"name": recipient[:60], "description": "It needs help."},
                "other_items": [{"name": "paper napkin", "description": "A folded napkin."}],
                "solution": {
                    "prepare_recipient": "Put it on the counter.",
                    "prepare_use_condition": "Pick the tool up.",
                    "prepare_environment_condition": "NA",
                    "apply_affordance": "Use it.",
                },
            }
        )
    listed = _between(prompt, "with the intended answer:\n", "\n\nFor each part")
    parts = [line[2:].split(":", 1)[0] for line in listed.splitlines()]
    verdicts = [
        {
            "part": part,
            "similar_affordance": len(part) % 2 == 0,
            "similar_affordance_reason": "Scripted.",
            "affordance": "NA",
            "gold_change": "No",
            "gold_change_reason": "Scripted.",
            "decision_difficulty": 2 if len(part) % 2 == 0 else "NA",
        }
        for part in parts
    ]
    return json.dumps({"parts": verdicts})


def build_args(tmp_path: Path, server: ScriptedLLMServer, *extra: str, entities: int = 9) -> list[str]:
    kb = tmp_path / "kb.jsonl"  # 9 entities of the sample KB: a build of about 100 questions
    lines = KB_SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)[:entities]
    kb.write_text("".join(lines), encoding="utf-8")
    return [
        "tasks",
        "build",
        "--kb",
        str(kb),
        "--checkpoints",
        str(tmp_path / "checkpoints"),
        "--model",
        "openai/annotator",
        "--base-url",
        server.base_url,
        "--embedder",
        "openai/embedder",  # the loopback server's /v1/embeddings, checkpointed like the stage answers
        "--embed-field",
        "category",
        "--cluster-scope",
        "kb",
        "--distractor-scope",
        "kb",
        "--per-tier",
        "1",
        "--out",
        str(tmp_path / "tasks.jsonl"),
        "--quiet",
        *extra,
    ]


def test_a_build_against_the_loopback_server_resumes_for_free_and_loads(
    tmp_path: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.responder = responder
    llm_server.enqueue("this is not JSON at all")  # the first question is re-asked with the error
    assert cli_main(build_args(tmp_path, llm_server)) == 0
    first_calls, embedding_calls = llm_server.chat_calls, llm_server.embedding_calls
    assert embedding_calls >= 1
    out = capsys.readouterr().out
    assert re.search(r"tasks_c_text: \d+ calls, 0 cached, \d+ written, 1 re-asked", out), out
    assert first_calls > 20
    tasks = read_jsonl(tmp_path / "tasks.jsonl", CreativityTask)
    assert tasks and {t.split for t in tasks} <= {"train", "test"}
    for task in tasks:
        gold = task.entity(task.gold.entity)
        assert gold is not None and gold.part(task.gold.part) is not None
        assert task.factors.distractor_count == len(task.entities) - 1 in (3, 6, 9, 12)
        assert {j.entity for j in task.judge_output} == {e.name for e in task.entities}
        assert not re.search(rf"\b{re.escape(gold.name)}\b", task.task, re.IGNORECASE)
        assert task.items[0].interactable and not any(i.interactable for i in task.items[1:])
        assert len({snake(e.name) for e in task.entities}) == len(task.entities)
    checkpoints = tmp_path / "checkpoints"
    assert {p.name for p in checkpoints.glob("*.jsonl")} >= {
        "tasks_c_text.jsonl",
        "tasks_d_intra.jsonl",
        "tasks_f_compare.jsonl",
    }
    stored = Counter(json.loads(line)["key"] for line in (checkpoints / "tasks_f_compare.jsonl").open())
    assert max(stored.values()) == 1  # one record per question, never a duplicate

    before = (tmp_path / "tasks.jsonl").read_bytes()
    assert cli_main(build_args(tmp_path, llm_server)) == 0
    assert llm_server.chat_calls == first_calls  # the rerun is served by the checkpoints
    assert llm_server.embedding_calls == embedding_calls
    assert (tmp_path / "tasks.jsonl").read_bytes() == before

    assert cli_main([*build_args(tmp_path, llm_server), "--out", str(tmp_path / "tasks.json")]) == 0
    assert llm_server.chat_calls == first_calls
    official = load_items(tmp_path / "tasks.json")
    assert [t.id for t in official] == [t.id for t in tasks]
    assert [t.gold for t in official] == [t.gold for t in tasks]


def test_a_dry_run_counts_calls_and_asks_nothing(
    tmp_path: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(build_args(tmp_path, llm_server, "--dry-run")) == 0
    out = capsys.readouterr().out
    assert llm_server.chat_calls == 0 and not (tmp_path / "tasks.jsonl").exists()
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.startswith("│ tasks_")}
    assert set(rows) == {"tasks_c_text", "tasks_d_intra", "tasks_f_compare"}
    calls = {stage: int(line.split("│")[2]) for stage, line in rows.items()}
    assert calls["tasks_c_text"] > 0 and calls["tasks_f_compare"] > calls["tasks_c_text"]


def test_offline_without_a_model_or_stored_answers_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["tasks", "build", "--kb", str(KB_SAMPLE), "--out", str(tmp_path / "t.jsonl"), "--quiet"]
    assert cli_main(args) == 2
    assert "give --model" in capsys.readouterr().err
    assert cli_main([*args, "--per-tier", "0"]) == 2
    assert "--per-tier: Input should be greater than or equal to 1" in capsys.readouterr().err


def test_config_defaults_are_the_papers() -> None:
    config = TaskBuildConfig()
    assert (config.per_tier, config.diameter, config.pool_size, config.counts) == (10, 0.35, 30, (3, 6, 9, 12))
    assert (config.cluster_scope, config.distractor_scope, config.judge_temperature) == ("scene", "scene", 0.0)


def _cli(args: list[str]) -> list[str]:
    return [sys.executable, "-c", f"from lateralgym.cli import main; raise SystemExit(main({args!r}))"]


def _stored(checkpoints: Path) -> dict[str, list[tuple[str, Any]]]:
    return {
        path.stem: [(e["key"], e["record"]) for e in map(json.loads, path.open(encoding="utf-8"))]
        for path in sorted(checkpoints.glob("tasks_*.jsonl"))
    }


def killed_build_job(run: Any, workdir: Path) -> dict[str, Any]:
    """Background job: a clean CLI build, then one SIGKILLed mid stage F and rerun; what each left.

    The builds run in subprocesses, so this thread holds the GIL only to serve requests.
    """
    with ScriptedLLMServer(responder=responder) as server:
        for name in ("clean", "killed"):
            (workdir / name).mkdir()
        clean = run(_cli(build_args(workdir / "clean", server)), timeout=600)
        assert clean.returncode == 0, clean.stderr[-3000:]
        args = build_args(workdir / "killed", server, "--concurrency", "4")
        server.latency_s = 0.02  # slow enough to be killed mid-way
        process = subprocess.Popen(_cli(args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        compare = workdir / "killed" / "checkpoints" / "tasks_f_compare.jsonl"
        try:
            deadline = time.monotonic() + 600  # a bound against a hang, not a measurement
            while process.poll() is None and time.monotonic() < deadline:
                if compare.exists() and compare.read_text(encoding="utf-8").count("\n") >= 10:
                    break
                time.sleep(0.02)
            process.send_signal(signal.SIGKILL)
        finally:
            process.wait(timeout=60)
        facts: dict[str, Any] = {
            "killed_status": process.returncode,
            "tasks_after_kill": (workdir / "killed" / "tasks.jsonl").exists(),
            "done_at_kill": sum(len(v) for v in _stored(workdir / "killed" / "checkpoints").values()),
            "clean_stored": sum(len(v) for v in _stored(workdir / "clean" / "checkpoints").values()),
        }
        server.latency_s = 0.0
        resumed = run(_cli(args), timeout=600)
        facts.update(resumed_status=resumed.returncode, resumed_err=resumed.stderr[-3000:])
        clean_stored = _stored(workdir / "clean" / "checkpoints")
        resumed_stored = _stored(workdir / "killed" / "checkpoints")
        facts["repeated"] = {k: len(v) - len(dict(v)) for k, v in resumed_stored.items()}
        facts["same_answers"] = {k: dict(v) for k, v in resumed_stored.items()} == {
            k: dict(v) for k, v in clean_stored.items()
        }
        facts["same_tasks"] = (workdir / "killed" / "tasks.jsonl").read_bytes() == (
            workdir / "clean" / "tasks.jsonl"
        ).read_bytes()
        return facts


@pytest.mark.slow
@pytest.mark.background(job=killed_build_job)
def test_a_killed_build_resumes_with_no_record_lost_or_repeated(background_job: Any) -> None:
    facts = background_job()
    assert facts["killed_status"] == -signal.SIGKILL
    assert not facts["tasks_after_kill"]  # tasks are written at the end, atomically
    assert 0 < facts["done_at_kill"] < facts["clean_stored"]
    assert facts["resumed_status"] == 0, facts["resumed_err"]
    assert set(facts["repeated"].values()) == {0}  # nothing stored twice
    assert facts["same_answers"]  # nothing lost: the clean build's answers, key for key
    assert facts["same_tasks"]  # and its tasks, byte for byte
