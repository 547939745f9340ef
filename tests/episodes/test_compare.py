"""Runs compared: the leaderboard's bootstrap intervals (checked against a bootstrap done by hand),
partial runs, paired differences with McNemar's test, CSV export, ``to_pandas`` and the commands."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from test_report import creativity, creativity_run, splat_run, write_run

from lateralgym.cli import main
from lateralgym.envs import get_benchmark
from lateralgym.episodes import (
    MetricsError,
    episode_rows,
    episodes_csv,
    leaderboard,
    paired_difference,
    run,
    to_pandas,
)


def gold_run(path: Path, golds: list[bool], player: str = "heuristic") -> Path:
    ends = [creativity(f"t{n}", gold, gold, "small", 0, 3, "similar") for n, gold in enumerate(golds)]
    return write_run(path, "creativity", "static", ends, player)


def test_the_interval_is_the_percentile_bootstrap_over_items(tmp_path: Path) -> None:
    golds = [True, False, False, True, False, True, False, False, False, True]
    board = leaderboard([gold_run(tmp_path / "r", golds)], resamples=300, seed=7)
    interval = board.rows[0].metrics["gold_correct_rate"]
    # by hand: the same draws of items, the plain proportion of each draw
    rng = np.random.default_rng(7)
    values = np.array(golds, dtype=float) * 100
    means = [values[rng.integers(0, len(values), size=len(values))].mean() for _ in range(300)]
    assert interval.value == pytest.approx(40.0)
    assert interval.low == pytest.approx(np.percentile(means, 2.5))
    assert interval.high == pytest.approx(np.percentile(means, 97.5))
    assert interval.low < 40.0 < interval.high
    again = leaderboard([tmp_path / "r"], resamples=300, seed=7).rows[0].metrics["gold_correct_rate"]
    assert again == interval  # seeded: the same intervals every time


def test_a_paper_metric_that_is_not_a_proportion_gets_an_interval_too(tmp_path: Path) -> None:
    """SPLAT's acc is the mean over difficulty bands: each resample is scored as SPLAT's scorer does."""
    row = leaderboard([splat_run(tmp_path / "s")], resamples=200).rows[0]
    acc = row.metrics["acc"]
    assert acc.value == pytest.approx(75.0) and acc.low is not None and acc.high is not None
    assert 0.0 <= acc.low <= acc.value <= acc.high <= 100.0
    assert row.metrics["rnd"].low is not None


def test_a_partial_run_says_so(tmp_path: Path) -> None:
    run_dir = gold_run(tmp_path / "r", [True, False])
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["episodes"] = [{"episode_id": f"t{n}#0", "item_id": f"t{n}", "repeat": 0, "seed": n} for n in range(5)]
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    row = leaderboard([run_dir], resamples=0).rows[0]
    assert row.partial and row.planned == 5 and row.episodes == 2
    assert row.metrics["gold_correct_rate"].low is None  # resamples=0: values only


def test_paired_difference_on_shared_items(tmp_path: Path) -> None:
    a = gold_run(tmp_path / "a", [True, True, True, False, True])
    b = gold_run(tmp_path / "b", [True, False, False, False, True, True])  # t5 only in b
    diff = paired_difference(a, b, resamples=300)
    assert diff.shared_items == 5 and diff.only_a == 0 and diff.only_b == 1
    assert diff.a_rate == pytest.approx(80.0) and diff.b_rate == pytest.approx(40.0)
    assert diff.difference.value == pytest.approx(40.0)
    assert diff.difference.low is not None and diff.difference.low <= 40.0 <= (diff.difference.high or 0)
    assert (diff.a_only_solved, diff.b_only_solved) == (2, 0)
    assert diff.mcnemar_p == pytest.approx(0.5)  # two discordant items, both for A: 2 * 0.5**2
    assert "McNemar p = 0.5" in diff.describe() and "1 only B ran" in diff.describe()


def test_mcnemar_holds_for_thousands_of_discordant_items() -> None:
    from scipy.stats import binomtest

    from lateralgym.episodes._compare import mcnemar_exact

    # 2**n is past a float's range here (two runs of a few thousand items each)
    assert mcnemar_exact(700, 760) == pytest.approx(binomtest(700, 1460, 0.5).pvalue)
    assert mcnemar_exact(1500, 1500) == 1.0 and mcnemar_exact(0, 2000) < 1e-300


def test_pairs_need_one_benchmark_and_shared_items(tmp_path: Path) -> None:
    with pytest.raises(MetricsError, match="pair runs of one benchmark"):
        paired_difference(creativity_run(tmp_path / "c"), splat_run(tmp_path / "s"))
    lone = creativity("zz", True, True, "small", 0, 3, "mixed")
    other = write_run(tmp_path / "o", "creativity", "static", [lone], "p")
    with pytest.raises(MetricsError, match="share no item"):
        paired_difference(tmp_path / "c", other)


def test_leaderboard_csv_has_every_metric_with_its_interval(tmp_path: Path) -> None:
    board = leaderboard([creativity_run(tmp_path / "c"), splat_run(tmp_path / "s")], resamples=50)
    rows = list(csv.DictReader(io.StringIO(board.to_csv())))
    assert [r["run_id"] for r in rows] == ["c", "s"]
    assert rows[0]["gold_correct_rate"] and rows[0]["gold_correct_rate_low"] and rows[0]["gold_correct_rate_high"]
    assert rows[0]["errored"] == "0" and "metric.errored" in rows[0]  # the count and the headline metric apart
    assert rows[1]["acc"] and rows[1]["gold_correct_rate"] == ""


def test_episode_rows_and_csv_of_a_real_run(tmp_path: Path) -> None:
    result = run("creativity-interactive", limit=4, out=tmp_path, progress=False)
    rows = episode_rows(result.run_dir)
    assert len(rows) == 4 and len({r["item_id"] for r in rows}) == 4
    assert sum(r["succeeded"] for r in rows) == round(result.metrics.headline["gold_correct_rate"] * 4 / 100)
    assert all(r["player"] == "heuristic" and r["judge"] == "exact" and r["dataset"] == "sample" for r in rows)
    assert all("meta.scene" in r and "outcome.gold_correct" in r and isinstance(r["turns"], int) for r in rows)
    parsed = list(csv.DictReader(io.StringIO(episodes_csv(result.run_dir))))
    assert [p["episode_id"] for p in parsed] == [r["episode_id"] for r in rows]
    assert json.loads(parsed[0]["outcome.factors"])["cluster_band"] in ("small", "medium", "large")


def test_to_pandas(tmp_path: Path) -> None:
    pandas = pytest.importorskip("pandas", reason="pandas is the optional extra lateralgym[pandas]")
    a = gold_run(tmp_path / "runs" / "a", [True, False, True])
    gold_run(tmp_path / "runs" / "b", [False, False])
    frame = to_pandas(tmp_path / "runs")  # a folder of runs
    assert isinstance(frame, pandas.DataFrame) and len(frame) == 5
    assert frame.groupby("run_id")["succeeded"].mean().round(3).to_dict() == {"a": 0.667, "b": 0.0}
    board = leaderboard([a], resamples=0).to_pandas()
    assert board.loc[0, "gold_correct_rate"] == pytest.approx(200 / 3)


def test_compare_leaderboard_and_export_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    gold_run(runs / "a", [True, False, True, True], player="openai/model-a")
    gold_run(runs / "b", [False, False, True, False], player="openai/model-b")
    out_csv = tmp_path / "board.csv"
    assert main(["compare", str(runs / "a"), str(runs / "b"), "--resamples", "100", "--csv", str(out_csv)]) == 0
    out = capsys.readouterr().out
    assert out.index("openai/model-a") < out.index("openai/model-b")  # best first
    assert "95% bootstrap interval" in out
    assert "paired: a - b: 50.0 [" in out and "McNemar p = 0.5" in out
    assert [r["player"] for r in csv.DictReader(out_csv.open())] == ["openai/model-a", "openai/model-b"]
    assert main(["leaderboard", str(runs), "--markdown", "--resamples", "0"]) == 0
    markdown = capsys.readouterr().out
    assert "**creativity (static): ranked on gold_correct_rate, one try**" in markdown
    assert "| a | openai/model-a | exact | 4 | 1 | 75.0 | 75.0 |\n" in markdown
    target = tmp_path / "episodes.csv"
    assert main(["export", str(runs / "a"), "--format", "csv", "--out", str(target)]) == 0
    assert len(list(csv.DictReader(target.open()))) == 4
    assert main(["compare", str(tmp_path / "nothing-here")]) == 2


@pytest.mark.parametrize(
    ("config", "repeats"),
    [
        ("creativity-interactive", 2),
        ("creativity-static", 1),
        ("riddlesense", 1),
        ("brainteaser", 1),
        ("brainteaser", 3),
        ("splat", 1),
        ("splat", 2),
        ("splat-paper", 1),
    ],
)
def test_the_vectorised_bootstrap_gives_the_intervals_of_scoring_each_resample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str, repeats: int
) -> None:
    """All resamples scored at once from the items' draw counts (``Scorer.headline_terms``, or
    ``Scorer.headline_resampled`` for BrainTeaser's group accuracies and SPLAT's band means) give the
    intervals of the benchmark's scorer run on each resample: the same draws, the same statistics."""
    import lateralgym.episodes._compare as compare_module

    # a random player gets some right and some wrong: group and band metrics vary between resamples
    player = "random" if config.startswith(("brainteaser", "splat")) else None
    result = run(config, player=player, limit=40, repeats=repeats, out=tmp_path, progress=False)
    one_by_one = compare_module._scored_one_by_one

    def refused(*args: object) -> None:
        raise AssertionError("this scorer gives its headline as sums over items: scored all at once")

    monkeypatch.setattr(compare_module, "_scored_one_by_one", refused)
    seen: list[tuple[int, int]] = []
    fast = leaderboard([result.run_dir], resamples=250, seed=3, progress=lambda *done: seen.append(done)).rows[0]
    assert seen[-1] == (251, 251) and all(a[0] <= b[0] for a, b in zip(seen, seen[1:], strict=False))
    monkeypatch.setattr(compare_module, "_scored_one_by_one", one_by_one)
    scorer_class = type(get_benchmark(fast.benchmark).metrics.scorer(mode=None, max_turns=15))
    monkeypatch.setattr(scorer_class, "headline_terms", lambda self: None)
    monkeypatch.setattr(scorer_class, "headline_resampled", lambda self, counts: None)
    slow = leaderboard([result.run_dir], resamples=250, seed=3).rows[0]
    assert fast.metrics.keys() == slow.metrics.keys() and len(fast.metrics) >= 2
    with_interval = [name for name, interval in slow.metrics.items() if interval.low is not None]
    assert len(with_interval) >= 1 + (config != "riddlesense")
    for name in with_interval:
        mine, theirs = fast.metrics[name], slow.metrics[name]
        assert (mine.value, mine.low, mine.high) == pytest.approx((theirs.value, theirs.low, theirs.high)), name
    # scored one by one, a resample of SuccessScorer lost its turns (kept beside the summaries)
    assert config != "riddlesense" or fast.metrics["mean_turns"].low is not None
