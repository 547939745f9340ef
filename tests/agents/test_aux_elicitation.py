"""SPLAT §5.3 elicitation: a SPLAT run's log becomes an auxiliary prompt for BrainTeaser and
RiddleSense LLM players (the README's two-command recipe), over the real loopback server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from llm_server import ScriptedLLMServer

from lateralgym.agents._llm_errors import LLMConfigError
from lateralgym.cli import main
from lateralgym.envs import load_sample_items
from lateralgym.envs.benchmarks.splat._aux import aux_pairs, aux_prompt

PUZZLES = load_sample_items("splat")
LABELS = ["yes", "no", "irrelevant", "yes", "no", "yes"]  # the judge's answer to question n (1-based)


def _text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in body["messages"])


def actor(body: dict[str, Any]) -> str:
    """SPLAT: the player reasons, then asks question n; the judge answers by n. Multiple choice: (A)."""
    text = _text(body)
    if "FULL EXPLANATION (secret" in text:
        number = re.findall(r"Q(\d) about", body["messages"][-1]["content"])
        return LABELS[int(number[-1]) - 1] if number else "irrelevant"
    puzzle = next((p for p in PUZZLES if p.story in text), None)  # type: ignore[union-attr]
    if puzzle is None:
        return "(A)"
    n = 1 + sum(1 for m in body["messages"] if m["role"] == "assistant")
    return f"Step {n}: the {puzzle.title} story hides an assumption.\nQuestion: Q{n} about {puzzle.title}?"


@pytest.fixture(scope="module")
def server() -> Any:
    with ScriptedLLMServer(responder=actor).start() as running:
        yield running


@pytest.fixture(autouse=True)
def fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-aux")


def _run(args: list[str], tmp_path: Path) -> Path:
    out = tmp_path / "runs"
    before = set(out.iterdir()) if out.exists() else set()
    code = main([*args, "--out", str(out), "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    assert code == 0
    (run_dir,) = set(out.iterdir()) - before
    return run_dir


@pytest.fixture(scope="module")
def splat_run(server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Command 1 of the recipe: a SPLAT run with a reasoning player (3 puzzles, 6 questions each)."""
    tmp_path = tmp_path_factory.mktemp("splat_run")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-test-aux")
        return _run(
            [
                "run",
                "splat",
                "--player",
                "openai/splat-player?reasoning=cot",
                "--judge",
                "openai/splat-judge",
                "--base-url",
                server.base_url,
                "--limit",
                "3",
                "--max-turns",
                "6",
            ],
            tmp_path,
        )


def test_aux_pairs_are_the_first_five_answered_questions_of_m_puzzles(splat_run: Path) -> None:
    pairs = aux_pairs(splat_run, 2)
    assert [p["item_id"] for p in pairs] == ["sp-001", "sp-002"]  # dataset order, m = 2
    for puzzle, source in zip(pairs, PUZZLES, strict=False):
        title = source.title  # type: ignore[union-attr]
        assert puzzle["story"] == source.story  # type: ignore[union-attr]
        assert [(q["question"], q["answer"]) for q in puzzle["pairs"]] == [
            (f"Q{n} about {title}?", LABELS[n - 1]) for n in range(1, 6)
        ]  # the sixth is left out
        assert puzzle["pairs"][2]["reasoning"] == f"Step 3: the {title} story hides an assumption."


def test_the_two_variants_by_hand(splat_run: Path) -> None:
    data = aux_prompt(splat_run, puzzles=1, variant="data")
    title, story = PUZZLES[0].title, PUZZLES[0].story  # type: ignore[union-attr]
    expected = [f"Situation puzzle 1: {title}", f"Story: {story}"]
    expected += [f"Question: Q{n} about {title}?\nJudge: {LABELS[n - 1].capitalize()}" for n in range(1, 6)]
    assert data.split("\n\n", 1)[1] == "\n".join(expected)
    reasoning = aux_prompt(splat_run, puzzles=1, variant="reasoning")
    assert f"Reasoning: Step 1: the {title} story hides an assumption.\nQuestion: Q1 about {title}?" in reasoning
    assert "Reasoning:" not in data


@pytest.mark.parametrize(("config", "variant"), [("brainteaser", "reasoning"), ("riddlesense", "data")])
def test_aux_reaches_the_player_prompt_and_nothing_hidden_does(
    splat_run: Path, server: ScriptedLLMServer, tmp_path: Path, config: str, variant: str
) -> None:
    server.reset()
    run_dir = _run(
        [
            "run",
            config,
            "--player",
            "openai/mcq-player?temperature=0",
            "--base-url",
            server.base_url,
            "--limit",
            "2",
            "--aux",
            str(splat_run),
            "--aux-puzzles",
            "2",
            "--aux-variant",
            variant,
            "--aux-seed",
            "first",
        ],
        tmp_path,
    )
    bodies = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    assert bodies
    expected = aux_prompt(splat_run, puzzles=2, variant=variant)  # --aux-seed first: the run's first two
    for body in bodies:
        system = body["messages"][0]
        assert system["role"] == "system" and system["content"].rstrip().endswith(expected)
        sent = _text(body)
        for puzzle in PUZZLES:  # no SPLAT answer or clue, not even of the puzzles shown
            assert puzzle.answer not in sent  # type: ignore[union-attr]
            assert not any(clue in sent for clue in puzzle.clues)  # type: ignore[union-attr]
        assert "FULL EXPLANATION" not in sent and PUZZLES[2].story not in sent  # type: ignore[union-attr]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    spec = unquote(manifest["options"]["player"])
    assert f"aux={splat_run.resolve()}" in spec and "aux_puzzles=2" in spec and f"aux_variant={variant}" in spec
    assert "aux_seed=first" in spec


def test_aux_errors_are_one_line_and_say_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(LLMConfigError, match="give the directory of a finished SPLAT run"):
        aux_prompt(tmp_path)
    assert main(["run", "brainteaser", "--player", "heuristic", "--aux", str(tmp_path)]) == 2
    assert "not a model spec" in capsys.readouterr().err
    assert main(["run", "brainteaser", "--aux-variant", "data"]) == 2
    assert "--aux RUN_DIR" in capsys.readouterr().err


def test_the_paper_default_is_one_puzzle_drawn_at_random_with_a_seed(splat_run: Path) -> None:
    # SPLAT §5.3 shows one puzzle chosen at random: m = 1, drawn with the seed (0 by default)
    from lateralgym.agents import aux_prompt as player_aux

    first = aux_pairs(splat_run, 3)
    draws = {seed: aux_pairs(splat_run, 1, seed=seed) for seed in range(8)}
    assert all(len(d) == 1 and d[0] in first for d in draws.values())
    assert len({d[0]["item_id"] for d in draws.values()}) > 1  # seeds draw different puzzles
    assert aux_pairs(splat_run, 1, seed=5) == draws[5]  # and the same seed the same one
    assert aux_pairs(splat_run, 2, seed=1) == sorted(aux_pairs(splat_run, 2, seed=1), key=first.index)  # run order
    assert player_aux(splat_run) == aux_prompt(splat_run, puzzles=1, seed=0)
    assert player_aux(splat_run, seed="first") == aux_prompt(splat_run, puzzles=1)
