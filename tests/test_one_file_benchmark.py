"""A benchmark from one file, run from the command line with ``--import``: no package edit, no plugin.

``docs/examples/twenty_questions.py`` is copied into a folder of its own and run through ``lateralgym
run --import FILE NAME`` (its default config, its own data format, options, reward and verdict); the
run's config records the import, so a new process resumes, reports, replays, views, compares and
exports it. Dataset formats are a benchmark's own: a second benchmark may call a format by a name
another already uses, and a file is read by the chosen benchmark's loader.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from lateralgym.cli import main
from lateralgym.envs import BENCHMARKS, DatasetError, EpisodeConfig, load_benchmark, load_items

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "twenty_questions.py"

ZOO = {
    "animals": [
        {"name": "owl", "family": "bird", "facts": ["feathers", "night", "bird"]},
        {"name": "trout", "family": "fish", "facts": ["fins", "river", "fish"]},
        {"name": "cat", "family": "mammal", "facts": ["fur", "whiskers", "mammal"]},
        {"name": "fox", "family": "mammal", "facts": ["tail", "den", "mammal"]},
    ]
}


@pytest.fixture(autouse=True)
def _registry_restored() -> Iterator[None]:
    """The benchmarks these tests import leave the registry as they found it."""
    before = dict(BENCHMARKS)
    yield
    BENCHMARKS.clear()
    BENCHMARKS.update(before)


@pytest.fixture
def game(tmp_path: Path) -> Path:
    """The example copied into a folder with a data file in its own format."""
    folder = tmp_path / "games"
    folder.mkdir()
    shutil.copy(EXAMPLE, folder / "tq.py")
    (folder / "zoo.animals.json").write_text(json.dumps(ZOO), encoding="utf-8")
    return folder


def only_run(root: Path) -> Path:
    (run_dir,) = [p for p in root.iterdir() if p.is_dir()]
    return run_dir


def lateralgym(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command line in a new process (nothing of this one's registry carries over)."""
    return subprocess.run(
        [sys.executable, "-m", "lateralgym.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_a_one_file_benchmark_runs_from_the_cli_and_its_runs_open_in_a_new_process(
    game: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(game)
    common = ["--import", "tq.py", "--data", "zoo.animals.json", "--no-progress"]
    assert main(["run", *common, "twenty-questions", "--player", "oracle", "--out", "oracle"]) == 0
    summary = json.loads((only_run(game / "oracle") / "summary.json").read_text())
    assert summary["headline"]["success_rate"] == 100.0

    # The heuristic names a fox for a mammal: a verdict of the benchmark's own ("close").
    assert main(["run", *common, "twenty-questions", "--player", "heuristic", "--out", "heuristic"]) == 0
    run_dir = only_run(game / "heuristic")
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert config["benchmark"] == "twenty-questions" and config["imports"] == [str(game / "tq.py")]
    assert config["max_turns"] == 8 and config["options"] == {"say_family": False}  # its default config
    labels = [json.loads(line).get("judge_label") for line in (run_dir / "steps.jsonl").read_text().splitlines()]
    assert "close" in labels
    capsys.readouterr()

    # A new process knows nothing of the benchmark; the run's config names its file, which runs only
    # when the command names it too (--import) or trusts the run (--trust-imports): a run dir is data.
    name = run_dir.name
    for args in (
        ["report", f"heuristic/{name}"],
        ["replay", "--quiet", f"heuristic/{name}"],
        ["view", f"heuristic/{name}"],
        ["compare", f"heuristic/{name}", f"oracle/{only_run(game / 'oracle').name}"],
        ["export", f"heuristic/{name}", "--format", "jsonl"],
        ["run", "--resume", f"heuristic/{name}", "--no-progress"],
    ):
        refused = lateralgym(*args, cwd=game)
        assert refused.returncode == 2 and "--trust-imports" in refused.stderr, (args, refused.stderr)
        assert len(refused.stderr.strip().splitlines()) == 1 and "tq.py" in refused.stderr
        done = lateralgym(*args, "--import", "tq.py", cwd=game)
        assert done.returncode == 0, (args, done.stderr)
    assert (run_dir / "report.md").is_file() and (run_dir / "viewer.html").is_file()
    replayed = lateralgym("replay", "--quiet", "--trust-imports", f"heuristic/{name}", cwd=game)
    assert "match the log" in replayed.stdout


def test_opening_a_run_directory_runs_no_code_it_names(game: Path, tmp_path: Path) -> None:
    """A shared run whose config imports a file (relative or absolute) runs nothing on open."""
    assert (
        main(
            [
                "run",
                "--import",
                str(game / "tq.py"),
                "twenty-questions",
                "--data",
                str(game / "zoo.animals.json"),
                "--player",
                "oracle",
                "--no-progress",
                "--out",
                str(tmp_path / "runs"),
            ]
        )
        == 0
    )
    run_dir = only_run(tmp_path / "runs")
    marker = tmp_path / "ran.txt"
    (run_dir / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n", encoding="utf-8")
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    for imports in (["evil.py"], [str(run_dir / "evil.py")], [f"{run_dir / 'evil.py'}:Evil"]):
        (run_dir / "config.yaml").write_text(yaml.safe_dump({**config, "imports": imports}), encoding="utf-8")
        for command in (["report"], ["view"], ["replay", "--quiet"], ["export", "--format", "jsonl"]):
            done = lateralgym(*command, str(run_dir), cwd=run_dir)
            assert done.returncode == 2 and "names code to import" in done.stderr, (command, done.stderr)
            assert not marker.exists(), (command, imports)
    (run_dir / "config.yaml").write_text(yaml.safe_dump({**config, "imports": ["evil.py"]}), encoding="utf-8")
    done = lateralgym("report", str(run_dir), "--trust-imports", cwd=run_dir)
    assert marker.read_text() == "ran"  # trusted: it runs (and registers no benchmark, which is said)
    assert done.returncode == 2 and "registers no benchmark" in done.stderr


def test_import_errors_are_one_line(game: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (game / "broken.py").write_text("raise RuntimeError('the file is broken')\n", encoding="utf-8")
    (game / "empty.py").write_text("x = 1\n", encoding="utf-8")
    for source, message in (
        (str(game / "nope.py"), "no such file"),
        (str(game / "broken.py"), "RuntimeError: the file is broken"),
        (str(game / "empty.py"), "registers no benchmark"),
        ("no_such_module_here", "no such module"),
    ):
        assert main(["run", "--import", source, "twenty-questions"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("lateralgym: error:") and message in err and len(err.strip().splitlines()) == 1


def test_a_config_can_name_module_and_class(game: Path, tmp_path: Path) -> None:
    config = EpisodeConfig.from_dict(
        {
            "name": "tq-config",
            "benchmark": f"{game / 'tq.py'}:TwentyQuestions",
            "mode": "multiturn",
            "allowed_actions": ["ask", "commit"],
            "max_turns": 4,
            "judge": "facts",
            "options": {"say_family": True},
            "rewards": {"close": 0.5},
        }
    )
    assert config.benchmark == "twenty-questions" and config.imports == (f"{game / 'tq.py'}:TwentyQuestions",)
    with pytest.raises(Exception, match="has no reward 'bonus'"):
        EpisodeConfig.from_dict({**config.model_dump(mode="json"), "rewards": {"bonus": 1.0}})
    with pytest.raises(Exception, match="say_famly"):
        config.with_options(say_famly=True)


def test_formats_belong_to_their_benchmark(game: Path, tmp_path: Path) -> None:
    (tq,) = load_benchmark(str(game / "tq.py"))
    animals = load_items(game / "zoo.animals.json", format="json", benchmark=tq.name)
    assert [a.animal for a in animals] == ["owl", "trout", "cat", "fox"]
    # Another benchmark's format of the same name is not this one's: resolved per benchmark.
    lateval = tmp_path / "english.json"
    lateval.write_text(json.dumps([{"id": 1, "question": "A story.", "answer": "What happened.", "clue": ""}]))
    assert type(load_items(lateval)[0]).__name__ == "SituationPuzzle"  # any benchmark: detection finds it
    with pytest.raises(DatasetError, match="is a splat file .* not one of twenty-questions's"):
        load_items(lateval, benchmark=tq.name)
    with pytest.raises(DatasetError, match="unknown format 'lateval'; choose one of the twenty-questions's formats"):
        load_items(lateval, format="lateval", benchmark=tq.name)


def test_a_subclass_reads_a_shared_file_name_with_its_own_format(tmp_path: Path) -> None:
    """A LatEval benchmark of one's own (SPLAT's rules, its own reader) gets english.json with --format."""
    source = tmp_path / "my_lateval.py"
    source.write_text(
        "from lateralgym.envs import DataPart, DatasetFormat, register_benchmark\n"
        "from lateralgym.envs.benchmarks.splat import Splat, load_lateval\n\n"
        "def _own(path):\n"
        "    return [p.model_copy(update={'title': 'mine'}) for p in load_lateval(path)]\n\n"
        "@register_benchmark\n"
        "class MyLatEval(Splat):\n"
        "    name = 'my-lateval'\n"
        "    env_ids = {}\n"
        "    data = DataPart.having(\n"
        "        formats=(DatasetFormat('lateval', 'LatEval, read my way', lambda p, r: True, _own),),\n"
        "        jsonl_keys=frozenset({'story'}),\n"
        "    )\n",
        encoding="utf-8",
    )
    (mine,) = load_benchmark(str(source))
    lateval = tmp_path / "english.json"
    lateval.write_text(json.dumps([{"id": 1, "question": "A story.", "answer": "What happened.", "clue": ""}]))
    assert load_items(lateval, benchmark=mine.name)[0].title == "mine"
    assert load_items(lateval, benchmark="splat")[0].title == ""


def _check_it_block() -> str:
    """The Python block under "## Check it" in docs/adding-a-benchmark.md, as the page shows it."""
    page = (EXAMPLE.parents[1] / "adding-a-benchmark.md").read_text(encoding="utf-8")
    section = page.split("## Check it", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_docs_check_it_block_runs_as_written(tmp_path: Path) -> None:
    """The page's own example, in a folder with the example file: it builds its items, checks the scene
    and scores 100 % with the oracle; importing the file's classes after ``load_benchmark`` gives the
    registered benchmark's own (a second copy of them was refused with a misleading error)."""
    shutil.copy(EXAMPLE, tmp_path / "twenty_questions.py")
    (tmp_path / "check.py").write_text(_check_it_block(), encoding="utf-8")
    done = subprocess.run([sys.executable, "check.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_items_of_a_second_copy_of_the_class_are_refused_saying_so(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE, tmp_path / "twenty_questions.py")
    script = (
        "import importlib.util, sys\n"
        "from lateralgym.envs import EpisodeConfig, LateralEnv, load_benchmark\n"
        "load_benchmark('twenty_questions.py')\n"
        "spec = importlib.util.spec_from_file_location('another_name', 'twenty_questions.py')\n"
        "copy = sys.modules['another_name'] = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(copy)  # registers a second copy of the benchmark\n"
        "load_benchmark('twenty_questions.py')  # the first again: its classes are the registry's\n"
        "item = copy.Animal(id='a', animal='owl', family='bird', facts=('night',))\n"
        "LateralEnv(EpisodeConfig.named('twenty-questions'), items=[item])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "another copy of that class (module another_name)" in done.stderr
    assert "the benchmark's file was imported twice" in done.stderr
