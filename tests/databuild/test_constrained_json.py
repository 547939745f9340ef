"""``--constrained-json``: each LLM stage sends its pydantic model's JSON schema in ``response_format``.

Checked on the requests the loopback server recorded: the schema sent is ``Model.model_json_schema()``
of the stage's model, in the form asked for (``json_object``, llama.cpp's, with a ``pattern`` on every
plain string: ``grammar_strings``); without the option no request carries a ``response_format`` (the
paper's prompts alone).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from _kb_replies import KBResponder
from llm_server import ScriptedLLMServer
from test_llm_stage import MESSAGES, PartName, client

from lateralgym.cli import main
from lateralgym.databuild import CheckpointStore, StageCounters, ask_json, extract_json_object
from lateralgym.databuild._llm import grammar_strings, response_format_for
from lateralgym.envs import load_items
from lateralgym.envs.benchmarks.creativity.databuild._kb_schema import (
    AffordanceSet,
    EntityCandidates,
    Partonomy,
    PhysicalVariants,
    StateVariants,
)
from lateralgym.envs.benchmarks.creativity.databuild._tasks_models import TaskText, verdicts_schema

KB_SCHEMAS = {
    "list household entities": EntityCandidates,
    "decompose an entity into parts": Partonomy,
    "physical attribute variants of a part": PhysicalVariants,
    "state variants of a part": StateVariants,
    "affordances of a part variant": AffordanceSet,
}
"""The model each KB stage's reply must validate against, by the ``TASK:`` line of its prompt."""


