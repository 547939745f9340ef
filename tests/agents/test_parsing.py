"""Reading actions out of free-form model replies: JSON, labels, letters, questions, garbage."""

from __future__ import annotations

from typing import Any

import pytest

from lateralgym.agents._parsing import json_objects, parse_reply
from lateralgym.envs import Ask, Commit, Inspect, Invalid
from lateralgym.envs import _reply_text as _parsing_text
from lateralgym.envs._reply_text import JSON_SCAN_LIMIT
from lateralgym.envs.benchmarks._mcq_reply import parse_mcq_reply
from lateralgym.envs.benchmarks.creativity._player import parse_creativity_reply
from lateralgym.envs.benchmarks.splat._reply import parse_situation_reply

# -- JSON extraction -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', [{"a": 1}]),
        ('Sure! Here it is: {"a": 1} -- hope that helps.', [{"a": 1}]),
        ('```json\n{"a": 1}\n```', [{"a": 1}]),
        ('first {"a": 1} then ```json\n{"b": {"c": 2}}\n```', [{"a": 1}, {"b": {"c": 2}}]),
        ("{'a': 'x', 'b': true}", [{"a": "x", "b": True}]),
        ('{"a": 1, "b": [1, 2,],}', [{"a": 1, "b": [1, 2]}]),
        ("{\u201ca\u201d: \u201cx\u201d}", [{"a": "x"}]),
        ('{"a": "a } brace in a string"}', [{"a": "a } brace in a string"}]),
        ('{"a": "it\'s fine"}', [{"a": "it's fine"}]),
        ("no json at all", []),
        ("{not json} and {also: not}", []),
        ('[1, 2] {"a": [1]}', [{"a": [1]}]),
        ('{"broken": "outer", {"inner": 1}', [{"inner": 1}]),
        ('{"a": 1', []),
    ],
)
def test_json_objects(text: str, expected: list[dict[str, Any]]) -> None:
    assert json_objects(text) == expected


# -- CreativityBench -----------------------------------------------------------------------------

