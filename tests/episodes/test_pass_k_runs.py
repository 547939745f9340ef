"""``pass^k`` and ``pass@k`` of real runs with repeats: in ``summary.json`` (checked against the step log
by hand), in ``report``'s tables, in ``compare``'s leaderboard with bootstrap intervals (checked against a
bootstrap by hand) and paired differences; CreativityBench's tries follow its scoring's denominator."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _items import PAINT_TASK

from lateralgym.agents import Agent
from lateralgym.cli import main
from lateralgym.envs import Action, Commit, EpisodeConfig, Invalid
from lateralgym.envs.benchmarks.creativity import CreativityTask
from lateralgym.episodes import EpisodeEnd, leaderboard, paired_difference, read_log, run


def _run(out: Path, repeats: int, seed: int = 0) -> Path:
    args = ["run", "brainteaser", "--repeats", str(repeats), "--player", "random", "--seed", str(seed)]
    assert main([*args, "--out", str(out), "--no-progress"]) == 0
    (run_dir,) = out.iterdir()
    return run_dir


def _tries(run_dir: Path) -> dict[str, list[bool]]:
    """Each item's correct / wrong episodes, read from the step log."""
    tries: dict[str, list[bool]] = {}
    for record in read_log(run_dir / "steps.jsonl"):
        if isinstance(record, EpisodeEnd):
            assert record.outcome is not None
            tries.setdefault(record.item_id, []).append(bool(record.outcome["correct"]))
    return tries


def _by_hand(tries: dict[str, list[bool]], k: int) -> tuple[float, float]:
    """pass^k and pass@k in percent from the formulas, averaged over items."""
    every = [math.comb(sum(t), k) / math.comb(len(t), k) for t in tries.values()]
    some = [1 - math.comb(len(t) - sum(t), k) / math.comb(len(t), k) for t in tries.values()]
    return 100 * sum(every) / len(every), 100 * sum(some) / len(some)


@pytest.fixture(scope="module")
def four(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory.mktemp("four"), 4)


def test_summary_has_pass_hat_k_and_pass_at_k_up_to_the_repeats(four: Path) -> None:
    summary = json.loads((four / "summary.json").read_text(encoding="utf-8"))
    headline = summary["headline"]
    assert summary["repeats"] == 4
    assert {f"pass{kind}{k}" for kind in "^@" for k in range(1, 5)} <= set(headline)
    assert "pass^5" not in headline and "pass@5" not in headline
    assert headline["pass^1"] == headline["pass@1"] == pytest.approx(headline["overall_acc_mean_of_4"])
    assert headline["pass@4"] == pytest.approx(headline["overall_acc_best_of_4"])
    tries = _tries(four)
    assert {len(t) for t in tries.values()} == {4}
    for k in range(1, 5):
        assert (headline[f"pass^{k}"], headline[f"pass@{k}"]) == pytest.approx(_by_hand(tries, k))
    # more tries can only make "every one succeeds" rarer and "one succeeds" likelier
    assert [headline[f"pass^{k}"] for k in range(1, 5)] == sorted(
        (headline[f"pass^{k}"] for k in range(1, 5)), reverse=True
    )
    assert [headline[f"pass@{k}"] for k in range(1, 5)] == sorted(headline[f"pass@{k}"] for k in range(1, 5))


def test_one_repeat_adds_no_keys(tmp_path: Path) -> None:
    headline = json.loads((_run(tmp_path, 1) / "summary.json").read_text(encoding="utf-8"))["headline"]
    assert not [name for name in headline if name.startswith("pass")]


def test_report_shows_a_table_of_k(four: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(four)]) == 0
    printed = capsys.readouterr().out
    assert "pass^k / pass@k" in printed and "pass^k (all k succeed)" in printed
    headline = json.loads((four / "summary.json").read_text(encoding="utf-8"))["headline"]
    report = (four / "report.md").read_text(encoding="utf-8")
    assert "### pass^k and pass@k" in report
    for k in range(1, 5):
        assert f"| {k} | {headline[f'pass^{k}']:.2f} | {headline[f'pass@{k}']:.2f} |" in report


