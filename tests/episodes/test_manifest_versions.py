"""A run directory written before ``RunOptions`` (main 32623db: manifest version 1, every setting at
the top level) still reads, resumes and views; ``read_run`` is what the tools that look at runs read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lateralgym.cli import main
from lateralgym.envs import ConfigError
from lateralgym.episodes import (
    EpisodeEnd,
    Manifest,
    RunOptions,
    read_log,
    read_manifest,
    read_run,
    run,
)
from lateralgym.episodes._resume import resume_urls
from lateralgym.episodes._viewer import viewer_data


def version_1(manifest: dict[str, Any]) -> dict[str, Any]:
    """``manifest`` (version 2) as main 32623db wrote it: these keys, at the top level."""
    options = manifest["options"]
    return {
        "benchmark": manifest["benchmark"],
        "concurrency": options["concurrency"],
        "config": manifest["config"],
        "created": manifest["created"],
        "dataset": manifest["dataset"],
        "episodes": manifest["episodes"],
        "judge": options["judge"],
        "judge_base_url": options["judge_base_url"] or options["base_url"],
        "judge_samples": options["judge_samples"],
        "lateralgym_version": manifest["lateralgym_version"],
        "limit": options["limit"],
        "log_schema_version": manifest["log_schema_version"],
        "platform": manifest["platform"],
        "player": options["player"],
        "player_base_url": options["base_url"],
        "python": manifest["python"],
        "redacted_base_urls": manifest["redacted_base_urls"],
        "redacted_specs": manifest["redacted_specs"],
        "repeats": options["repeats"],
        "run_id": manifest["run_id"],
        "seed": manifest["seed"],
        "use_cache": options["use_cache"],
    }


@pytest.fixture
def killed_v1_run(tmp_path: Path) -> Path:
    """A finished 3-episode SPLAT run turned into a killed one of version 1: the last episode's end
    record gone, its manifest rewritten in the old layout."""
    run_dir = run("splat", player="heuristic", limit=3, out=tmp_path, progress=False).run_dir
    path = run_dir / "manifest.json"
    path.write_text(json.dumps(version_1(json.loads(path.read_text())), indent=2, sort_keys=True))
    lines = (run_dir / "steps.jsonl").read_text().splitlines()
    last_end = max(i for i, line in enumerate(lines) if '"episode_end"' in line)
    (run_dir / "steps.jsonl").write_text("\n".join(lines[:last_end]) + "\n")
    return run_dir


def test_a_version_1_manifest_reads_into_the_same_model(killed_v1_run: Path) -> None:
    manifest = read_manifest(killed_v1_run)
    assert manifest.manifest_version == 1 and manifest.config == "splat" and manifest.seed == 0
    assert (manifest.options.player, manifest.options.judge) == ("heuristic", "reference")
    assert (manifest.options.limit, manifest.options.repeats, manifest.options.use_cache) == (3, 1, True)
    assert manifest.episodes is not None and len(manifest.episodes) == 3
    record = read_run(killed_v1_run)
    assert record.manifest == manifest and record.planned == 3
    assert record.config is not None and record.config.name == "splat"
    assert record.log_path == killed_v1_run / "steps.jsonl" and record.summary_path.name == "summary.json"


def test_a_version_1_run_resumes_from_the_cli_and_views(
    killed_v1_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--resume", str(killed_v1_run), "--player", "heuristic", "--no-progress"]) == 0
    ends = [r.episode_id for r in read_log(killed_v1_run / "steps.jsonl") if isinstance(r, EpisodeEnd)]
    assert len(ends) == 3 == len(set(ends))
    assert main(["run", "--resume", str(killed_v1_run), "--player", "oracle"]) == 2
    assert "drop --player" in capsys.readouterr().err
    header = viewer_data(killed_v1_run)["header"]
    assert (header["player"], header["judge"], header["limit"]) == ("heuristic", "reference", 3)
    assert main(["view", str(killed_v1_run)]) == 0 and main(["report", str(killed_v1_run)]) == 0


def _v1(player_url: str | None, judge_url: str | None, redacted: list[str] | None = None) -> Manifest:
    return Manifest.model_validate(
        {
            "run_id": "r",
            "player": "openai/p",
            "judge": "openai/j",
            "player_base_url": player_url,
            "judge_base_url": judge_url,
            "redacted_base_urls": redacted or [],
        }
    )


def test_version_1_server_urls_keep_their_resume_rules() -> None:
    # version 1 wrote the judge's server even when it followed --base-url: a new --base-url moves it
    followed = _v1("http://a/v1", "http://a/v1")
    assert followed.options.judge_base_url is None
    assert resume_urls(followed, "http://b/v1", None) == ("http://b/v1", "http://b/v1")
    # a judge server of its own stays the judge's
    own = _v1("http://a/v1", "http://j/v1")
    assert own.options.judge_base_url == "http://j/v1"
    assert resume_urls(own, "http://b/v1", None) == ("http://b/v1", "http://j/v1")
    assert resume_urls(own, None, None) == ("http://a/v1", "http://j/v1")
    with pytest.raises(ConfigError, match="give it again with --judge-base-url"):
        resume_urls(_v1("http://a/v1", "http://j/v1", ["judge"]), "http://b/v1", None)


def test_version_2_records_the_options_without_credentials(tmp_path: Path) -> None:
    options = RunOptions(player="heuristic", limit=2, concurrency=3, base_url="http://user:pw-SECRET@127.0.0.1:9/v1")
    run_dir = run("splat", options, out=tmp_path, progress=False, check=False).run_dir
    text = (run_dir / "manifest.json").read_text()
    assert "SECRET" not in text
    manifest = read_manifest(run_dir)
    assert manifest.manifest_version == 2 and manifest.redacted_base_urls == ["player", "judge"]
    assert (manifest.options.player, manifest.options.judge, manifest.options.limit) == ("heuristic", "reference", 2)
    assert manifest.options.concurrency == 3 and manifest.options.base_url == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"run_id": "x", ', "not valid JSON"),
        ("[1, 2]", "expected a JSON object, got list"),
        ('{"player": "heuristic"}', "not a LateralGym manifest (field 'run_id'"),
        ('{"run_id": "x", "options": {"repeats": 0}}', "--repeats must be at least 1, got 0"),
    ],
)
def test_a_damaged_manifest_is_named(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "manifest.json").write_text(content)
    for read in (read_run, read_manifest):
        with pytest.raises(ConfigError, match="manifest.json: ") as caught:
            read(tmp_path)
        assert message in str(caught.value)


def test_a_copied_log_reads_without_a_manifest(tmp_path: Path) -> None:
    record = read_run(tmp_path)
    assert record.manifest is None and record.planned is None and record.config is None
    with pytest.raises(ConfigError, match="is not a run directory"):
        read_manifest(tmp_path)