PUBLIC: dict[str, Any] = {
    "task": "The lid of a paint tin is stuck shut.",
    "entities": ["cotton tea towel", "steel soup spoon", "bamboo cutting board"],
    "revealed": {"steel soup spoon": {"bowl": "bowl: ...", "handle": "handle: ..."}},
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"gold_entity": "steel soup spoon", "gold_part": "handle", "how_to_use": "pry the lid"}',
            Commit(entity="steel soup spoon", part="handle", how_to_use="pry the lid"),
        ),
        (
            'The spoon is rigid steel.\n```json\n{"gold_entity": "Steel Soup Spon", "gold_part": "Handle", '
            '"how_to_use": "wedge it"}\n```\nThat should work.',
            # the names as written stay beside the resolved ones: the official rule grades them
            Commit(
                entity="steel soup spoon",
                part="handle",
                how_to_use="wedge it",
                fields={"entity_as_written": "Steel Soup Spon", "part_as_written": "Handle"},
            ),
        ),
        (
            '{"entity": "the steel soup spoon", "part": "handle", "how": "lever"}',
            Commit(
                entity="steel soup spoon",
                part="handle",
                how_to_use="lever",
                fields={"entity_as_written": "the steel soup spoon"},
            ),
        ),
        (
            '{"Gold Entity": "steel_soup_spoon", "Gold-Part": "bowl", "usage": "scoop"}',
            Commit(
                entity="steel soup spoon",
                part="bowl",
                how_to_use="scoop",
                fields={"entity_as_written": "steel_soup_spoon"},
            ),
        ),
        (
            'Draft: {"gold_entity": "cotton tea towel", "gold_part": "cloth_body"}\nOn reflection the spoon is '
            'better:\n{"gold_entity": "steel soup spoon", "gold_part": "handle"}',
            Commit(entity="steel soup spoon", part="handle"),
        ),
        (
            'Final: {"gold_entity": "steel soup spoon", "gold_part": "handle"} {"note": "nothing here"}',
            Commit(entity="steel soup spoon", part="handle"),
        ),
        (
            "**Entity:** steel soup spoon\n**Part:** handle\n**How to use:** slide it under the rim",
            Commit(entity="steel soup spoon", part="handle", how_to_use="slide it under the rim"),
        ),
        (
            "commit: steel soup spoon | handle | lever the lid up",
            Commit(entity="steel soup spoon", part="handle", how_to_use="lever the lid up"),
        ),
        # A name that matches nothing is kept as written: the env counts it as a hallucination.
        ('{"gold_entity": "plastic ruler", "gold_part": "edge"}', Commit(entity="plastic ruler", part="edge")),
        # A part of an entity not yet revealed is kept as written.
        (
            '{"gold_entity": "bamboo cutting board", "gold_part": "Board Face"}',
            Commit(entity="bamboo cutting board", part="Board Face"),
        ),
    ],
)
def test_creativity_commit_forms(text: str, expected: Commit) -> None:
    assert parse_creativity_reply(text, PUBLIC, ("commit",)) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"action": "inspect", "entity": "steel soup spon"}', Inspect(entity="steel soup spoon")),
        ('{"action": "Explore", "entity": "Cotton Tea Towel"}', Inspect(entity="cotton tea towel")),
        ('{"kind": "inspect", "entity": "bamboo cutting board"}', Inspect(entity="bamboo cutting board")),
        ('{"entity": "cotton tea towel"}', Inspect(entity="cotton tea towel")),
        ('{"action": "inspect", "entity": "garden hose"}', Inspect(entity="garden hose")),
        ('{"action": "ask", "question": "Is the spoon made of metal?"}', Ask(question="Is the spoon made of metal?")),
        ('{"question": "Is the towel wet?"}', Ask(question="Is the towel wet?")),
        ("Let me look first.\ninspect: steel soup spoon", Inspect(entity="steel soup spoon")),
        ("ask: Is the board heavy?", Ask(question="Is the board heavy?")),
        (
            '{"action": "commit", "gold_entity": "steel soup spoon", "gold_part": "handle", "how_to_use": "pry"}',
            Commit(entity="steel soup spoon", part="handle", how_to_use="pry"),
        ),
    ],
)
def test_creativity_interactive_moves(text: str, expected: Inspect | Ask | Commit) -> None:
    assert parse_creativity_reply(text, PUBLIC) == expected


def test_entity_only_json_is_a_commit_when_inspect_is_not_allowed() -> None:
    assert parse_creativity_reply('{"entity": "steel soup spoon"}', PUBLIC, ("commit",)) == Commit(
        entity="steel soup spoon"
    )


@pytest.mark.parametrize("text", ["I would use the spoon, obviously.", "{}", '{"confidence": 0.9}', "```json\n```"])
def test_creativity_garbage_is_invalid(text: str) -> None:
    action = parse_creativity_reply(text, PUBLIC)
    assert isinstance(action, Invalid)
    assert action.raw == text
    assert "gold_entity" in action.reason


# -- BrainTeaser ---------------------------------------------------------------------------------

CHOICES = (
    "He plays so softly that the sound never reaches her room.",
    "He plays a digital piano with headphones on, so no sound fills the flat.",
    "His daughter is an unusually deep sleeper.",
    "None of above.",
)


@pytest.mark.parametrize(
    ("text", "index"),
    [
        ("A", 0),
        ("b", 1),
        ("(B)", 1),
        ("(c)", 2),
        ("C.", 2),
        ("D)", 3),
        ("option 3", 2),
        ("Option 1", 0),
        ("choice: 4", 3),
        ("2", 1),
        ("Answer: C", 2),
        ("**Answer:** D", 3),
        ("answer - b", 1),
        ("commit: B", 1),  # the env's own command form
        ("Some thoughts.\ncommit: (c)", 2),
        ("the answer is b)", 1),
        ("The answer is (A).", 0),
        ("The correct answer is option 2", 1),
        ("Final answer: B", 1),
        ("I choose (c)", 2),
        ("I'd go with B", 1),
        ("The correct option is C) his daughter sleeps deeply", 2),
        ("Option A is tempting. Option C is silly.\nSo the answer is B.", 1),
        ("Answer: C. Option A is tempting but wrong.", 2),
        ("A is wrong, B is right.\nB", 1),
        ("He plays a digital piano with headphones on, so no sound fills the flat.", 1),
        ("he plays a digital piano with headphones on so no sound fills the flat", 1),
        ("I think he plays a digital piano with headphones on, so no sound fills the flat.", 1),
        ("None of the above", 3),
        ("none of above", 3),
        ('```json\n{"answer": "B"}\n```', 1),
        ('{"choice": 2}', 2),
        ('{"answer": "(d)"}', 3),
        ('{"answer": "His daughter is an unusually deep sleeper."}', 2),
        ('Reasoning... {"answer": "A"} ... wait, no: {"answer": "C"}', 2),
    ],
)
def test_mcq_forms(text: str, index: int) -> None:
    assert parse_mcq_reply(text, CHOICES) == Commit(choice=index)


