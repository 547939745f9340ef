"""The CreativityBench data engine builds with a real small model end to end (opt-in: ``pytest --runllm``).

SmolLM2-135M-Instruct (served by llama-cpp-python on 127.0.0.1, see ``test_real_model.py``) annotates
a one-scene KB of three entities with ``--constrained-json`` (each stage's JSON schema sent in
``response_format``, so the server decodes under a grammar), then writes tasks (stage C task texts,
stage D and F judge verdicts). The result is read with the package's own loaders, counted by
``kb stats`` / ``tasks stats`` and played for one episode.

The checks are about the protocol, never the model's skill: every call is accounted for (written,
re-asked or skipped: nothing lost), every invalid reply has its reason counted, every stored record fits
its stage's model (an invalid answer is never written), stages A and B store answers (the schema makes
SmolLM2's replies valid JSON of the right shape), every entity stage A kept is either in the KB or
listed as dropped with a reason. The model's own skill decides the rest, and the test asserts the honest
outcome: SmolLM2 tends to repeat its first variant of a part word for word, which the paper's stages C
and E reject ("variants must differ"; re-asks at 0.7 with fresh seeds repeat it too), so the build is a
trial one (``--min-variants 1``: a copied variant is dropped, never a reason to re-ask, which the test
checks); its entities may still stay incomplete (stage G) and the KB empty; the task half then runs over
the model's KB when it holds two entities or more, and otherwise over four entities of the shipped
sample KB, so the task stages are asked of the real model either way. When SmolLM2's judge excludes
every distractor (it tends to say each should replace the gold), no task is written and the build says
so; the task texts it wrote are then packaged with the rule-based judge (``--judge rules
--only-seeded``, no further call), and those tasks are loaded, counted and played. Sizes are tiny (one
physical and one state variant per entity, golds from two strata, tiers of 1 and 2 distractors). What
the model produced is printed (``pytest -s``).
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
from lateralgym.databuild._kb_build import KB_STAGES
from lateralgym.databuild._kb_schema import AffordanceSet, EntityCandidates, Partonomy, PhysicalVariants, StateVariants
from lateralgym.databuild._kb_stats import base_entity_id, read_kb
from lateralgym.databuild._tasks_models import TaskText
from lateralgym.envs import CreativityTask, load_items
from lateralgym.episodes import run

pytestmark = pytest.mark.runllm

STAGE_MODELS: dict[str, type[BaseModel]] = {
    "entities": EntityCandidates,
    "parts": Partonomy,
    "physical": PhysicalVariants,
    "states": StateVariants,
    "affordances": AffordanceSet,
}
TASK_STAGES = ("tasks_c_text", "tasks_d_intra", "tasks_f_compare")
TASK_COUNTS = (
    r"(tasks_\w+):\s+(\d+)\s+calls,\s+(\d+)\s+cached,\s+(\d+)\s+written,\s+(\d+)\s+re-asked,"
    r"\s+(\d+)\s+invalid,\s+(\d+)\s+errored"
)
"""A task stage's line in the build's summary (rich may wrap it)."""


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
    args = ["kb", "build", "--scenes", "kitchen", "--entities-per-scene", "3", "--model", model, "--out", str(kb)]
    args += [
        "--constrained-json",
        "--min-variants",
        "1",
        "--max-physical-variants",
        "1",
        "--max-state-combinations",
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
    if stages["affordances"]["calls"] == 0:  # no entity got every part's variants: G is never asked
        assert not entities and manifest["dropped"]
    return manifest, entities


def test_a_real_model_builds_a_kb_and_tasks_that_load_and_play(
    server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The build's temperature (0.7, the paper's) is sent with each request.
    model = server.spec(max_tokens=1200)
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

    names = {e.name for e in entities}
    source = kb
    if len(names) < 2:  # no distractor possible: the task half runs over four sample entities instead
        from lateralgym.envs._samples import sample_path

        picked: dict[str, str] = {}
        for line in sample_path("kb").read_text(encoding="utf-8").splitlines():
            entity = json.loads(line)
            if entity["scene"] == "kitchen" and len(picked) < 4:
                picked.setdefault(entity["name"], line)
        source = tmp_path / "kb_sample.jsonl"
        source.write_text("".join(line + "\n" for line in picked.values()), encoding="utf-8")
    tasks_file = tmp_path / "tasks.jsonl"
    started = time.monotonic()
    code = main(
        ["tasks", "build", "--kb", str(source), "--model", model, "--out", str(tasks_file), "--constrained-json"]
        + ["--per-tier", "1", "--max-strata", "2", "--distractor-counts", "1,2", "--distractor-scope", "kb"]
        + ["--embed-field", "category", "--cluster-scope", "kb", "--concurrency", "1", "--quiet"]
    )
    tasks_minutes = (time.monotonic() - started) / 60
    output = capsys.readouterr()
    summary = f"tasks build over {source.name}: {tasks_minutes:.1f} min, exit {code}\n{output.out}{output.err[-1500:]}"
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
    if code != 0:
        # The honest outcome: nothing written, and the counts say which stage gave out (SmolLM2's judge
        # tends to say every candidate should replace the gold). The model's task texts are kept, so the
        # rule-based judge of stages D and F can package them offline, with no further call.
        assert code == 2 and "made no task" in output.err and not tasks_file.exists()
        if not texts:
            return
        ruled = tmp_path / "ruled.checkpoints"
        ruled.mkdir()
        shutil.copy(checkpoints / "tasks_c_text.jsonl", ruled / "tasks_c_text.jsonl")
        code = main(
            ["tasks", "build", "--kb", str(source), "--checkpoints", str(ruled), "--judge", "rules", "--only-seeded"]
            + ["--per-tier", "1", "--max-strata", "2", "--distractor-counts", "1,2", "--distractor-scope", "kb"]
            + ["--embed-field", "category", "--cluster-scope", "kb", "--out", str(tasks_file), "--quiet"]
        )
        output = capsys.readouterr()
        show(capsys, f"the same task texts judged by the rules: exit {code}\n{output.out}")
        if code != 0:
            assert code == 2 and "made no task" in output.err
            return
    tasks = list(load_items(tasks_file))
    assert tasks and all(isinstance(t, CreativityTask) for t in tasks)
    assert {t.task for t in tasks} <= texts  # every task is one the model wrote
    assert main(["tasks", "stats", str(tasks_file)]) == 0 and "distractor similarity" in capsys.readouterr().out

    runs = tmp_path / "runs"
    result = run("creativity-interactive", player="heuristic", items=tasks, limit=1, out=runs, progress=False)
    assert result.ran == 1 and result.errored == 0, result.first_error