def test_compare_gives_intervals_the_bootstrap_by_hand_gives(four: Path, tmp_path: Path) -> None:
    board = leaderboard([four], resamples=200, seed=3)
    metrics = board.rows[0].metrics
    assert board.primary("brainteaser") == ["overall_acc"]  # one try: the mean of the four
    assert list(board.rows[0].with_repeats())[-8:] == [f"pass^{k}" for k in range(1, 5)] + [
        f"pass@{k}" for k in range(1, 5)
    ]
    tries = _tries(four)
    items = list(tries)
    # by hand: the leaderboard's draws of items (one draw per resample, in turn), each item's pass^2 and pass@3
    rng = np.random.default_rng(3)
    draws = [rng.integers(0, len(items), size=len(items)) for _ in range(200)]
    for name, k, estimate in (("pass^2", 2, _every), ("pass@3", 3, _some)):
        values = np.array([100 * estimate(tries[item], k) for item in items])
        means = [values[draw].mean() for draw in draws]
        interval = metrics[name]
        assert interval.value == pytest.approx(values.mean())
        assert interval.low == pytest.approx(np.percentile(means, 2.5))
        assert interval.high == pytest.approx(np.percentile(means, 97.5))


def _every(tries: list[bool], k: int) -> float:
    return math.comb(sum(tries), k) / math.comb(len(tries), k)


def _some(tries: list[bool], k: int) -> float:
    return 1 - math.comb(len(tries) - sum(tries), k) / math.comb(len(tries), k)


def test_compare_pairs_runs_k_up_to_the_fewer_repeats(
    four: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two = _run(tmp_path / "two", 2, seed=9)
    capsys.readouterr()
    assert main(["compare", str(four), str(two), "--markdown", "--resamples", "50"]) == 0
    printed = capsys.readouterr().out
    header = next(line for line in printed.splitlines() if line.startswith("| run"))
    assert "pass" not in header and "best_of" not in header  # the board ranks one try
    row_of_two = next(line for line in printed.splitlines() if line.startswith(f"| {two.name}"))
    assert row_of_two.count("[") == 1  # its one-try accuracy: the mean of its two tries
    repeats = printed.split("With repeats")[1]
    for k in range(1, 5):
        assert f"| pass^{k} |" in repeats and f"| pass@{k} |" in repeats
    pass_3 = next(line for line in repeats.splitlines() if line.startswith("| pass^3 |"))
    assert pass_3.count("[") == 1  # the run of two tries has no pass^3: blank
    paired = paired_difference(four, two, resamples=50)
    assert list(paired.passes) == ["pass^1", "pass^2", "pass@1", "pass@2"]
    a, b = _tries(four), _tries(two)
    by_hand = [100 * (_every(a[i], 2) - _every(b[i], 2)) for i in a]
    assert paired.passes["pass^2"].value == pytest.approx(sum(by_hand) / len(by_hand))
    assert paired.passes["pass^1"].value == pytest.approx(paired.difference.value)
    low, high = paired.passes["pass@2"].low, paired.passes["pass@2"].high
    assert low is not None and high is not None and low <= paired.passes["pass@2"].value <= high
    assert "pass@2" in printed.split("paired:")[1]


# CreativityBench: a dropped episode (an unreadable answer) is no try under `paper`, a failed one under `strict`

ANSWERS = {"right": ("steel soup spoon", "handle"), "wrong": ("cotton tea towel", "cloth_body")}
TASKS = [
    PAINT_TASK.model_copy(update={"id": key, "task": f"{PAINT_TASK.task} (case {key})"})
    for key in (*ANSWERS, "unreadable")
]


class ByCase(Agent):
    """Commits the right or the wrong answer, or writes nothing readable, by the case in the task text."""

    name = "by-case"

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        case = str(info["public"]["task"]).rsplit("(case ", 1)[1].rstrip(")")
        if case not in ANSWERS:
            return Invalid(raw="hmm", reason="written for the test")
        entity, part = ANSWERS[case]
        return Commit(entity=entity, part=part, how_to_use="lever it")


@pytest.mark.parametrize(("scoring", "expected"), [("paper", 50.0), ("strict", 100 / 3)])
def test_creativity_tries_follow_the_scoring_denominator(scoring: str, expected: float, tmp_path: Path) -> None:
    result = run(
        EpisodeConfig.named("creativity-static").with_options(scoring=scoring),
        items=list[CreativityTask](TASKS),
        agent_factory=lambda seed: ByCase(seed),
        repeats=3,
        out=tmp_path,
        progress=False,
        concurrency=1,
    )
    headline = json.loads((result.run_dir / "summary.json").read_text(encoding="utf-8"))["headline"]
    # always right, always wrong, and (strict only) three failed tries: every k gives the same share
    for k in range(1, 4):
        assert headline[f"pass^{k}"] == headline[f"pass@{k}"] == pytest.approx(expected), k
    assert headline["pass^1"] == pytest.approx(headline["gold_correct_rate_mean_of_3"])