@pytest.mark.parametrize(
    "text",
    [
        "I like turtles",
        "the answer is a digital piano",  # the article "a" is not option A
        "E",  # out of range for four options
        "option 7",
        "",
        '{"answer": "maybe"}',
        "Both A and B could work.",
    ],
)
def test_mcq_garbage_is_invalid(text: str) -> None:
    action = parse_mcq_reply(text, CHOICES)
    assert isinstance(action, Invalid)
    assert action.raw == text
    assert "A-D" in action.reason


def test_mcq_numeric_options_read_by_text_not_ordinal() -> None:
    choices = ("7", "3", "12", "None of above.")
    assert parse_mcq_reply("Answer: 3", choices) == Commit(choice=1)
    assert parse_mcq_reply("3", choices) == Commit(choice=1)
    assert parse_mcq_reply("option 3", choices) == Commit(choice=2)


# Options as BrainTeaser's release has them: WP-4_CR lists "The letter N." and "The Letter N."
# (the second is intended), WP-104_CR lists "The letter 'o'." twice (the second is intended).
WP_4_CR = ("The letter N.", "The Letter N.", "The Letter E.", "None of above.")
WP_104_CR = ("The letter 'o'.", "The letter 't'.", "The letter 'o'.", "None of above.")


@pytest.mark.parametrize(
    ("text", "choices", "index"),
    [
        # an option's text names that option exactly: case matters when it tells options apart
        ("The Letter N.", WP_4_CR, 1),
        ("The letter N.", WP_4_CR, 0),
        ("The Letter N", WP_4_CR, 1),  # the closing full stop is optional
        ("Answer: The Letter N.", WP_4_CR, 1),
        ("The answer is The Letter N.", WP_4_CR, 1),
        ("**Answer:** The Letter N.", WP_4_CR, 1),
        ("Answer: (B) The Letter N.", WP_4_CR, 1),
        ('{"answer": "The Letter N."}', WP_4_CR, 1),
        # identical options are one answer (the judge grades either as right)
        ("The letter 'o'.", WP_104_CR, 0),
        # options that are single letters: the bare text is the option, a cued lone letter a letter
        ("C.", ("E.", "C.", "A.", "None of above."), 1),
        ("C", ("E.", "C.", "A.", "None of above."), 1),
        ("E", ("E.", "C.", "A.", "None of above."), 0),
        ("Answer: C", ("E.", "C.", "A.", "None of above."), 2),
        # digits: the bare text first, an ordinal only where no option reads so
        ("1", ("3", "1", "2", "None of above."), 1),
        ("3", ("3", "1", "2", "None of above."), 0),
        ("4", ("3", "1", "2", "None of above."), 3),
        # options that are substrings of each other
        ("Two.", ("Two.", "Two hundred.", "Twenty-two.", "None of above."), 0),
        ("Two hundred", ("Two.", "Two hundred.", "Twenty-two.", "None of above."), 1),
        ("Answer: Twenty-two.", ("Two.", "Two hundred.", "Twenty-two.", "None of above."), 2),
        # "None of above." and an option that starts with it
        ("None of above.", ("None of above. No dogs left.", "One.", "Two.", "None of above."), 3),
        ("None of above. No dogs left.", ("None of above. No dogs left.", "One.", "Two.", "None of above."), 0),
        ("None of the above.", ("One.", "Two.", "Three.", "None of above."), 3),
        ("Answer: None of above", ("One.", "Two.", "Three.", "None of above."), 3),
        # an option that starts with a capital letter word
        ("Answer: A piano.", ("A drum.", "A flute.", "A piano.", "None of above."), 2),
    ],
)
def test_an_options_text_maps_to_that_option_exactly(text: str, choices: tuple[str, ...], index: int) -> None:
    assert parse_mcq_reply(text, choices) == Commit(choice=index)


