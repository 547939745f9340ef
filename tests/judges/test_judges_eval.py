"""``lateralgym judges eval``: judges measured against people's labels, on files written for these tests in
TurtleBench's two layouts (English: tab-pipe-tab, Correct / Incorrect / Unknown; Chinese: tabs, T / F / N,
spaces deleted) and in SPLAT's agreement-label format. Every figure is computed by hand below."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from llm_server import Fault, ScriptedLLMServer

from lateralgym.cli import main
from lateralgym.envs import DatasetError, JudgeCase, load_sample_items, write_jsonl
from lateralgym.envs.benchmarks.macgyver import MacGyverProblem
from lateralgym.envs.benchmarks.splat import ReferenceJudge
from lateralgym.envs.benchmarks.splat._turtlebench import load_turtlebench
from lateralgym.judges import evaluate_judge, score_labels

STORIES = [
    {
        "index": 1,
        "title": "The Seaside Soup",
        "chinese_title": "海边的汤",
        "surface": "A man orders a bowl of soup at a seaside cafe, tastes it and starts crying. Why?",
        "bottom": "Years ago his brother cooked him the same soup on the day before the brother sailed away and never "
        "returned.",
    },
    {
        "index": 2,
        "title": "Lights at Dawn",
        "chinese_title": "黎明的灯",
        "surface": "Every morning a woman leaves her lights on in an empty house. Why?",
        "bottom": "She is the widow of a lighthouse keeper; the lights guide the fishing boats home at dawn.",
    },
]
# guess, title, people's label, and what the offline reference judge answers (by word overlap with the
# hidden story: a hidden word -> yes; only story words -> no; neither -> irrelevant)
CASES = [
    ("His brother cooked this soup for him once", "The Seaside Soup", "Correct", "yes"),  # TP
    ("The soup reminded him of a brother who sailed away", "The Seaside Soup", "Correct", "yes"),  # TP
    ("The soup was far too salty", "The Seaside Soup", "Incorrect", "no"),  # TN
    ("The cafe owner insulted him", "The Seaside Soup", "Unknown", "no"),  # TN (Unknown is "not confirmed")
    ("He remembered his mother", "The Seaside Soup", "Incorrect", "irrelevant"),  # TN: irrelevant reads as no
    ("He cried because the soup was cold", "The Seaside Soup", "Correct", "no"),  # FN
    ("The lights guide boats", "Lights at Dawn", "Correct", "yes"),  # TP
    ("She wants the boats to stay away", "Lights at Dawn", "Incorrect", "yes"),  # FP
]
# TP 3, FN 1, TN 3, FP 1: accuracy 6/8, precision 3/4, recall 3/4, F1 3/4; majority 4 Correct of 8
EXPECTED = {"n": 8, "accuracy": 0.75, "precision": 0.75, "recall": 0.75, "f1": 0.75, "majority": 0.5}


def write_english(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stories.json").write_text(json.dumps(STORIES, ensure_ascii=False, indent=2), encoding="utf-8")
    lines = [f"{guess}\t|\t{title}\t|\t{label}" for guess, title, label, _ in CASES]
    (folder / "cases.list").write_text("\n".join(lines), encoding="utf-8")  # no final newline, as released
    return folder


def write_chinese(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    stories = [
        {
            "title": "灯塔",
            "surface": "每天早上她都把空房子的灯开着。为什么？",
            "bottom": "她的丈夫是灯塔守护人，灯光为渔船引路。",
        }
    ]
    (folder / "stories.json").write_text(json.dumps(stories, ensure_ascii=False), encoding="utf-8")
    # the official reader deletes every space from a line before splitting it on tabs
    lines = ["灯光 为渔船引路\t灯塔\tT", "她 害怕黑暗\t灯 塔\tF", "她在等邮递员\t灯塔\tN"]
    (folder / "cases.list").write_text("\n".join(lines), encoding="utf-8")
    return folder


def test_turtlebench_english_is_read_as_binary_cases(tmp_path: Path) -> None:
    cases = load_turtlebench(write_english(tmp_path / "en"))
    assert [(c.message, c.expected, c.source, c.group) for c in cases] == [
        (guess, "yes" if label == "Correct" else "no", label, title) for guess, title, label, _ in CASES
    ]
    assert cases[0].item.story == STORIES[0]["surface"] and cases[0].item.answer == STORIES[0]["bottom"]
    assert cases[0].compared("irrelevant") == "no" and cases[0].compared("yes") == "yes"


def test_turtlebench_chinese_deletes_spaces_and_maps_t_f_n(tmp_path: Path) -> None:
    cases = load_turtlebench(write_chinese(tmp_path / "zh"))
    assert [(c.message, c.expected, c.source) for c in cases] == [
        ("灯光为渔船引路", "yes", "T"),
        ("她害怕黑暗", "no", "F"),
        ("她在等邮递员", "no", "N"),
    ]
    assert {c.group for c in cases} == {"灯塔"}  # "灯 塔" found its story once its space was deleted


def test_the_json_line_of_the_reference_judge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_english(tmp_path / "en")
    assert main(["judges", "eval", str(folder), "--judge", "reference", "--json"]) == 0
    line = capsys.readouterr().out.strip()
    data = json.loads(line)
    assert {k: data[k] for k in EXPECTED} == pytest.approx(EXPECTED) and "\n" not in line
    assert list(data)[:6] == ["n", "accuracy", "precision", "recall", "f1", "majority"]
    # people yes 4 / no 4, judge yes 4 / no 4: p_o 6/8, p_e 1/2, kappa (0.75 - 0.5) / 0.5
    assert data["kappa"] == pytest.approx(0.5) and data["kappa_low"] <= 0.5 <= data["kappa_high"]
    assert data["confusion"] == {"yes": {"yes": 3, "no": 1}, "no": {"no": 3, "yes": 1}}
    assert data["confusion_as_labelled"] == {  # three-way: people's own labels against the judge's own
        "Correct": {"yes": 3, "no": 1},
        "Incorrect": {"no": 1, "irrelevant": 1, "yes": 1},
        "Unknown": {"no": 1},
    }
    assert data["group_spread"] == pytest.approx({"sd": 1 / 6, "min": 0.5, "max": 5 / 6})


def test_the_report_has_intervals_the_baseline_and_per_story_accuracy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_english(tmp_path / "en")
    assert main(["judges", "eval", str(folder / "cases.list"), "--judge", "reference"]) == 0
    out = capsys.readouterr().out
    assert "word overlap" in out  # the offline judge's stated limits come first
    assert "accuracy             0.7500  95% [" in out and "majority baseline    0.5000" in out
    assert "The Seaside Soup  0.833  (6)" in out and "Lights at Dawn    0.500  (2)" in out
    assert "mean group accuracy  0.6667 over 2" in out


def test_reference_judge_figures_by_hand(tmp_path: Path) -> None:
    cases = load_turtlebench(write_english(tmp_path / "en"))
    result = evaluate_judge(ReferenceJudge(), cases, format="turtlebench", resamples=200)
    assert result.headline() == pytest.approx(EXPECTED)
    assert result.confusion == {"yes": {"yes": 3, "no": 1}, "no": {"no": 3, "yes": 1}}
    for name in ("accuracy", "precision", "recall", "f1"):
        low, high = result.intervals[name]
        assert 0.0 <= low <= getattr(result, name) <= high <= 1.0


def test_an_llm_judge_over_the_loopback_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answers = {guess: ("yes" if label == "Correct" else "irrelevant") for guess, _, label, _ in CASES}
    answers["The lights guide boats"] = "no"  # one miss: FN

    def respond(body: dict[str, Any]) -> str:
        asked = body["messages"][-1]["content"]
        return next(label for guess, label in answers.items() if guess in asked)

    folder = write_english(tmp_path / "en")
    server = ScriptedLLMServer(responder=respond).start()
    try:
        code = main(
            [
                "judges",
                "eval",
                str(folder),
                "--judge",
                "openai/judge",
                "--base-url",
                server.base_url,
                "--cache-dir",
                str(tmp_path / "cache"),
                "--json",
            ]
        )
    finally:
        server.stop()
    assert code == 0
    # TP 3, FN 1 (the one "no"), TN 4 (irrelevant reads as not confirmed), FP 0
    figures = json.loads(capsys.readouterr().out)
    assert {k: figures[k] for k in ("n", "accuracy", "precision", "recall", "f1", "majority")} == pytest.approx(
        {"n": 8, "accuracy": 7 / 8, "precision": 1.0, "recall": 0.75, "f1": 1.5 / 1.75, "majority": 0.5}
    )
    asked = [r.body for r in server.requests if r.method == "POST"]
    assert len(asked) == 8
    bottoms = {story["title"]: story["bottom"] for story in STORIES}
    for body in asked:  # the judge sees each guess's own story's bottom (requests arrive in any order)
        title = next(title for guess, title, _, _ in CASES if guess in body["messages"][-1]["content"])
        assert bottoms[title] in body["messages"][0]["content"]


def _eval_over(server: ScriptedLLMServer, folder: Path, cache: Path, judge: str = "openai/judge") -> list[str]:
    return [
        "judges",
        "eval",
        str(folder),
        "--judge",
        judge,
        "--base-url",
        server.base_url,
        "--no-cache",
        "--cache-dir",
        str(cache),
        "--concurrency",
        "1",
        "--json",
    ]


def test_failed_calls_are_left_out_and_said_with_status_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_english(tmp_path / "en")
    server = ScriptedLLMServer(responder=lambda body: "yes").start()
    server.enqueue(Fault.status(400))  # the first case's call is refused (a 400 is not retried)
    try:
        code = main(_eval_over(server, folder, tmp_path / "cache"))
    finally:
        server.stop()
    captured = capsys.readouterr()
    assert code == 3
    assert json.loads(captured.out)["n"] == 7  # the 8 cases less the failed one
    assert captured.err.startswith("lateralgym: 1 of 8 judge calls failed and are left out of the figures; the first: ")
    assert "400" in captured.err


def test_every_call_failing_is_an_error_with_status_4(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_english(tmp_path / "en")
    server = ScriptedLLMServer(default_reply="yes").start()
    try:  # temperature=inf passes the spec's checks, but no request carrying it can be sent
        code = main(_eval_over(server, folder, tmp_path / "cache", "openai/judge?temperature=inf"))
    finally:
        server.stop()
    captured = capsys.readouterr()
    assert code == 4 and captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lateralgym: error: every judge call failed (8 of 8): ")


def test_splat_agreement_labels_are_the_second_format(tmp_path: Path) -> None:
    puzzle = load_sample_items("splat")[0]
    labels = tmp_path / "labels.csv"
    with labels.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["annotator", "item_id", "question", "explanation", "human_answer", "human_verdict"])
        writer.writerow(["amy", puzzle.id, "Was it about the weather?", "", "no", ""])
        writer.writerow(["amy", puzzle.id, "", puzzle.answer, "", "correct"])
    from lateralgym.envs.benchmarks.splat._judge_cases import load_agreement_cases

    cases = load_agreement_cases(labels)
    assert [(c.kind, c.expected, c.positive) for c in cases] == [
        ("question", "no", "yes"),
        ("verdict", "correct", "correct"),
    ]
    result = evaluate_judge(ReferenceJudge(), cases, resamples=0)
    assert result.n == 2 and result.confusion["correct"] == {"correct": 1}  # the answer itself is correct


def test_score_labels_counts_failed_calls_apart() -> None:
    case = JudgeCase(item=None, message="m", expected="yes")
    result = score_labels([case, case, case], ["yes", None, "no"], resamples=0)
    assert (result.n, result.failed, result.accuracy, result.precision, result.recall) == (2, 1, 0.5, 1.0, 0.5)


def test_bad_data_is_one_line_that_says_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_english(tmp_path / "en")
    (folder / "cases.list").write_text("A guess\t|\tNo Such Story\t|\tCorrect", encoding="utf-8")
    with pytest.raises(DatasetError, match="line 1.*no story titled"):
        load_turtlebench(folder)
    (folder / "cases.list").write_text("A guess\t|\tLights at Dawn\t|\tMaybe", encoding="utf-8")
    assert main(["judges", "eval", str(folder), "--judge", "reference"]) == 2
    assert "unknown label 'Maybe'" in capsys.readouterr().err
    (tmp_path / "other.txt").write_text("nothing", encoding="utf-8")
    assert main(["judges", "eval", str(tmp_path / "other.txt"), "--judge", "reference"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pass --format" in err


def test_cohen_kappa_by_hand() -> None:
    from lateralgym.judges import cohen_kappa

    people = np.array(["yes", "yes", "no", "no", "no", "irrelevant"], dtype=object)
    judge = np.array(["yes", "no", "no", "no", "yes", "irrelevant"], dtype=object)
    # p_o 4/6; p_e (2*2 + 3*3 + 1*1) / 36 = 14/36
    assert cohen_kappa(people, judge) == pytest.approx((4 / 6 - 14 / 36) / (1 - 14 / 36))
    assert cohen_kappa(people, people) == pytest.approx(1.0)
    assert cohen_kappa(np.array(["no"] * 3, dtype=object), np.array(["no"] * 3, dtype=object)) is None


def test_a_saved_card_travels_with_a_run_into_its_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_english(tmp_path / "en")
    card_path = tmp_path / "reference.card.json"
    assert main(["judges", "eval", str(folder), "--judge", "reference", "--save-card", str(card_path)]) == 0
    assert "wrote the judge card" in capsys.readouterr().out
    card = json.loads(card_path.read_text(encoding="utf-8"))
    assert card["judge"] == "reference" and card["benchmark"] == "splat" and card["n"] == 8
    assert card["kappa"] == pytest.approx(0.5) and card["accuracy"] == pytest.approx(0.75)
    assert card["majority"] == pytest.approx(0.5) and len(card["data_sha256"]) == 64
    runs = tmp_path / "runs"
    common = ["--player", "heuristic", "--limit", "2", "--no-progress", "--out", str(runs)]
    assert main(["run", "splat", *common, "--judge-card", str(card_path)]) == 0
    (carded,) = runs.iterdir()
    assert main(["report", str(carded)]) == 0
    report = (carded / "report.md").read_text(encoding="utf-8")
    assert "judge reference agrees with people on turtlebench (en, n=8" in report and "Cohen's kappa 0.500" in report
    assert main(["run", "splat", *common]) == 0
    (plain,) = [r for r in runs.iterdir() if r != carded]
    assert main(["report", str(plain)]) == 0
    assert "unmeasured: no judge card" in (plain / "report.md").read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["compare", str(carded), str(plain)]) == 0
    out = capsys.readouterr().out
    assert "kappa 0.500" in out and "unmeasured" in out


def test_a_card_of_another_judge_or_data_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_english(tmp_path / "en")
    card_path = tmp_path / "card.json"
    assert main(["judges", "eval", str(folder), "--judge", "reference", "--json", "--save-card", str(card_path)]) == 0
    capsys.readouterr()
    runs = tmp_path / "runs"
    common = ["--player", "random", "--limit", "1", "--no-progress", "--out", str(runs)]
    card = json.loads(card_path.read_text(encoding="utf-8"))
    other = tmp_path / "other.json"
    for changed, message in (
        ({"judge": "reference-embed"}, "measured the judge 'reference-embed'"),
        ({"benchmark": "arbench-sp"}, "measured a judge of arbench-sp"),
    ):
        other.write_text(json.dumps({**card, **changed}), encoding="utf-8")
        assert main(["run", "splat", *common, "--judge-card", str(other)]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1
    other.write_text('{"kind": "something else"}', encoding="utf-8")
    assert main(["run", "splat", *common, "--judge-card", str(other)]) == 2
    assert "not a judge card" in capsys.readouterr().err
    assert not runs.exists() or not any(runs.iterdir())  # a refused card leaves no run directory behind


def _bytes_read() -> int:
    """The bytes this process has read so far, from files and sockets alike (Linux's ``rchar``)."""
    counters = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(counters["rchar"])


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="counts the bytes read in Linux's /proc/self/io")
def test_a_huge_file_is_told_by_its_start_and_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = 512 << 20  # sparse: no disk used; read whole it would be 512 MiB of memory, and twice that as text
    annotations = tmp_path / "benchmark_results.json"
    with annotations.open("wb") as handle:
        handle.write(b'{"2001": [{"model": "person", "annotation": "correct_efficient", "solution": "')
        handle.truncate(huge)
    labels = tmp_path / "labels.csv"
    with labels.open("wb") as handle:
        handle.write(b"item_id,question,explanation,human_answer,human_verdict,")  # a first line without end
        handle.truncate(huge)
    problem = MacGyverProblem(id="2001", problem="Your kettle is broken and you want tea.", solvable=True)
    problems = write_jsonl([problem], tmp_path / "problems.jsonl")
    for data, extra in ((annotations, ["--items", str(problems)]), (labels, [])):
        before = _bytes_read()
        assert main(["judges", "eval", str(data), "--judge", "reference", *extra]) == 2
        read = _bytes_read() - before
        err = capsys.readouterr().err
        # told apart by its start (not "cannot tell its judgement format"), then refused by its size, in one line
        assert err.count("\n") == 1 and "past 64 MiB, so it is refused" in err, err
        assert read < 16 << 20, f"{read} bytes read to tell and refuse {data.name}"
