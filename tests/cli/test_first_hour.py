"""A newcomer's first hour: the output of a first run reads plainly, mistakes get a "did you mean",
and a wrong file or a mistyped name gets one line that says what to do."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer
from rich.console import Console

from lateralgym.cli import main
from lateralgym.episodes import RunMetrics, compare_runs, print_metrics
from lateralgym.episodes._rundir import new_run_dir


def test_a_first_run_reads_plainly_and_names_the_next_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "creativity-static", "--limit", "6", "--no-progress", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    lines = out.strip().splitlines()
    assert "6 items, repeats 1" in lines[0] and "R = " not in out
    rows = {m[1]: m[2] for m in re.finditer(r"│ (\w+) +│ +(\S+) │", out)}
    assert re.fullmatch(r"\d+\.\d", rows["gold_correct_rate"])  # a percentage with one decimal
    assert "scored_episodes" not in rows and "has every table" in out  # the rest is in report.md
    assert not re.search(r"\d\.\d\d\b", out)  # no two-decimal cell anywhere in the terminal tables
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert lines[-1].startswith(f"Next: lateralgym view {run_dir} ") and f"lateralgym report {run_dir} " in lines[-1]
    assert "| scored_episodes | 6 |" in (run_dir / "report.md").read_text()
    assert main(["report", str(run_dir)]) == 0
    every = capsys.readouterr().out
    rows = {m[1]: m[2] for m in re.finditer(r"│ (\w+) +│ +(\S+) │", every)}
    assert rows["scored_episodes"] == "6" and rows["errored"] == "0"  # counts as integers
    assert not re.search(r"\d\.\d\d\b", every.split("wrote")[0])


def test_the_headline_keeps_its_metric_when_nothing_is_scored() -> None:
    console = Console(record=True, width=120)
    nothing = RunMetrics(benchmark="creativity", episodes=2, errored=2, items=2, headline={"scored_episodes": 0})
    print_metrics(nothing, console)
    text = console.export_text()
    assert re.search(r"gold_correct_rate +│ +n/a", text) and re.search(r"entity_correct_rate +│ +n/a", text)
    assert re.search(r"scored_episodes +│ +0 ", text)


def test_a_csv_file_is_refused_by_its_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "puzzles.csv"
    path.write_text("title,story,answer\nA,B,C\n", encoding="utf-8")
    assert main(["run", "splat", "--data", str(path), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: CSV is not a SPLAT" in err and "puzzles.xlsx" in err and "JSONL" in err
    assert "not valid JSON" not in err and len(err.strip().splitlines()) == 1
    assert main(["data", "stats", str(path)]) == 2
    assert "CSV is not a LateralGym format" in capsys.readouterr().err


def test_did_you_mean_for_a_config_and_a_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "splta", "--out", str(tmp_path)]) == 2
    assert "unknown config 'splta' (did you mean 'splat'?)" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:
        main(["run", "splat", "--limt", "3"])
    assert stopped.value.code == 2
    assert "unrecognized arguments: --limt 3 (--limt: did you mean --limit?)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["data", "show", "x.jsonl", "--fromat=jsonl", "--zzz"])
    err = capsys.readouterr().err
    assert "--fromat: did you mean --format?" in err and "--zzz:" not in err  # nothing close: no guess


def test_data_show_names_the_shipped_sample(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "show", "splat"]) == 0
    assert "hidden from the player" in capsys.readouterr().out
    assert main(["data", "show", "creativity-static", "--random", "2"]) == 0
    assert capsys.readouterr().out.count("=== ") == 2
    assert main(["data", "show", "no-such-sample"]) == 2  # neither a file nor a name: the file error
    assert "no-such-sample" in capsys.readouterr().err


def test_a_human_judge_is_in_the_run_folders_name(tmp_path: Path) -> None:
    judged, _ = new_run_dir(tmp_path, "splat", "openai/gpt-4o-mini", judge="human")
    scored, _ = new_run_dir(tmp_path, "splat", "openai/gpt-4o-mini", judge="reference")
    assert judged.name.startswith("splat-gpt-4o-mini-human-judge-")
    assert "human" not in scored.name


def test_a_local_model_costs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], llm_server: ScriptedLLMServer
) -> None:
    llm_server.responder = lambda body: "Answer: A"
    args = ["run", "riddlesense", "--limit", "2", "--no-progress", "--out", str(tmp_path)]
    assert main([*args, "--player", "openai/my-local-model", "--base-url", llm_server.base_url]) == 0
    out = capsys.readouterr().out
    assert "player LLM: 2 calls" in out and "cost local: free" in out and "unknown" not in out


def test_compare_names_long_runs_by_a_short_label_and_a_legend(tmp_path: Path) -> None:
    for config in ("riddlesense", "splat", "creativity-static"):
        assert main(["run", config, "--limit", "2", "--no-progress", "--out", str(tmp_path)]) == 0
    runs = sorted(p for p in tmp_path.iterdir() if p.is_dir())
    console = Console(record=True, width=100)
    console.print(compare_runs(runs, resamples=10))
    text = console.export_text()
    labels = [line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│")]
    assert [label for label in labels if label] == ["#1", "#2", "#3"]  # one line each, however narrow
    legend = dict(re.findall(r"^(#\d) = (\S+)", text, flags=re.MULTILINE))
    assert sorted(legend.values()) == sorted(p.name for p in runs)  # every full name, unbroken, under the table
