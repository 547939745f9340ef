"""The KB pipeline end to end against the loopback server: stages A-H, faults, resume, reruns for free."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _kb_replies import KBResponder
from llm_server import Fault, ScriptedLLMServer

from lateralgym.envs import dataset_stats, load_items
from lateralgym.envs.benchmarks.creativity.databuild._kb_build import (
    KB_FILE,
    KB_STAGES,
    KBBuildConfig,
    KBBuildResult,
    run_kb_build,
)
from lateralgym.envs.benchmarks.creativity.databuild._kb_dryrun import plan_kb_build
from lateralgym.envs.benchmarks.creativity.databuild._kb_stats import base_entity_id, kb_stats, read_kb

SCENES = ("kitchen", "garage")
NICE = ["nice", "-n", "10"] if shutil.which("nice") else []


def config(
    server: ScriptedLLMServer, model: str = "openai/annotator?timeout=30&max_retries=1", **fields: Any
) -> KBBuildConfig:
    settings: dict[str, Any] = {"scenes": SCENES, "entities_per_scene": 2, "base_url": server.base_url, **fields}
    return KBBuildConfig(model=model, **settings)


def build(cfg: KBBuildConfig, out: Path) -> KBBuildResult:
    return asyncio.run(run_kb_build(cfg, out, cache_dir=out / "client-cache"))


def checkpoint_keys(out: Path) -> dict[str, list[str]]:
    """Every stage file's keys, sorted (concurrent questions finish in any order), repeats kept."""
    return {
        path.stem: sorted(json.loads(line)["key"] for line in path.read_text(encoding="utf-8").split("\n") if line)
        for path in sorted((out / "checkpoints").glob("*.jsonl"))
    }


@pytest.fixture
def responder(llm_server: ScriptedLLMServer) -> KBResponder:
    scripted = KBResponder()
    llm_server.responder = scripted
    return scripted


@dataclass(frozen=True)
class CleanBuild:
    """One uninterrupted build of ``config(server)`` (the reference the resumed builds must equal)."""

    out: Path
    result: KBBuildResult
    calls: int


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CleanBuild]:
    with ScriptedLLMServer(responder=KBResponder()) as server:
        out = tmp_path_factory.mktemp("clean")
        result = build(config(server), out)
        yield CleanBuild(out, result, server.chat_calls)


def test_a_build_writes_a_kb_the_package_loads(clean: CleanBuild) -> None:
    result, entities = clean.result, read_kb(clean.out)
    assert entities == list(load_items(result.kb_path))  # the package's own loader reads it
    assert "entities" in dataset_stats(entities, path=result.kb_path).render()

    bases = Counter(base_entity_id(e.id) for e in entities)
    assert len(bases) == 4 and result.entities == 4 and not result.dropped
    assert [b.split("/")[0] for b in bases] == ["kitchen"] * 2 + ["garage"] * 2
    # A: the scripted near-duplicate ("the <first name>") is dropped in each scene.
    assert result.dedup_dropped == {"kitchen": 1, "garage": 1}
    assert len({e.name for e in entities}) == 4
    # D/F: 2 physical variants over 3 parts -> all 8; 2 states -> 8 combinations, 6 kept: 48 variants.
    assert set(bases.values()) == {48} and result.variants == 192
    first = [e for e in entities if base_entity_id(e.id) == base_entity_id(entities[0].id)]
    signatures = {tuple((p.physical.description, p.state.description) for p in e.parts) for e in first}
    assert len(signatures) == 48  # no variant twice
    for index in range(3):  # every variant of every part is used (coverage)
        assert len({e.parts[index].physical.description for e in first}) == 2
        assert len({e.parts[index].state.description for e in first}) == 2
    # B/C/E/G mapped onto the package schema.
    grip = first[0].parts[0]
    assert (grip.name, grip.connected_to, grip.function) == ("grip", ("body",), f"the grip of the {first[0].name}")
    assert grip.physical.thickness.endswith("thickness of the grip") and grip.state.accessibility
    assert [a.level for a in grip.affordances] == [0, 1, 2, 3, 4, 5]
    assert grip.affordances[0].category == "job_0" and grip.affordances[0].enabling_attributes
    # Only the questions the variants need: 2 lists + 4 entities x (1 + 3 + 3 + 3 parts x 4 part variants).
    assert clean.calls == 2 + 4 * (1 + 3 + 3 + 12)
    assert {name: c.written for name, c in result.counters.items()} == {
        "entities": 2,
        "parts": 4,
        "physical": 12,
        "states": 12,
        "affordances": 48,
    }
    for entity in entities:  # the player's view holds attributes only: no function, no use
        seen = entity.describe()
        assert all(p.function not in seen and all(a.action not in seen for a in p.affordances) for p in entity.parts)


