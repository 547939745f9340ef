"""``RunOptions``: one typed, frozen model of a run's settings, checked once with the flag's name."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from lateralgym.envs import ConfigError, EpisodeConfig
from lateralgym.episodes import RunOptions, dry_run


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"limit": -1}, "--limit must be 0 or more, got -1"),
        ({"limit": 0}, "nothing to run: --limit 0 selects no item"),
        ({"repeats": 0}, "--repeats must be at least 1, got 0"),
        ({"concurrency": 0}, "--concurrency must be at least 1, got 0"),
        ({"llm_concurrency": 0}, "--llm-concurrency must be at least 1, got 0"),
        ({"judge_samples": 0}, "--judge-samples must be at least 1, got 0"),
        ({"ray_actors": 0}, "--actors must be at least 1, got 0"),
        ({"stop_after_errors": -1}, "--stop-after-errors must be 0 (never) or more, got -1"),
        ({"backend": "slurm"}, "--backend is 'local' or 'ray', got 'slurm'"),
        ({"player": "nobody"}, "unknown player 'nobody'"),
        ({"judge": "nobody"}, "unknown judge 'nobody'"),
        ({"player": "human", "judge": "human"}, "a person cannot both play and judge"),
        ({"player": "human", "backend": "ray"}, "a person plays or judges at this terminal: drop --backend ray"),
        ({"limit": "many"}, "--limit: Input should be a valid integer"),
        ({"limt": 3}, "unknown run option 'limt'"),
    ],
)
def test_every_bad_value_is_one_config_error(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        RunOptions(**values)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_judge_object_is_not_a_setting() -> None:
    with pytest.raises(ConfigError, match="pass a Judge as judge_obj"):
        RunOptions(judge=object())


def test_merge_checks_again_and_the_model_is_frozen() -> None:
    options = RunOptions(player="oracle", limit=2, out="somewhere")
    assert options.out == Path("somewhere")
    wider = options.merge(limit=5, repeats=3)
    assert (wider.player, wider.limit, wider.repeats, options.limit) == ("oracle", 5, 3, 2)
    assert options.merge() is options
    with pytest.raises(ConfigError, match="--repeats must be at least 1"):
        options.merge(repeats=0)
    with pytest.raises(ValidationError):
        options.limit = 9  # type: ignore[misc]


def test_with_config_fills_the_player_and_judge_it_names() -> None:
    config = EpisodeConfig.named("splat")
    filled = RunOptions(player="oracle").with_config(config)
    assert (filled.player, filled.judge) == ("oracle", config.judge)


def test_recorded_options_carry_no_credentials_and_read_back_without_spec_checks() -> None:
    options = RunOptions(
        player="openai/m?base_url=http://user:pw-SECRET@host/v1",
        base_url="http://tok-SECRET@host/v1",
        judge_base_url="http://host/v1?api-key=k-SECRET",
    )
    recorded = options.recorded()
    assert "SECRET" not in recorded.model_dump_json()
    assert recorded.player == "openai/m?base_url=http://host/v1" and recorded.base_url == "http://host/v1"
    # a judge of a plugin not installed here, read back from a manifest: not refused
    assert recorded.merge(judge="plugin-judge").judge == "plugin-judge"
    with pytest.raises(ConfigError, match="unknown judge 'plugin-judge'"):
        options.merge(judge="plugin-judge")


def test_dry_run_takes_the_same_options() -> None:
    config = EpisodeConfig.named("riddlesense")
    estimate = dry_run(config, RunOptions(limit=3, repeats=2))
    assert (estimate.episodes, estimate.repeats, estimate.player) == (6, 2, config.player)
    assert dry_run(config, limit=3).episodes == 3
    with pytest.raises(ConfigError, match="nothing to run"):
        dry_run(config, limit=0)