def test_a_text_several_different_options_share_names_none() -> None:
    assert isinstance(parse_mcq_reply("the letter n", WP_4_CR), Invalid)  # case cannot tell A from B


def test_allowed_letters_follow_the_number_of_options() -> None:
    five = ("a bed", "a clock", "a river", "a map", "a shadow")  # RiddleSense: A-E
    four = five[:4]
    assert parse_mcq_reply("Answer: E", five) == Commit(choice=4)
    assert parse_mcq_reply("E", five) == Commit(choice=4)
    assert parse_mcq_reply("option 5", five) == Commit(choice=4)
    for text in ("Answer: E", "E", "(e)", "option 5", "Answer: H"):
        reply = parse_mcq_reply(text, four)
        assert isinstance(reply, Invalid) and "A-D" in reply.reason, text
    assert "A-E" in parse_mcq_reply("Answer: F", five).reason  # type: ignore[union-attr]
    # an out-of-range letter does not hide an earlier in-range one
    assert parse_mcq_reply("Answer: B. (Not E.)", four) == Commit(choice=1)


# -- SPLAT ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Question: Was the audience deaf?", Ask(question="Was the audience deaf?")),
        ("**Question:** Is it a film?", Ask(question="Is it a film?")),
        ("- question: Is it night?", Ask(question="Is it night?")),
        ("1. Question: Is it night?", Ask(question="Is it night?")),
        ("Q: Is it a film?\nA: Yes", Ask(question="Is it a film?")),
        ("ask: Is the man alive?", Ask(question="Is the man alive?")),
        ("Were they deaf?", Ask(question="Were they deaf?")),
        ("Hmm, why so quiet?\nThinking aloud.\nIs it a cinema?", Ask(question="Is it a cinema?")),
        ('{"action": "ask", "question": "Is it night?"}', Ask(question="Is it night?")),
        ('{"question": "Is it raining?"}', Ask(question="Is it raining?")),
        ("Answer: The audience was deaf.", Commit(answer="The audience was deaf.")),
        (
            "Answer: The audience was deaf.\nThey applauded in sign language.",
            Commit(answer="The audience was deaf. They applauded in sign language."),
        ),
        (
            "I am fairly sure now.\nExplanation: They were deaf and applauded by waving.",
            Commit(answer="They were deaf and applauded by waving."),
        ),
        ("Final answer: it was a silent film", Commit(answer="it was a silent film")),
        ("commit: it was a silent film", Commit(answer="it was a silent film")),
        ('```json\n{"action": "commit", "answer": "A silent film."}\n```', Commit(answer="A silent film.")),
        ('{"explanation": "They were deaf."}', Commit(answer="They were deaf.")),
        # A labelled line beats a bare question.
        ("Was it a film?\nAnswer: they were watching a film.", Commit(answer="they were watching a film.")),
    ],
)
def test_situation_forms(text: str, expected: Ask | Commit) -> None:
    assert parse_situation_reply(text) == expected


@pytest.mark.parametrize("text", ["I have no idea.", "Let me think about it.", '{"mood": "happy"}', "Question:"])
def test_situation_garbage_is_invalid(text: str) -> None:
    action = parse_situation_reply(text)
    assert isinstance(action, Invalid)
    assert action.raw == text
    assert "Question:" in action.reason


# -- dispatch ------------------------------------------------------------------------------------


