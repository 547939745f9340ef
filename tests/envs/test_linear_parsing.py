"""No parser or judge does super-linear work on model text: a looping model's reply cannot freeze a run.

Every benchmark's reply parser (direct and after reasoning), its fallback for unparsable replies,
its offline judges (answering a question, grading an explanation) and the free-hint leak check, the
env's own action and choice readers (``parse_action``, ``parse_choice``), and the shared readers of
judge replies, are fed adversarial texts (prose without a ``?``, runs of
spaces after an answer cue, braces, labels, digits...). Times are CPU times of this process, the
least of three tries, compared within the test as ratios: a text four times longer may take at
most eight times as long (linear work takes four; the quadratic ``fallback_move`` took 16).
Then each reads a megabyte: at most 64 times what 64 KB took (16 is linear, quadratic work 256;
the slack absorbs a megabyte's allocations).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lateralgym.agents import redact
from lateralgym.envs import Commit, EpisodeConfig, LateralEnv, all_benchmarks, parse_action, parse_choice
from lateralgym.envs._judging import clean_hint, extract_answer_label, parse_grade, parse_message_label
from lateralgym.envs._reply_text import json_objects, labelled_lines
from lateralgym.envs.benchmarks.arbench import ARBenchPuzzle
from lateralgym.envs.benchmarks.creativity._llm_judge import parse_gold_reply, parse_wrong_reply
from lateralgym.envs.benchmarks.macgyver import MacGyverProblem
from lateralgym.envs.benchmarks.splat._aux import _story as splat_story

PATTERNS: dict[str, tuple[str, str, str]] = {
    # (start, the part repeated, end)
    "prose without a question mark": ("", "the quick brown fox jumps over the lazy dog and then ", ""),
    "spaces": ("", " ", ""),
    "line breaks": ("", "\n", "x?"),
    "one long word": ("", "a", ""),
    "dotted words": ("", "a.", ""),
    "open braces": ("", "{", ""),
    "open JSON strings": ("", '{"a": "', ""),
    "trailing commas": ('{"a":1', ",", " "),
    "JSON then spaces": ('{"answer": "a"', " ", "x"),
    "brackets": ("", "[", ""),
    "labels": ("", "answer: x\n", ""),
    "label words": ("", "answer answer: ", ""),
    "cue then spaces": ("Answer: x", " ", "y"),
    "cue, is, then spaces": ("the answer is ", " ", "z"),
    "option then spaces": ("option", " ", "9"),
    "verdict then spaces": ("not yet", " ", "x"),
    "yes then spaces": ("the verdict is", " ", "maybe"),
    "emphasis": ("**", " ", "x"),
    "bullets": ("", "- ", ""),
    "digits": ("", "1234567890", ""),
    "escapes": ("", "\\u00", ""),
    "base64-like": ("", "QUJDREVGR0g", ""),
    "URL-like": ("", "a://b.", ""),
    "question sentences": ("", "is it? ", ""),
    "letters": ("", "A ", ""),
    "a letter then spaces": ("A", " ", "x"),
    "a commit then spaces": ("commit: (b)", " ", "x"),
    "an ask then spaces": ("ask:", " ", ""),
    "a cued letter then spaces": ("Answer: A", " ", "x"),
    "story markers": ("", "STORY: ", ""),
}
"""Texts that made a parser backtrack (or may): each is ``start + part * n + end``."""

MEGABYTE_PATTERNS = ("prose without a question mark", "spaces", "open braces", "cue, is, then spaces", "dotted words")


def _text(pattern: str, size: int) -> str:
    start, part, end = PATTERNS[pattern]
    return start + (part * (size // len(part) + 1))[:size] + end


def _judge_calls(benchmark: Any, item: Any) -> dict[str, Callable[[str], object]]:
    calls: dict[str, Callable[[str], object]] = {}
    for name, factory in benchmark.judging.offline_judges.items():
        try:
            factory()
        except Exception:  # a judge whose extra is not installed (the embedding judge)
            continue
        # A new judge per call: the embedding judges keep what they read, and a try that found its text
        # there would time a lookup (the model itself is loaded once per process).
        calls[f"{benchmark.name} judge {name} answers"] = lambda t, f=factory: asyncio.run(f().answer(item, t, ()))
        calls[f"{benchmark.name} judge {name} grades"] = lambda t, f=factory: asyncio.run(
            f().grade(item, Commit(answer=t), ())
        )
    return calls


def _functions() -> dict[str, Callable[[str], object]]:
    functions: dict[str, Callable[[str], object]] = {
        "extract_answer_label": extract_answer_label,
        "parse_grade": parse_grade,
        "parse_message_label": parse_message_label,
        "json_objects": json_objects,
        "labelled_lines": labelled_lines,
        "creativity LLM judge, gold reply": parse_gold_reply,
        "creativity LLM judge, wrong reply": parse_wrong_reply,
        "redact": lambda t: redact(t, ["sk-not-a-real-key-123"]),
        "parse_action": parse_action,
        "parse_choice": parse_choice,
        "splat elicitation story reader": lambda t: splat_story(Path("."), {"text": t}),
    }
    # Benchmarks that ship no sample data play one item written here
    written: dict[str, list[Any]] = {
        "arbench-sp": [
            ARBenchPuzzle(
                id="ar-test-1",
                story="A lamp-lighter stopped at the same door every night.",
                answer="He was counting the houses to find his way home in the fog.",
                key_questions=("Was there fog?",),
            )
        ],
        "macgyver": [
            MacGyverProblem(
                id="mg-test-1", problem="A cork fell into a wine bottle; you hold a shoelace.", solvable=True
            )
        ],
    }
    for benchmark in all_benchmarks():
        config = EpisodeConfig.named(benchmark.name)  # a benchmark's name runs its default config
        env = LateralEnv(config, items=written.get(benchmark.name))
        _, info = env.reset(seed=0)
        item = env.items[0]
        for reasoning in ("direct", "cot"):
            functions[f"{benchmark.name} parse_reply ({reasoning})"] = lambda t, b=benchmark, i=info, r=reasoning: (
                b.prompts.parse_reply(t, i, r)
            )
        functions[f"{benchmark.name} fallback_action"] = lambda t, b=benchmark, i=info: b.prompts.fallback_action(t, i)
        functions[f"{benchmark.name} free hint check"] = lambda t, i=item: clean_hint(t, i, "free")
        functions.update(_judge_calls(benchmark, item))
    return functions


FUNCTIONS = _functions()


def _cpu(function: Callable[[str], object], text: str, tries: int = 3) -> float:
    best = float("inf")
    for _ in range(tries):
        started = time.process_time()
        function(text)
        best = min(best, time.process_time() - started)
    return best


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_four_times_the_text_costs_at_most_eight_times_the_work(name: str) -> None:
    function = FUNCTIONS[name]
    slow = {}
    for pattern in PATTERNS:
        short, long = _cpu(function, _text(pattern, 1_000)), _cpu(function, _text(pattern, 4_000))
        if long > 8 * short + 0.002:
            slow[pattern] = f"{short * 1000:.2f} ms -> {long * 1000:.2f} ms"
    assert not slow, f"{name} is super-linear on: {slow}"


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_a_megabyte_costs_at_most_64_times_what_64_kb_do(name: str) -> None:
    function = FUNCTIONS[name]
    for pattern in MEGABYTE_PATTERNS:
        small = _cpu(function, _text(pattern, 1 << 16))
        big = _cpu(function, _text(pattern, 1 << 20), tries=1)
        assert big <= 64 * small + 0.25, f"{name} on {pattern}: 64 KB {small:.3f} s, 1 MB {big:.3f} s"
