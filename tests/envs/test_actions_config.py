"""Action parsing and episode configs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lateralgym.envs import (
    SHIPPED_CONFIGS,
    Ask,
    Commit,
    ConfigError,
    EpisodeConfig,
    Inspect,
    Invalid,
    action_to_text,
    match_name,
    parse_action,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("inspect: the kettle", Inspect(entity="the kettle")),
        ("INSPECT kettle", Inspect(entity="kettle")),
        ("ask: is it wet?", Ask(question="is it wet?")),
        (
            "commit: kettle | spout | pour through it",
            Commit(entity="kettle", part="spout", how_to_use="pour through it"),
        ),
        ("commit: kettle | spout", Commit(entity="kettle", part="spout")),
        ("commit: (B)", Commit(choice=1)),
        ("commit: 3", Commit(choice=3)),
        ("commit: he was a twin", Commit(answer="he was a twin")),
        ('{"kind": "ask", "question": "why?"}', Ask(question="why?")),
        ({"kind": "commit", "choice": 2}, Commit(choice=2)),
    ],
)
def test_parse_action(text: object, expected: object) -> None:
    assert parse_action(text) == expected


@pytest.mark.parametrize("garbage", ["", "hello", "inspect:", "{bad json", '{"kind": "fly"}', 42, None, '["a"]'])
def test_garbage_is_invalid_not_an_exception(garbage: object) -> None:
    action = parse_action(garbage)
    assert isinstance(action, Invalid) and action.reason


def test_action_text_round_trip() -> None:
    for action in (
        Inspect(entity="x"),
        Ask(question="q?"),
        Commit(entity="a", part="b", how_to_use="c"),
        Commit(choice=1),
    ):
        assert parse_action(action_to_text(action)) == action


_SCALAR = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=6)
_FIELD = st.sampled_from(["kind", "entity", "part", "how_to_use", "choice", "answer", "question", "raw", "fields", "x"])
_KIND = st.sampled_from(["inspect", "ask", "commit", "invalid", "fly", 3])
_JSON_ACTION = st.dictionaries(
    _FIELD, _SCALAR | st.dictionaries(st.text(max_size=3), _SCALAR, max_size=3) | st.lists(_SCALAR, max_size=2)
).flatmap(lambda d: st.builds(lambda kind: {"kind": kind, **d} if "kind" not in d else d, _KIND))


@settings(max_examples=400, deadline=None)
@given(_JSON_ACTION, st.sampled_from(["", " ", "\n"]))
def test_json_text_parses_as_its_dict_does(data: dict[str, object], pad: str) -> None:
    """The JSON form is read in one pass; whatever it holds, the action (or the invalid one, with its
    reason) is the one its parsed dict gives."""
    text = pad + json.dumps(data) + pad
    assert parse_action(text) == parse_action(json.loads(text))


def test_match_name_is_tolerant_but_not_loose() -> None:
    names = ["cast iron skillet", "steel soup spoon", "led_bulbs"]
    assert match_name("Cast_Iron_Skillet", names) == "cast iron skillet"
    assert match_name("the steel soup spoon", names) == "steel soup spoon"
    assert match_name("LED bulbs", names) == "led_bulbs"
    assert match_name("cast iron skilet", names) == "cast iron skillet"
    assert match_name("spoon", names) is None
    assert match_name("", names) is None


def test_shipped_configs_load_with_expected_protocols() -> None:
    configs = {name: EpisodeConfig.named(name) for name in SHIPPED_CONFIGS}
    assert configs["splat"].max_turns == 15 and configs["splat"].allowed_actions == ("ask", "commit")
    interactive, explore = configs["creativity-interactive"], configs["creativity-explore"]
    assert (interactive.allowed_actions, interactive.max_turns) == (("inspect", "commit"), 15)
    assert (explore.allowed_actions, explore.max_turns) == (("inspect", "ask", "commit"), 20)
    assert configs["creativity-static"].reveal == "full" and configs["creativity-static"].max_turns == 1
    assert configs["brainteaser"].allowed_actions == ("commit",)


def test_config_errors_name_the_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nbenchmark: splat\nmode: multiturn\nallowed_actions: [ask, commit]\nmax_turns: 0\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: field 'max_turns'"):
        EpisodeConfig.from_file(bad)
    bad.write_text("name: x\nbenchmark: splat\nmode: multiturn\nallowed_actions: [inspect, commit]\n")
    with pytest.raises(ConfigError, match="no entities to inspect"):
        EpisodeConfig.from_file(bad)
    bad.write_text("- just\n- a list\n")
    with pytest.raises(ConfigError, match="expected a mapping"):
        EpisodeConfig.from_file(bad)
    with pytest.raises(ConfigError, match="unknown config 'nope'"):
        EpisodeConfig.named("nope")
    good = tmp_path / "mine.yaml"
    good.write_text("name: mine\nbenchmark: splat\nmode: multiturn\nallowed_actions: [ask, commit]\nmax_turns: 5\n")
    assert EpisodeConfig.named(str(good)).max_turns == 5


def test_toml_configs_load_too(tmp_path: Path) -> None:
    path = tmp_path / "short.toml"
    path.write_text(
        'name = "short"\nbenchmark = "splat"\nmode = "multiturn"\nallowed_actions = ["ask", "commit"]\n'
        "max_turns = 7\n\n[rewards]\nstep = -0.1\n"
    )
    config = EpisodeConfig.from_file(path)
    assert config.max_turns == 7 and config.rewards.step == -0.1
    path.write_text("name = [")
    with pytest.raises(ConfigError, match="not valid TOML"):
        EpisodeConfig.from_file(path)