def ask(server: ScriptedLLMServer, store: CheckpointStore, form: Any, counters: StageCounters) -> PartName | None:
    async def asked() -> PartName | None:
        llm = client(server)
        try:
            return await ask_json(
                llm,
                stage="parts",
                key="k",
                messages=MESSAGES,
                schema=PartName,
                store=store,
                counters=counters,
                temperature=0.7,
                constrained=form,
            )
        finally:
            await llm.aclose()

    return asyncio.run(asked())


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        (None, None),
        ("json_object", {"type": "json_object", "schema": grammar_strings(PartName.model_json_schema())}),
        (
            "json_schema",
            {"type": "json_schema", "json_schema": {"name": "PartName", "schema": PartName.model_json_schema()}},
        ),
    ],
)
def test_ask_json_sends_the_models_schema_in_the_form_asked_and_still_re_asks(
    form: Any, expected: dict[str, Any] | None, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.enqueue('{"name": "b", "count": 1}', '{"name": "bowl", "count": 2}')
    counters = StageCounters("parts")
    with CheckpointStore(tmp_path) as store:
        assert ask(llm_server, store, form, counters) == PartName(name="bowl", count=2)
    first, reask = (request.body for request in llm_server.requests)
    assert first.get("response_format") == expected and reask.get("response_format") == expected
    assert "name: String should have at least 2 characters" in reask["messages"][-1]["content"]
    assert first["temperature"] == 0.7
    # Why the reply was invalid is counted, for the build's report.
    assert counters.invalid_reasons == {"name: String should have at least 2 characters": 1}


def test_a_raw_line_break_inside_a_string_is_read() -> None:
    # llama-cpp-python's JSON grammar lets a model write one; Python's lenient decoder keeps it.
    assert extract_json_object('{"summary": "a flat\nsteel blade"}') == {"summary": "a flat\nsteel blade"}


def string_schemas(node: Any) -> list[dict[str, Any]]:
    """Every string schema inside a JSON schema."""
    if isinstance(node, list):
        return [found for item in node for found in string_schemas(item)]
    if not isinstance(node, dict):
        return []
    found = [node] if node.get("type") == "string" else []
    return found + [inner for value in node.values() for inner in string_schemas(value)]


ALL_SCHEMAS = [*KB_SCHEMAS.values(), TaskText, verdicts_schema(("handle", "blade"))]


@pytest.mark.parametrize("model", ALL_SCHEMAS, ids=lambda m: m.__name__)
def test_llama_cpps_form_keeps_strings_worded_printable_and_within_their_length(model: Any) -> None:
    import re

    sent = response_format_for(model, "json_object")["schema"]
    strings = string_schemas(sent)
    assert strings and all({"pattern", "enum", "const"} & s.keys() for s in strings)
    for string in strings:
        if "pattern" not in string:
            continue
        pattern = re.compile(string["pattern"])
        high = string.get("maxLength")
        assert pattern.fullmatch("a flat steel blade, 2 mm thick") and pattern.fullmatch(
            "NA" * string.get("minLength", 1)
        )
        assert pattern.fullmatch("...no, the handle with a grip") and pattern.fullmatch(
            "x" * min((high or 600) - 4, 500)
        )
        assert bool(pattern.fullmatch("")) == (string.get("minLength", 0) == 0)  # "" only where the model takes it
        for junk in ("...", "],", "* *", "a flat\nblade", 'a "quoted" word', "back\\slash"):
            assert not pattern.fullmatch(junk), (junk, string)
        assert high is None or not pattern.fullmatch("x" * (high + 1))
    # The model is untouched: what the schema said before, it still says, besides the pattern.
    plain = model.model_json_schema()
    assert [{k: v for k, v in s.items() if k != "pattern"} for s in strings] == string_schemas(plain)


@pytest.mark.parametrize("model", ALL_SCHEMAS, ids=lambda m: m.__name__)
def test_llama_cpps_converter_takes_every_stage_schema(model: Any) -> None:
    # llama-cpp-python falls back to a schema-free JSON grammar, silently, when its converter fails.
    grammar = pytest.importorskip("llama_cpp.llama_grammar", reason="the local extra is not installed")
    converter = grammar.SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    schema = response_format_for(model, "json_object")["schema"]
    converter.visit(converter.resolve_refs(schema, ""), "")
    rules = converter.format_grammar()
    assert "char ::=" not in rules  # every string goes through its pattern, none through the any-character rule


def kb_build(server: ScriptedLLMServer, out: Path, *extra: str) -> int:
    return main(
        ["kb", "build", "--scenes", "kitchen", "--entities-per-scene", "2", "--model", "openai/annotator?timeout=30"]
        + ["--base-url", server.base_url, "--out", str(out), "--quiet", "--concurrency", "4", *extra]
    )


def stage_of(body: dict[str, Any]) -> str:
    return str(body["messages"][1]["content"]).splitlines()[0].removeprefix("TASK: ")


@pytest.mark.parametrize("form", ["json_object", "json_schema"])
def test_kb_build_sends_each_stages_schema(form: str, llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.responder = KBResponder()
    flag = ["--constrained-json"] if form == "json_object" else ["--constrained-json", form]  # bare: json_object
    assert kb_build(llm_server, tmp_path / "kb", *flag, "--max-physical-variants", "1") == 0
    bodies = [r.body for r in llm_server.requests if r.body and "messages" in r.body]
    assert {stage_of(b) for b in bodies} == set(KB_SCHEMAS)
    for body in bodies:
        schema = KB_SCHEMAS[stage_of(body)].model_json_schema()
        sent = body["response_format"]
        assert sent == (
            {"type": "json_object", "schema": grammar_strings(schema)}
            if form == "json_object"
            else {"type": "json_schema", "json_schema": {"name": KB_SCHEMAS[stage_of(body)].__name__, "schema": schema}}
        )
    affordance = KB_SCHEMAS["affordances of a part variant"].model_json_schema()
    level = affordance["$defs"]["AffordanceDraft"]["properties"]["level"]
    assert level["enum"] == [0, 1, 2, 3, 4, 5]  # a grammar cannot write another level
    listed = affordance["properties"]["affordances"]
    assert listed["minItems"] == 6 == listed["maxItems"]


def test_without_the_option_no_request_carries_a_response_format(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.responder = KBResponder()
    assert kb_build(llm_server, tmp_path / "kb", "--max-physical-variants", "1", "--max-state-combinations", "1") == 0
    bodies = [r.body for r in llm_server.requests if r.body and "messages" in r.body]
    assert bodies and not any("response_format" in b for b in bodies)


def test_a_verdict_schema_names_exactly_the_parts_asked_about() -> None:
    schema = verdicts_schema(("blade", "handle")).model_json_schema()
    parts = schema["properties"]["parts"]
    assert (parts["minItems"], parts["maxItems"], parts["items"]) == (2, 2, False)
    assert [item["properties"]["part"]["const"] for item in parts["prefixItems"]] == ["blade", "handle"]
    assert parts["prefixItems"][0]["properties"]["decision_difficulty"]["anyOf"][0]["enum"] == [1, 2, 3, 4, 5]
    assert "$defs" not in schema  # inlined: a converter without $ref support reads it too


def _max_lengths(schema: object) -> list[int]:
    if isinstance(schema, dict):
        own = [v for k, v in schema.items() if k == "maxLength"]
        return own + [n for v in schema.values() for n in _max_lengths(v)]
    return [n for v in schema for n in _max_lengths(v)] if isinstance(schema, list) else []


def test_no_schema_sent_caps_a_string_above_200_characters_and_longer_caps_are_still_checked() -> None:
    # llama-cpp-python's server crashed on caps of 800 and 1200 (N nested grammar rules each).
    for model in [*KB_SCHEMAS.values(), TaskText, verdicts_schema(("blade",))]:
        assert max(_max_lengths(model.model_json_schema()), default=0) <= 200, model.__name__
    solution = dict.fromkeys(
        ("prepare_recipient", "prepare_use_condition", "prepare_environment_condition", "apply_affordance"), "Do it."
    )
    text = {"task": "I need to " + "x" * 1200, "recipient": {"name": "jar"}, "solution": solution}
    with pytest.raises(ValueError, match="at most 1200 characters"):
        TaskText.model_validate(text)
    assert TaskText.model_validate({**text, "task": "I need to open a stuck jar lid."}).recipient.name == "jar"


def test_tasks_build_sends_each_stages_schema_and_takes_trial_sizes(
    llm_server: ScriptedLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_tasks_pipeline import _between, build_args, responder

    llm_server.responder = responder
    args = build_args(tmp_path, llm_server, "--constrained-json", "json_schema")
    assert main([*args, "--distractor-counts", "1,2", "--max-strata", "1"]) == 0
    assert "1 strata" in capsys.readouterr().out
    bodies = [r.body for r in llm_server.requests if r.body and "messages" in r.body]
    assert bodies
    for body in bodies:
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if "Hidden answer" in prompt:
            expected: type[Any] = TaskText
        else:
            listed = _between(prompt, "with the intended answer:\n", "\n\nFor each part")
            expected = verdicts_schema(tuple(line[2:].split(":", 1)[0] for line in listed.splitlines()))
        assert body["response_format"] == {
            "type": "json_schema",
            "json_schema": {"name": expected.__name__, "schema": expected.model_json_schema()},
        }
    tasks = list(load_items(tmp_path / "tasks.jsonl"))
    assert tasks and {t.factors.distractor_count for t in tasks} <= {1, 2}
    assert len({(t.factors.cluster_band, t.factors.gold_level) for t in tasks}) == 1  # one stratum


def test_a_build_that_makes_no_task_prints_its_counts_first(
    llm_server: ScriptedLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_tasks_pipeline import build_args, responder

    llm_server.responder = responder
    assert main([*build_args(tmp_path, llm_server, entities=1)]) == 2  # no entity to draw distractors from
    out, err = capsys.readouterr()
    assert "made no task" in err and "--distractor-counts" in err
    assert "H  0 tasks" in out and "tasks_c_text:" in out  # the counts say which stage gave out
    assert not (tmp_path / "tasks.jsonl").exists()


def test_distractor_counts_must_be_positive(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    from test_tasks_pipeline import build_args

    with pytest.raises(SystemExit):
        main([*build_args(tmp_path, llm_server), "--distractor-counts", "one"])
    assert main([*build_args(tmp_path, llm_server), "--distractor-counts", "0,3"]) == 2
    assert llm_server.chat_calls == 0


def test_a_build_reports_why_replies_were_invalid(
    llm_server: ScriptedLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from _kb_replies import entity_names

    responder = KBResponder()
    responder.spoil(f"Entity: {entity_names('kitchen')[0]}\nPart: body", "schema")  # never valid
    llm_server.responder = responder
    assert kb_build(llm_server, tmp_path / "kb", "--max-physical-variants", "1", "--max-state-combinations", "1") == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("physical: invalid replies: "))
    reasons = json.loads((tmp_path / "kb" / "build.json").read_text())["stages"]["physical"]["invalid_reasons"]
    assert sum(reasons.values()) == 3  # the question and its two re-asks, each with its first problem
    assert all(reason.startswith("variants") for reason in reasons) and f"3x {next(iter(reasons))}" in line


def test_the_cluster_diameter_is_an_option_with_a_one_line_error(
    llm_server: ScriptedLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import re

    from test_tasks_pipeline import build_args, responder

    llm_server.responder = responder

    def clusters(*extra: str) -> int:
        out = tmp_path / f"d{len(extra)}"
        assert main([*build_args(out, llm_server, *extra, entities=4), "--distractor-counts", "1,2"]) == 0
        found = re.search(r"A  \d+ affordances in (\d+) clusters", capsys.readouterr().out)
        assert found
        return int(found.group(1))

    (tmp_path / "d0").mkdir()
    (tmp_path / "d2").mkdir()
    assert clusters("--diameter", "1.9") < clusters()  # a wider cap merges clusters the paper's 0.35 keeps apart
    assert main([*build_args(tmp_path, llm_server), "--diameter", "0"]) == 2
    assert "--diameter: Input should be greater than 0" in capsys.readouterr().err
