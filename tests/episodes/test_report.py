"""Reports: report.md with the right numbers, valid PNG plots, and runs compared side by side."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from _outcomes import outcome as full_outcome
from rich.console import Console

from lateralgym.episodes import compare_markdown, compare_runs
from lateralgym.episodes._log import EpisodeEnd, EpisodeStart, StepLogWriter, observation
from lateralgym.episodes._metrics import metrics_from_log
from lateralgym.episodes._plots import ReportError
from lateralgym.episodes._report import print_metrics, render_metrics, write_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def write_run(run_dir: Path, benchmark: str, mode: str, ends: list[EpisodeEnd], player: str) -> Path:
    """A run directory: steps.jsonl (a start and an end per episode) and manifest.json."""
    run_dir.mkdir(parents=True)
    with StepLogWriter(run_dir / "steps.jsonl") as writer:
        for record in ends:
            writer.write(
                EpisodeStart(
                    run_id=run_dir.name,
                    episode_id=record.episode_id,
                    item_id=record.item_id,
                    seed=0,
                    config=benchmark,
                    benchmark=benchmark,
                    mode=mode,
                    player=player,
                    judge="exact",
                    observation=observation("start"),
                )  # fmt: skip
            )
            writer.write(record.model_copy(update={"run_id": run_dir.name}))
    manifest = {"run_id": run_dir.name, "player": player, "config": benchmark}
    (run_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return run_dir


def end(benchmark: str, item: str, outcome: dict[str, Any], turns: int = 1, **kw: Any) -> EpisodeEnd:
    return EpisodeEnd(
        run_id="run", episode_id=f"{item}#0", item_id=item, benchmark=benchmark,
        outcome=full_outcome(benchmark, outcome, turns=turns), **kw,
    )  # fmt: skip


def creativity(item: str, gold: bool, entity: bool, band: str, level: int, count: int, sim: str) -> EpisodeEnd:
    factors = {
        "cluster_band": band, "gold_level": level, "level_kind": "normal" if level == 0 else "emergency",
        "distractor_count": count, "distractor_similarity": sim,
    }  # fmt: skip
    outcome = {"committed": True, "gold_correct": gold, "entity_correct": entity, "hallucinated": False,
               "factors": factors, "scene": "kitchen", "inspections": 0, "entity_count": 4}  # fmt: skip
    return end("creativity", item, outcome)


def creativity_run(path: Path, player: str = "heuristic", golds: tuple[bool, ...] = (True, False, False)) -> Path:
    ends = [
        creativity("t1", golds[0], True, "small", 0, 3, "similar"),
        creativity("t2", golds[1], True, "large", 2, 6, "mixed"),
        creativity("t3", golds[2], False, "large", 0, 3, "dissimilar"),
    ]
    return write_run(path, "creativity", "static", ends, player)


def brainteaser_run(path: Path) -> Path:
    def puzzle(item: str, correct: bool) -> EpisodeEnd:
        group, _, suffix = item.partition("_")
        variant = {"": "original", "SR": "semantic", "CR": "context"}[suffix]
        kind = "sentence" if item.startswith("SP") else "word"
        return end("brainteaser", item, {"correct": correct, "group_id": group, "kind": kind, "variant": variant})

    ends = [puzzle("SP-1", True), puzzle("SP-1_SR", False), puzzle("SP-1_CR", True), puzzle("WP-1", True)]
    return write_run(path, "brainteaser", "mcq", ends, "random")


def splat_run(path: Path) -> Path:
    def story(item: str, band: str, solved: bool, turns: int) -> EpisodeEnd:
        outcome = {"solved": solved, "band": band, "questions": turns - 1, "yes": turns - 1, "no": 0,
                   "irrelevant": 0, "repeated_questions": 0, "attempts": 1}  # fmt: skip
        return end("splat", item, outcome, turns=turns, truncated=not solved, terminated=solved)

    ends = [story("e1", "easy", True, 4), story("h1", "hard", False, 15), story("h2", "hard", True, 5)]
    return write_run(path, "splat", "multiturn", ends, "openai/gpt-4o-mini")


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, path
    assert len(data) > 5000, (path, len(data))


def test_creativity_report(tmp_path: Path) -> None:
    run = creativity_run(tmp_path / "run-c")
    report = write_report(run)
    assert report == run / "report.md"
    text = report.read_text(encoding="utf-8")
    assert "| gold_correct_rate | 33.33 |" in text  # t1 of 3
    assert "| entity_correct_rate | 66.67 |" in text  # t1, t2 of 3
    assert "| heuristic |" in text and "| static |" in text
    assert "| large | 2 | 2 | 0.00 | 50.00 |" in text  # by cluster band: t2 entity-correct of t2, t3
    for factor in ("cluster_band", "gold_level", "distractor_count", "distractor_similarity"):
        assert f"](plots/creativity_{factor}.png)" in text
        assert_png(run / "plots" / f"creativity_{factor}.png")


def test_brainteaser_report(tmp_path: Path) -> None:
    run = brainteaser_run(tmp_path / "run-b")
    text = write_report(run).read_text(encoding="utf-8")
    # original: SP-1, WP-1 right (100); semantic: 0/1; context: 1/1; overall (100 + 0 + 100) / 3
    assert "| original_acc | 100.00 |" in text
    assert "| semantic_acc | 0.00 |" in text
    assert "| overall_acc | 66.67 |" in text
    assert "| group_ori_sem_acc | 0.00 |" in text
    assert "](plots/brainteaser_variants.png)" in text
    assert_png(run / "plots" / "brainteaser_variants.png")


def test_splat_report(tmp_path: Path) -> None:
    run = splat_run(tmp_path / "run-s")
    metrics = metrics_from_log(run)
    text = write_report(run, metrics).read_text(encoding="utf-8")
    assert "| acc_all_puzzles | 66.67 |" in text  # e1, h2 of 3
    assert "| rnd_all_puzzles | 8.00 |" in text  # (4 + 15 + 5) / 3
    assert "| oa_all_puzzles | 15.00 |" in text  # 100 * (1/4 + 0 + 1/5) / 3
    assert "| hard | 2 | 2 | 50.00 | 10.00 | 10.00 |" in text  # 1/2; (15 + 5) / 2; 100 * (1/5) / 2
    assert "| oa | 17.50 |" in text  # the band average: (25 + 10) / 2
    assert "## Exploration" in text and "| yes_ratio | 100.00 |" in text
    assert "](plots/splat_bands.png)" in text
    assert_png(run / "plots" / "splat_bands.png")


def test_report_without_matplotlib_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = splat_run(tmp_path / "run-s")
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ReportError, match=r"pip install matplotlib"):
        write_report(run)


def test_render_and_print_metrics(tmp_path: Path) -> None:
    metrics = metrics_from_log(splat_run(tmp_path / "run-s"))
    titles = [str(t.title) for t in render_metrics(metrics)]
    assert titles == ["headline", "by_band", "exploration"]
    console = Console(record=True, width=150)
    print_metrics(metrics, console)
    out = console.export_text()
    assert out.startswith("splat (multiturn): 3 episodes (0 errored)")
    assert "oa_all_puzzles" in out and " 17.5 │" in out and "medium" not in out  # one decimal on screen


def test_compare_runs(tmp_path: Path) -> None:
    """Runs as rows, a board per benchmark (best first), each with its facts and the papers' headline numbers."""
    first = creativity_run(tmp_path / "run-a", "heuristic", (True, False, False))
    second = creativity_run(tmp_path / "run-b", "oracle", (True, True, True))
    third = splat_run(tmp_path / "run-s")
    console = Console(record=True, width=250)
    console.print(compare_runs([first, second, third], resamples=50))
    text = console.export_text()
    lines = text.splitlines()
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in lines if line.startswith("│")]
    assert [r[0] for r in rows] == ["run-b", "run-a", "run-s"]  # oracle first: 100% beats 33%
    assert rows[0][1:5] == ["oracle", "exact", "3", "1"]
    assert rows[1][5].startswith("33.3 [") and rows[0][5] == "100.0 [100.0, 100.0]"  # gold_correct_rate
    assert rows[2][5].startswith("75.0 [")  # SPLAT's board: acc = mean(100, 50)
    assert "creativity (static): ranked on gold_correct_rate, one try" in text
    assert "splat (multiturn): ranked on acc, one try" in text
    assert "not comparable: these runs differ in benchmark (creativity, splat)" in text
    markdown = compare_markdown([first, second, third], resamples=0)
    assert "| run | player | judge | episodes | tries | gold_correct_rate |" in markdown
    assert "| run-a | heuristic | exact | 3 | 1 | 33.3 |" in markdown


def test_report_under_repeats_shows_both_variants(tmp_path: Path) -> None:
    def story(repeat: int, solved: bool, turns: int) -> EpisodeEnd:
        record = end("splat", "e1", {"solved": solved, "band": "easy"}, turns=turns, truncated=not solved)
        return record.model_copy(update={"repeat": repeat, "episode_id": f"e1#{repeat}"})

    run = write_run(tmp_path / "run-r", "splat", "multiturn", [story(0, False, 15), story(1, True, 4)], "random")
    text = write_report(run).read_text(encoding="utf-8")
    assert "| repeats (R) | 2 |" in text
    assert "| acc_best_of_2 | 100.00 |" in text  # solved in one of the two repeats
    assert "| acc_mean_of_2 | 50.00 |" in text  # 1 of 2 episodes
    assert "| oa_best_of_2 | 25.00 |" in text  # 100 / 4
    assert "![Acc and O/A by difficulty band (best of 2)](plots/splat_bands.png)" in text
    assert_png(run / "plots" / "splat_bands.png")