def test_parse_reply_dispatches_on_benchmark() -> None:
    assert parse_reply("(B)", "brainteaser", {"choices": list(CHOICES)}) == Commit(choice=1)
    assert parse_reply("Question: Is it a film?", "splat", {}) == Ask(question="Is it a film?")
    assert parse_reply('{"entity": "steel soup spon"}', "creativity", PUBLIC, "interactive") == Inspect(
        entity="steel soup spoon"
    )
    assert parse_reply('{"entity": "steel soup spon"}', "creativity", PUBLIC, "static") == Commit(
        entity="steel soup spoon", fields={"entity_as_written": "steel soup spon"}
    )
    # Unknown benchmarks read the env's own command forms.
    assert parse_reply("ask: Is it a film?", None, {}) == Ask(question="Is it a film?")


@pytest.mark.parametrize("benchmark", ["creativity", "brainteaser", "splat", None])
def test_empty_reply_is_invalid_everywhere(benchmark: str | None) -> None:
    action = parse_reply("  \n", benchmark, {"choices": list(CHOICES), **PUBLIC})
    assert isinstance(action, Invalid)
    assert "empty" in action.reason


def test_invalid_raw_is_capped() -> None:
    text = "x" * 10_000
    action = parse_reply(text, "splat", {})
    assert isinstance(action, Invalid)
    assert len(action.raw) == 2000


# -- chain-of-thought SPLAT replies ----------------------------------------------------------------

COT_REPLY = (
    "Let me think.\nQ: Was the audience deaf? A: That would explain the silence.\n"
    "Question: or were they asleep? No, the applause rules that out.\n"
    "Answer: It was a silent film screening.\n"
    "The violinist was an actor on the screen."
)


def test_cot_splat_reply_moves_on_its_last_labelled_line() -> None:
    assert parse_reply(COT_REPLY, "splat", {}, reasoning="cot") == Commit(
        answer="It was a silent film screening. The violinist was an actor on the screen."
    )
    assert parse_reply("I wonder.\nA: it may be a film\nQuestion: Is it a film?", "splat", {}, reasoning="cot") == (
        Ask(question="Is it a film?")
    )
    # Direct replies are one line: the first labelled line is the move, as before.
    assert parse_reply(COT_REPLY, "splat", {}) == Ask(
        question="Was the audience deaf? A: That would explain the silence."
    )


# -- JSON scanning stays linear --------------------------------------------------------------------


def test_json_objects_after_many_unclosed_braces() -> None:
    assert json_objects("{" * 50_000 + ' then {"a": 1}') == [{"a": 1}]
    assert json_objects("{" * 50_000 + "}" * 3) == [{}]
    assert json_objects("{" * 5_000 + '{"a": 1}' + "}" * 5_000) == [{"a": 1}]


@pytest.mark.parametrize("text", ["{{}}", "{{1: 2}: 3}", "{[1]: 2} and {'a': 1}"])
def test_unhashable_python_literals_are_skipped(text: str) -> None:
    assert all(isinstance(found, dict) for found in json_objects(text))


def test_json_objects_in_deep_nesting_do_not_crash() -> None:
    found = json_objects('{"a": ' * 3000 + "1" + "}" * 3000)
    assert len(found) == 1 and isinstance(found[0], dict)


def test_json_objects_reads_only_the_end_of_a_long_reply() -> None:
    text = '{"early": 1} ' + "x" * JSON_SCAN_LIMIT + ' {"late": 2}'
    assert json_objects(text) == [{"late": 2}]


def test_json_repairs_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    original = _parsing_text._repair

    def counting(candidate: str) -> dict[str, Any] | None:
        calls.append(len(candidate))
        return original(candidate)

    monkeypatch.setattr(_parsing_text, "_repair", counting)
    text = "{" * 5_000 + "}" * 5_000  # every brace closes; only the innermost "{}" is JSON
    assert json_objects(text) == [{}]
    assert sum(calls) <= 4 * len(text)  # not 5,000 repairs of ever longer candidates


def test_apostrophes_in_prose_braces_do_not_hide_later_json() -> None:
    assert json_objects('I {don\'t} know; {"a": 1}') == [{"a": 1}]
    assert json_objects("The spoon's {handle}, then {'a': 'b'}") == [{"a": "b"}]