def test_a_rerun_costs_nothing_and_writes_the_same_bytes(
    clean: CleanBuild, llm_server: ScriptedLLMServer, responder: KBResponder, tmp_path: Path
) -> None:
    shutil.copytree(clean.out, tmp_path / "kb")
    again = build(config(llm_server), tmp_path / "kb")
    assert llm_server.chat_calls == 0
    assert again.kb_path.read_bytes() == clean.result.kb_path.read_bytes()
    assert sum(c.cached for c in again.counters.values()) == clean.calls
    manifest = json.loads((tmp_path / "kb" / "build.json").read_text())
    assert manifest["entity_variants"] == 192 and manifest["stages"]["parts"]["cached"] == 4


def test_invalid_replies_are_re_asked_and_an_entity_without_complete_parts_is_dropped(
    llm_server: ScriptedLLMServer, responder: KBResponder, tmp_path: Path
) -> None:
    from _kb_replies import entity_names

    first, second = entity_names("kitchen")[:2]
    responder.spoil(f"Entity: {first} (found in", "garbage", times=1)  # its partonomy: prose once
    responder.spoil(f"Entity: {second}\nPart: body", "schema")  # one part's variants: never valid
    result = build(config(llm_server, scenes=("kitchen",)), tmp_path)
    parts, physical = result.counters["parts"], result.counters["physical"]
    assert parts.retried == 1 and parts.invalid_skipped == 0
    assert physical.invalid_skipped == 1 and physical.retried == 2
    base = f"kitchen/{second.replace(' ', '_')}"
    assert result.dropped == {base: "no valid physical or state variants for part(s) body"}
    entities = read_kb(tmp_path)
    assert {base_entity_id(e.id) for e in entities} == {f"kitchen/{n.replace(' ', '_')}" for n in (first,)} | {
        base_entity_id(e.id) for e in entities if not e.id.startswith(base)
    }
    assert not any(e.id.startswith(base + "/") for e in entities)
    stored = checkpoint_keys(tmp_path)
    assert f"{base}|body" not in stored["physical"]  # never an invalid record
    assert not any(key.startswith(base + "|") for key in stored["affordances"])  # no spend on a dropped entity
    assert json.loads((tmp_path / "build.json").read_text())["dropped"] == result.dropped


def test_a_trial_build_keeps_one_variant_of_a_part_whose_variants_repeat_and_a_paper_build_does_not(
    llm_server: ScriptedLLMServer, responder: KBResponder, tmp_path: Path
) -> None:
    from _kb_replies import entity_names

    name = entity_names("kitchen")[0]
    base = f"kitchen/{name.replace(' ', '_')}"
    responder.spoil(f"Entity: {name}\nPart: body", "repeat")  # stage C and E copy their first variant, always
    paper = build(config(llm_server, scenes=("kitchen",), entities_per_scene=1), tmp_path)
    assert paper.dropped == {base: "no valid physical or state variants for part(s) body"} and paper.variants == 0
    assert "variants must differ: two have the same summary" in " ".join(paper.counters["physical"].invalid_reasons)
    trial = build(config(llm_server, scenes=("kitchen",), entities_per_scene=1, min_variants=1), tmp_path)
    assert trial.dropped == {} and trial.entities == 1 and trial.variants >= 1
    assert trial.counters["physical"].retried == 0 and trial.counters["states"].retried == 0
    stored = checkpoint_keys(tmp_path)
    assert f"{base}|body|trial" in stored["physical"] and f"{base}|body" not in stored["physical"]
    body = next(p for e in read_kb(tmp_path) for p in e.parts if p.name == "body")
    assert body.physical.description == "light summary of the body"  # the first variant; its copy dropped
    again = build(config(llm_server, scenes=("kitchen",), entities_per_scene=1), tmp_path)
    assert again.dropped == paper.dropped  # a paper build never reuses the trial's one-variant records


