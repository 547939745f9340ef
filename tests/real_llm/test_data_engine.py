"""The CreativityBench data engine builds with a real small model end to end (opt-in: ``pytest --runllm``).

SmolLM2-135M-Instruct (served by llama-cpp-python on 127.0.0.1, see ``test_real_model.py``) annotates
a one-scene KB of four entities with ``--constrained-json`` (each stage's JSON schema sent in
``response_format``, its strings kept worded and printable, so the server decodes under a grammar),
then writes tasks over that KB (stage C task texts, stage D and F judge verdicts). The result is read
with the package's own loaders, counted by ``kb stats`` / ``tasks stats`` and played for one episode.

The checks are about the protocol, never the model's skill: every call is accounted for (written,
re-asked or skipped: nothing lost), every invalid reply has its reason counted, every stored record fits
its stage's model (an invalid answer is never written), every entity stage A kept is either in the KB or
listed as dropped with a reason, and the model's own KB holds at least two entities, each part with the
uses asked. The build is a trial one, sized for a 135M model on one CPU thread: one physical and one state
variant per entity, variants that repeat an earlier one dropped (``--min-variants 1``: SmolLM2 tends to
copy its first variant word for word, which the paper's stages C and E reject), one use per part variant
(``--affordances-per-variant 1``: asked for two, it wrote the same use twice in most replies). The first
asks carry a fixed seed, so a run is reproducible on one machine.

The task half runs over the model's KB, with a wider cluster diameter (SmolLM2's uses rarely come within
the paper's 0.35), golds from two strata and tiers of 1 and 2 distractors. SmolLM2's judge, at the paper's
temperature 0, tends to prefer whichever part it is shown first, so stage D may exclude every gold; no
task is then written and the build says so, and the task texts it wrote are packaged with the rule-based
judge (``--judge rules --only-seeded``, no further call). Those tasks are loaded, counted and played.
What the model produced is printed (``pytest -s``).
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from lateralgym.cli import main
from lateralgym.envs import load_items
from lateralgym.envs.benchmarks.creativity import CreativityTask
from lateralgym.envs.benchmarks.creativity.databuild._kb_build import KB_STAGES
from lateralgym.envs.benchmarks.creativity.databuild._kb_schema import (
    EntityCandidates,
    Partonomy,
    TrialPhysicalVariants,
    TrialStateVariants,
    affordance_schema,
)
from lateralgym.envs.benchmarks.creativity.databuild._kb_stats import base_entity_id, read_kb
from lateralgym.envs.benchmarks.creativity.databuild._tasks_models import TaskText
from lateralgym.episodes import run

pytestmark = pytest.mark.runllm

STAGE_MODELS: dict[str, type[BaseModel]] = {
    "entities": EntityCandidates,
    "parts": Partonomy,
    "physical": TrialPhysicalVariants,
    "states": TrialStateVariants,
    "affordances": affordance_schema(1),
}
"""What each stage's stored records must fit, in this trial build's sizes."""
TASK_STAGES = ("tasks_c_text", "tasks_d_intra", "tasks_f_compare")
TASK_COUNTS = (
    r"(tasks_\w+):\s+(\d+)\s+calls,\s+(\d+)\s+cached,\s+(\d+)\s+written,\s+(\d+)\s+re-asked,"
    r"\s+(\d+)\s+invalid,\s+(\d+)\s+errored"
)
"""A task stage's line in the build's summary (rich may wrap it)."""
TRIAL_TASKS = ["--per-tier", "1", "--max-strata", "2", "--distractor-counts", "1,2", "--diameter", "0.9"]
TRIAL_TASKS += ["--distractor-scope", "kb", "--cluster-scope", "kb"]
"""A task build sized for a KB of a few entities (one scene: scene and KB scopes are the same)."""


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from lateralgym.agents._local_model import LocalModelServer

    with LocalModelServer() as running:
        yield running


def accounted(counters: dict[str, Any]) -> bool:
    """Every call of a stage ended as a stored record, a re-ask, a skip or an API error."""
    done = counters["written"] + counters["retried"] + counters["invalid_skipped"] + counters["errored"]
    return bool(counters["calls"] == done)


def show(capsys: pytest.CaptureFixture[str], text: str) -> None:
    """Print past the capture (``pytest -s`` shows it; a later ``readouterr`` would swallow a plain print)."""
    with capsys.disabled():
        print(text)


def stored(checkpoints: Path, stage: str) -> list[dict[str, Any]]:
    path = checkpoints / f"{stage}.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line)["record"] for line in path.read_text(encoding="utf-8").splitlines() if line]


def kb_half(model: str, kb: Path) -> tuple[dict[str, Any], list[Any]]:
    """Build the KB with the real model; check the protocol; return the manifest and the entities."""
    args = ["kb", "build", "--scenes", "kitchen", "--entities-per-scene", "4", "--model", model, "--out", str(kb)]
    args += [
        "--constrained-json",
        "--min-variants",
        "1",
        "--max-physical-variants",
        "1",
        "--max-state-combinations",
        "1",
        "--affordances-per-variant",
        "1",
    ]
    assert main([*args, "--concurrency", "1", "--quiet"]) == 0
    manifest: dict[str, Any] = json.loads((kb / "build.json").read_text(encoding="utf-8"))
    stages = manifest["stages"]
    assert set(stages) == set(KB_STAGES) and manifest["settings"]["constrained_json"] == "json_object"
    for name, counters in stages.items():
        assert accounted(counters) and counters["errored"] == 0, (name, counters)
        # Each invalid reply (re-asked, or the last one of a skipped question) has its reason counted.
        assert sum(counters["invalid_reasons"].values()) == counters["retried"] + counters["invalid_skipped"]
        records = stored(kb / "checkpoints", name)
        assert len(records) == counters["written"], name  # each valid answer stored once, nothing else
        for record in records:
            STAGE_MODELS[name].model_validate(record)  # never an invalid record
    assert stages["entities"]["written"] >= 1 and stages["parts"]["written"] >= 1
    for name in ("physical", "states"):  # a trial build drops a copied variant instead of rejecting the reply
        assert not any("variants must differ" in reason for reason in stages[name]["invalid_reasons"]), stages[name]
    entities = read_kb(kb)
    kept = {base_entity_id(e.id) for e in entities}
    assert len(kept) == manifest["entities_kept"] and len(entities) == manifest["entity_variants"]
    asked = manifest["scene_entities"]["kitchen"]
    assert len(kept) + len(manifest["dropped"]) == asked >= 1  # each kept name is in the KB or explained
    assert all(reason.startswith("no valid") for reason in manifest["dropped"].values())
    # The model's own KB: at least two entities (a gold needs a distractor), each part with one use per variant.
    assert len(kept) >= 2, manifest["dropped"]
    assert all(len(part.affordances) == 1 for entity in entities for part in entity.parts)
    return manifest, entities


def test_a_real_model_builds_a_kb_and_tasks_that_load_and_play(
    server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The build's temperature (0.7, the paper's) is sent with each request.
    model = server.spec(max_tokens=1200, seed=1)
    kb = tmp_path / "kb"
    started = time.monotonic()
    manifest, entities = kb_half(model, kb)
    kb_minutes = (time.monotonic() - started) / 60
    assert main(["kb", "stats", str(kb)]) == 0
    kb_output = capsys.readouterr().out
    show(
        capsys,
        f"\nkb build: {kb_minutes:.1f} min, {manifest['entities_kept']} of {manifest['scene_entities']['kitchen']} "
        f"entities kept, dropped {manifest['dropped']}\n{kb_output}",
    )

    tasks_file = tmp_path / "tasks.jsonl"
    started = time.monotonic()
    code = main(
        ["tasks", "build", "--kb", str(kb), "--model", model, "--out", str(tasks_file), "--constrained-json"]
        + TRIAL_TASKS
        + ["--concurrency", "1", "--quiet"]
    )
    tasks_minutes = (time.monotonic() - started) / 60
    output = capsys.readouterr()
    summary = f"tasks build over the model's KB: {tasks_minutes:.1f} min, exit {code}\n{output.out}{output.err[-1500:]}"
    show(capsys, summary)
    checkpoints = tmp_path / "tasks.jsonl.checkpoints"
    for record in stored(checkpoints, "tasks_c_text"):
        TaskText.model_validate(record)  # never an invalid record
    # The counts are printed whatever came of it; every call is accounted for, none failed.
    counts = {m[0]: [int(n) for n in m[1:]] for m in re.findall(TASK_COUNTS, output.out)}
    assert set(counts) == set(TASK_STAGES) and counts["tasks_c_text"][0] >= 1, output.out
    for stage, (calls, _, written, reasked, invalid, errored) in counts.items():
        assert errored == 0 and calls == written + reasked + invalid, (stage, output.out)
    texts = {record["task"] for record in stored(checkpoints, "tasks_c_text")}
    assert texts  # the model wrote task texts over its own KB
    if code != 0:
        # The honest outcome: nothing written, and the counts say which stage gave out (SmolLM2's judge
        # tends to prefer the first part it is shown to the gold). The model's task texts are kept, so the
        # rule-based judge of stages D and F can package them offline, with no further call.
        assert code == 2 and "made no task" in output.err and not tasks_file.exists()
        ruled = tmp_path / "ruled.checkpoints"
        ruled.mkdir()
        shutil.copy(checkpoints / "tasks_c_text.jsonl", ruled / "tasks_c_text.jsonl")
        code = main(
            ["tasks", "build", "--kb", str(kb), "--checkpoints", str(ruled), "--judge", "rules", "--only-seeded"]
            + TRIAL_TASKS
            + ["--out", str(tasks_file), "--quiet"]
        )
        output = capsys.readouterr()
        show(capsys, f"the same task texts judged by the rules: exit {code}\n{output.out}")
        assert code == 0, output.err
    tasks = list(load_items(tasks_file))
    assert tasks and all(isinstance(t, CreativityTask) for t in tasks)
    assert {t.task for t in tasks} <= texts  # every task is one the model wrote
    assert main(["tasks", "stats", str(tasks_file)]) == 0 and "distractor similarity" in capsys.readouterr().out

    runs = tmp_path / "runs"
    result = run("creativity-interactive", player="heuristic", items=tasks, limit=1, out=runs, progress=False)
    assert result.ran == 1 and result.errored == 0, result.first_error
