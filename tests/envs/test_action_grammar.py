"""Each benchmark states its action grammar once, from the forms its parser reads: every reply the
grammar (GBNF) or its JSON schema admits is a move the benchmark's own parser reads, naming only what
the scene shows; on the last turn only the final answer is left."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest

from lateralgym.agents import parse_reply
from lateralgym.envs import (
    SHIPPED_CONFIGS,
    ActionGrammar,
    Commit,
    EpisodeConfig,
    FreeText,
    Inspect,
    JsonForm,
    LateralEnv,
    LineForm,
    OneOf,
    PromptPart,
    final_turn,
    get_benchmark,
)

_RULE = re.compile(r"^([a-z][a-z0-9]*) ::= (.+)$")


def bare(body: str) -> str:
    """A rule's body with its string literals and character classes blanked out (escapes honoured)."""
    out, n = [], 0
    while n < len(body):
        opener = body[n]
        if opener in '"[':
            closer = '"' if opener == '"' else "]"
            n += 1
            while body[n] != closer:
                n += 2 if body[n] == "\\" else 1
            out.append(" ")
        else:
            out.append(opener)
        n += 1
    return re.sub(r"\{\d+,\d+\}", " ", "".join(out))


def rules(grammar: str) -> dict[str, str]:
    """The grammar's rules, checked to be well formed: one per line, every name used is defined."""
    found: dict[str, str] = {}
    for line in grammar.splitlines():
        match = _RULE.match(line)
        assert match, f"not a rule: {line!r}"
        assert match[1] not in found, f"rule {match[1]} defined twice"
        found[match[1]] = match[2]
    assert "root" in found
    for name, body in found.items():
        plain = bare(body)
        assert plain.count("(") == plain.count(")"), f"unbalanced parentheses in {name}"
        for used in re.findall(r"[a-z][a-z0-9]*", plain):
            assert used in found, f"rule {name} uses undefined {used}"
    return found


def episode_info(name: str, turns_used: int = 0) -> dict[str, Any]:
    config = EpisodeConfig.named(name)
    _, info = LateralEnv(config).reset(seed=0)
    return {**info, "turn": turns_used}


CASES = [(name, reasoning) for name in SHIPPED_CONFIGS for reasoning in ("direct", "cot")]


@pytest.mark.parametrize(("name", "reasoning"), CASES)
def test_every_reply_the_grammar_admits_is_a_move_the_parser_reads(name: str, reasoning: str) -> None:
    info = episode_info(name)
    unit = get_benchmark(info["benchmark"])
    grammar = unit.prompts.action_grammar(info, reasoning)
    assert grammar is not None
    rules(grammar.gbnf())
    public = info["public"]
    schema = grammar.json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    examples = grammar.examples()
    assert {kind for kind, _ in examples} == set(grammar.kinds)
    for kind, reply in examples:
        action = parse_reply(reply, info["benchmark"], public, info["mode"], reasoning)
        assert action.kind == kind, (reply, action)
        if isinstance(action, Inspect):
            assert action.entity in [*public["entities"], *public.get("inspectable_items", [])]
        if isinstance(action, Commit) and action.choice is not None:
            assert 0 <= action.choice < len(public["choices"])
        if isinstance(action, Commit) and action.entity is not None:
            assert action.entity in public["entities"]
            revealed = public.get("revealed", {})
            if action.entity in revealed:
                assert action.part in revealed[action.entity]
        if reply.startswith("{"):
            jsonschema.validate(json.loads(reply), schema)


@pytest.mark.parametrize("name", ["creativity-interactive", "creativity-explore", "splat", "splat-paper"])
def test_on_the_last_turn_only_the_final_answer_is_left(name: str) -> None:
    config = EpisodeConfig.named(name)
    first = episode_info(name)
    last = episode_info(name, turns_used=config.max_turns - 1)
    unit = get_benchmark(config.benchmark)
    assert not final_turn(first) and final_turn(last)
    assert len(unit.prompts.action_grammar(first, "direct").kinds) > 1  # type: ignore[union-attr]
    assert unit.prompts.action_grammar(last, "direct").kinds == ("commit",)  # type: ignore[union-attr]


def test_creativity_answers_pair_each_entity_with_its_own_parts() -> None:
    info = episode_info("creativity-static")
    grammar = get_benchmark("creativity").prompts.action_grammar(info, "direct")
    assert grammar is not None
    revealed = info["public"]["revealed"]
    for form in grammar.forms:
        assert isinstance(form, JsonForm)
        fields = dict(form.fields)
        entity = fields["gold_entity"]
        assert isinstance(entity, OneOf) and len(entity.options) == 1
        assert fields["gold_part"] == OneOf(tuple(revealed[entity.options[0]]))
    # Interactive: a part of an entity not yet inspected is any short name.
    info = episode_info("creativity-interactive")
    grammar = get_benchmark("creativity").prompts.action_grammar(info, "direct")
    assert grammar is not None
    answers = [dict(form.fields) for form in grammar.forms if form.kind == "commit"]  # type: ignore[union-attr]
    assert answers and all(isinstance(a["gold_part"], FreeText) for a in answers)


def test_multiple_choice_grammar_offers_the_shown_letters_only() -> None:
    for name, letters in (("brainteaser", "ABCD"), ("riddlesense", "ABCDE")):
        info = episode_info(name)
        grammar = get_benchmark(info["benchmark"]).prompts.action_grammar(info, "direct")
        assert grammar == ActionGrammar((LineForm("commit", "Answer: ", OneOf(tuple(letters))),))
        options = " | ".join(f'"{letter}"' for letter in letters)
        assert grammar.gbnf() == f'root ::= move2\nchoice1 ::= {options}\nmove2 ::= "Answer: " choice1'


def test_text_values_are_bounded_single_lines_that_start_with_a_letter() -> None:
    grammar = ActionGrammar((LineForm("ask", "Question: ", FreeText(50, end="?")),), reasoning=100)
    body = rules(grammar.gbnf())
    text_rule = next(v for k, v in body.items() if k.startswith("text"))
    assert "{0,48}" in text_rule and text_rule.endswith('"?"') and "\\n" in text_rule
    prose = next(v for k, v in body.items() if k.startswith("prose"))
    assert "{0,99}" in prose and prose.endswith('"\\n"')
    schema = grammar.json_schema()
    assert schema["required"] == ["reasoning", "question"]
    assert schema["properties"]["question"] == {"type": "string", "minLength": 1, "maxLength": 50, "pattern": "\\?$"}
    assert grammar.max_chars() > 150


def test_quotes_in_names_are_escaped_in_both_shapes() -> None:
    grammar = ActionGrammar((JsonForm("inspect", (("target", OneOf(('the "big" box', "a\\b"))),)),))
    choice = next(v for k, v in rules(grammar.gbnf()).items() if k.startswith("choice"))
    assert choice == r'"\"the \\\"big\\\" box\"" | "\"a\\\\b\""'
    for _, reply in grammar.examples():
        jsonschema.validate(json.loads(reply), grammar.json_schema())


def test_a_benchmark_states_no_grammar_by_default() -> None:
    assert PromptPart().bound(get_benchmark("splat")).action_grammar({}, None) is None


def test_a_grammar_needs_a_form_and_values_need_content() -> None:
    with pytest.raises(ValueError):
        ActionGrammar(())
    with pytest.raises(ValueError):
        OneOf(())
    with pytest.raises(ValueError):
        FreeText(1)