def test_a_trial_build_asks_fewer_uses_per_variant_and_keeps_them_apart_from_the_paper_build(
    llm_server: ScriptedLLMServer, responder: KBResponder, tmp_path: Path
) -> None:
    trial = build(config(llm_server, scenes=("kitchen",), entities_per_scene=1, affordances_per_variant=2), tmp_path)
    assert trial.entities == 1 and not trial.dropped
    entities = read_kb(tmp_path)
    assert entities and all(len(part.affordances) == 2 for e in entities for part in e.parts)
    assert {a.level for e in entities for part in e.parts for a in part.affordances} == {0, 1}
    trial_keys = checkpoint_keys(tmp_path)["affordances"]
    assert trial_keys and all(key.endswith("|a2") for key in trial_keys)
    trial_plan = plan_kb_build(config(llm_server, scenes=("kitchen",), entities_per_scene=1), tmp_path / "fresh")
    fewer = config(llm_server, scenes=("kitchen",), entities_per_scene=1, affordances_per_variant=2)
    paper_tokens = trial_plan.stages["affordances"].completion_tokens
    assert plan_kb_build(fewer, tmp_path / "fresh").stages["affordances"].completion_tokens == paper_tokens // 3
    paper = build(config(llm_server, scenes=("kitchen",), entities_per_scene=1), tmp_path)
    assert paper.counters["affordances"].cached == 0 and paper.counters["affordances"].written == len(trial_keys)
    assert all(len(part.affordances) == 6 for e in read_kb(tmp_path) for part in e.parts)


def test_copied_format_placeholders_are_re_asked_and_never_stored(
    llm_server: ScriptedLLMServer, responder: KBResponder, tmp_path: Path
) -> None:
    from _kb_replies import entity_names

    name = entity_names("kitchen")[0]
    responder.spoil(f"Entity: {name} (found in", "placeholder", times=1)  # a part named "..."
    for task in ("physical attribute variants of a part", "state variants of a part", "affordances of a part variant"):
        responder.spoil(f"TASK: {task}\nEntity: {name}\nPart: grip", "placeholder", times=1)  # a "..." value
    result = build(config(llm_server, scenes=("kitchen",), entities_per_scene=1), tmp_path)
    assert result.entities == 1 and not result.dropped
    reasons = {stage: " ".join(c.invalid_reasons) for stage, c in result.counters.items()}
    assert "part name must contain letters or digits" in reasons["parts"]
    assert all("'...' is a placeholder, not an answer" in reasons[s] for s in ("physical", "states", "affordances"))
    assert all(result.counters[s].retried == 1 for s in ("parts", "physical", "states", "affordances"))
    stored = (tmp_path / "checkpoints").glob("*.jsonl")
    assert not any('"..."' in path.read_text() for path in stored)


