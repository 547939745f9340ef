"""Every name a user types gets the same "did you mean" as configs and flags: a player, a judge, a
local model, a benchmark's option (``--option`` or a config's ``options:``), a model spec's option
(``openai/M?temprature=0``) and a config file's keys; a config file's mistakes come in one message,
each field named."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from lateralgym.agents import LLMConfigError, ModelSpec
from lateralgym.agents._llm_player import PLAYER_OPTIONS
from lateralgym.cli import main
from lateralgym.envs import ConfigError, EpisodeConfig, closest_name, did_you_mean


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_the_one_helper() -> None:
    assert closest_name("heurstic", ["random", "heuristic", "oracle"]) == "heuristic"
    assert closest_name("zzz", ["random", "heuristic"]) is None
    assert did_you_mean("max_turn", ["max_turns", "mode"]) == " (did you mean 'max_turns'?)"
    assert did_you_mean("zzz", ["max_turns"]) == ""


def test_a_misspelt_player_judge_and_local_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = ["--out", str(tmp_path), "--limit", "1", "--no-progress"]
    assert main(["run", "riddlesense", "--player", "heurstic", *out]) == 2
    assert "unknown player 'heurstic' (did you mean 'heuristic'?)" in _error(capsys)
    assert main(["run", "riddlesense", "--judge", "exakt", *out]) == 2
    assert "unknown judge 'exakt' (did you mean 'exact'?)" in _error(capsys)
    assert main(["run", "riddlesense", "--player", "local/smolm2", *out]) == 2
    assert "local/smolm2: no such local model (did you mean 'smollm2'?)" in _error(capsys)
    assert not any(tmp_path.iterdir())


def test_a_misspelt_option_of_the_benchmark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "brainteaser", "--option", "layot=paper", "--out", str(tmp_path), "--no-progress"]) == 2
    err = _error(capsys)
    assert "'layot': no such field (did you mean 'layout'?)" in err and "brainteaser's options: layout" in err


def test_a_misspelt_option_of_a_model_spec() -> None:
    spec = ModelSpec.parse("openai/gpt-4o?temprature=0.7&few_shoot=2")
    with pytest.raises(LLMConfigError) as exc:
        spec.role_options(PLAYER_OPTIONS, role="player")
    message = str(exc.value)
    assert "few_shoot (did you mean 'few_shot'?)" in message
    assert "temprature (did you mean 'temperature'?)" in message


def test_a_config_file_lists_every_bad_field_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mine.yaml"
    config = {
        "name": "mine",
        "benchmark": "brainteaser",
        "mode": "mcq",
        "allowed_actions": ["commit"],
        "max_turn": 3,  # max_turns
        "judg": "exact",  # judge
        "seed": -1,
        "temperature": "hot",
        "options": {"layot": "paper"},
    }
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        EpisodeConfig.from_file(path)
    message = str(exc.value)
    assert message.startswith(f"{path}: 5 fields are wrong: ") and "\n" not in message
    for part in (
        "field 'max_turn': no such field (did you mean 'max_turns'?)",
        "field 'judg': no such field (did you mean 'judge'?)",
        "field 'seed': the run seed must be an integer",
        "field 'temperature': Input should be a valid number",
        "'layot': no such field (did you mean 'layout'?)",
    ):
        assert part in message
    assert main(["run", str(path), "--out", str(tmp_path / "runs"), "--no-progress"]) == 2
    assert "5 fields are wrong" in _error(capsys)


def test_one_bad_field_reads_as_before(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^config: field 'max_turns': Input should be greater than or equal to 1$"):
        EpisodeConfig.from_dict(
            {"name": "x", "benchmark": "riddlesense", "mode": "mcq", "allowed_actions": ["commit"], "max_turns": 0}
        )


def test_a_misspelt_value_of_the_benchmark() -> None:
    base = {"name": "x", "benchmark": "splat", "mode": "multiturn", "allowed_actions": ["ask", "commit"]}
    with pytest.raises(ConfigError, match=r"got 'multiturns' \(did you mean 'multiturn'\?\)"):
        EpisodeConfig.from_dict({**base, "mode": "multiturns"})
    with pytest.raises(ConfigError, match=r"has no reward 'corect' \(did you mean 'correct'\?\)"):
        EpisodeConfig.from_dict({**base, "rewards": {"corect": 1.0}})
    with pytest.raises(ConfigError, match=r"its formats \['jsonl', 'lateval', 'splat'\] \(did you mean 'lateval'\?\)"):
        EpisodeConfig.from_dict({**base, "dataset_format": "latevel"})