def test_api_faults_drop_entities_and_a_rerun_completes_them_identically(
    clean: CleanBuild, llm_server: ScriptedLLMServer, responder: KBResponder, tmp_path: Path
) -> None:
    llm_server.configure_faults(0.15, [Fault.status(500), Fault.delay(5.0), Fault.garbage()], seed=3)
    model = "openai/annotator?timeout=1&max_retries=0"
    faulty = build(config(llm_server, model=model), tmp_path)
    errored = sum(c.errored for c in faulty.counters.values())
    # (A slow machine may time out a few unfaulted requests too: they count the same.)
    assert errored > 0 and llm_server.faults_served > 0 and faulty.variants < clean.result.variants
    assert all("no valid" in reason for reason in faulty.dropped.values())
    llm_server.configure_faults(0.0, [])
    resumed = build(config(llm_server, model="openai/annotator?timeout=30"), tmp_path)  # no timeouts under load
    # Exactly the questions that failed are asked again (counted by the client: a timed-out request
    # of the first build may reach the server late).
    asked_again = sum(c.calls for c in resumed.counters.values())
    assert asked_again == clean.calls - sum(c.written for c in faulty.counters.values())
    assert sum(c.cached for c in resumed.counters.values()) > 0
    assert resumed.kb_path.read_bytes() == clean.result.kb_path.read_bytes()
    assert checkpoint_keys(tmp_path) == checkpoint_keys(clean.out)  # nothing lost, nothing twice


def test_stats_count_the_paper_table_2_figures(clean: CleanBuild) -> None:
    stats = kb_stats(read_kb(clean.out))
    assert stats.scenes == 2
    assert stats.total.model_dump() == {
        "entities": 4,
        "variants": 192,
        "parts": 12,
        "part_variants": 48,
        "affordances": 288,
    }
    assert stats.by_level == dict.fromkeys(range(6), 48)
    assert stats.affordance_records == 192 * 3 * 6
    assert stats.by_scene["garage"].entities == 2


def test_stats_read_the_shipped_sample_kb() -> None:
    from lateralgym.envs._samples import sample_path

    entities = read_kb(sample_path("kb"))
    stats = kb_stats(entities)
    assert stats.total.entities == len({base_entity_id(e.id) for e in entities}) > 0
    assert sum(stats.by_level.values()) == stats.total.affordances > 0
    assert set(stats.by_scene) <= {e.scene for e in entities}


def cli_build(server: ScriptedLLMServer, out: Path) -> list[str]:
    """The ``lateralgym kb build`` command of ``config(server)`` into ``out``, at low CPU priority (it runs in the
    background beside the suite's tests, some of which time requests)."""
    return [
        *NICE,
        sys.executable,
        "-m",
        "lateralgym.cli",
        "kb",
        "build",
        "--scenes",
        ",".join(SCENES),
        "--entities-per-scene",
        "2",
        "--model",
        "openai/annotator?timeout=30&max_retries=1",
        "--base-url",
        server.base_url,
        "--out",
        str(out),
        "--concurrency",
        "4",
    ]


def killed_build_job(run: Callable[..., subprocess.CompletedProcess[str]], workdir: Path) -> dict[str, Any]:
    """Background job: a clean CLI build, then one SIGKILLed half-way and resumed; what each left.

    The builds run in subprocesses, so this thread holds the GIL only to serve requests.
    """
    with ScriptedLLMServer(responder=KBResponder()) as server:
        clean = run(cli_build(server, workdir / "clean"), timeout=600)
        assert clean.returncode == 0, clean.stderr[-3000:]
        clean_calls = server.chat_calls
        out = workdir / "killed"
        server.latency_s = 0.05  # slow enough to be killed mid-way
        process = subprocess.Popen(cli_build(server, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 600  # a bound against a hang, not a measurement
            while server.chat_calls < clean_calls * 3 // 2 and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            os.kill(process.pid, signal.SIGKILL)
        finally:
            process.communicate()
        stored = checkpoint_keys(out)
        facts: dict[str, Any] = {
            "killed_status": process.returncode,
            "kb_after_kill": (out / KB_FILE).exists(),
            "done_at_kill": sum(len(keys) for stage, keys in stored.items() if stage in KB_STAGES),
            "clean_calls": clean_calls,
        }
        server.latency_s = 0.0
        resumed = run(cli_build(server, out), timeout=600)
        facts.update(resumed_status=resumed.returncode, resumed_out=resumed.stdout, resumed_err=resumed.stderr[-3000:])
        if resumed.returncode == 0:
            facts["resumed_stages"] = json.loads((out / "build.json").read_text())["stages"]
            facts["same_kb"] = (out / KB_FILE).read_bytes() == (workdir / "clean" / KB_FILE).read_bytes()
            facts["same_keys"] = checkpoint_keys(out) == checkpoint_keys(workdir / "clean")
            # Again in a subprocess: this thread must import nothing while the suite runs (a test of the
            # unpickler checks that sys.modules does not grow).
            before = server.chat_calls
            rerun = run(cli_build(server, out), timeout=600)
            facts["rerun_status"] = rerun.returncode
            facts["rerun_calls"] = server.chat_calls - before
        return facts


@pytest.mark.slow
@pytest.mark.background(job=killed_build_job)
def test_a_build_killed_mid_way_resumes_with_no_record_lost_or_repeated(background_job: Callable[[], Any]) -> None:
    facts = background_job()
    assert facts["killed_status"] == -signal.SIGKILL
    assert not facts["kb_after_kill"]  # the KB is written at the end, atomically
    assert 0 < facts["done_at_kill"] < facts["clean_calls"]
    assert facts["resumed_status"] == 0, facts["resumed_err"]
    assert "4 entities (192 entity variants) written" in facts["resumed_out"]
    # The resumed build's own counts (the server may still log the killed build's last requests):
    # exactly the missing answers are asked, none stored is asked again.
    stages = facts["resumed_stages"]
    assert sum(stage["calls"] for stage in stages.values()) == facts["clean_calls"] - facts["done_at_kill"]
    assert sum(stage["cached"] for stage in stages.values()) > 0
    assert facts["same_kb"]  # the clean build's KB, byte for byte
    assert facts["same_keys"]  # nothing lost, nothing twice
    assert facts["rerun_status"] == 0 and facts["rerun_calls"] == 0  # a finished build reruns for free


def test_lists_are_capped_and_no_prompt_shows_a_value_a_model_could_copy() -> None:
    from lateralgym.envs.benchmarks.creativity.databuild._kb_prompts import (
        affordance_messages,
        entity_messages,
        partonomy_messages,
        physical_messages,
        state_messages,
    )
    from lateralgym.envs.benchmarks.creativity.databuild._kb_schema import (
        MAX_LIST,
        AffordanceDraft,
        PartSpec,
        PhysicalVariant,
        StateVariant,
    )

    use = {"description": "pry open a lid", "use_condition": "hold it", "environment_condition": "NA"}
    use |= {"recipient_condition": "a stuck lid", "enabling_attributes": ["thin edge"], "level": 1}
    use |= {"example_recipients": ["paint can"], "failure_cases": ["it bends"]}
    assert AffordanceDraft.model_validate(use).level == 1
    with pytest.raises(ValueError, match=f"at most {MAX_LIST} items"):
        AffordanceDraft.model_validate({**use, "failure_cases": ["it bends"] * (MAX_LIST + 1)})
    part = PartSpec(name="blade", function="cuts")
    physical = PhysicalVariant.model_validate(dict.fromkeys(PhysicalVariant.model_fields, "NA"))
    state = StateVariant.model_validate(dict.fromkeys(StateVariant.model_fields, "NA"))
    prompts = [
        entity_messages("kitchen", 3, []),
        partonomy_messages("kitchen", "chef's knife"),
        physical_messages("chef's knife", part),
        state_messages("chef's knife", part, "kitchen"),
        affordance_messages("chef's knife", part, physical, state, 2),
    ]
    for messages in prompts:
        text = messages[-1]["content"]
        assert '"..."' not in text and "snake_case_name" not in text, text
    assert "List exactly 2 different things" in prompts[-1][-1]["content"]
