"""``ModelSpec``: one spec syntax and one generation config for players, judges and annotators."""

from __future__ import annotations

from typing import Any

import pytest

from lateralgym.agents._llm_errors import LLMConfigError
from lateralgym.agents._llm_spec import GENERATION_KEYS, ModelSpec, flag
from lateralgym.agents._players import is_model_spec

SECRET = "sk-spec-secret-0123456789"
JUDGE = {"samples": int, "max_reasks": int}


def test_settings_become_fields_and_other_names_options() -> None:
    spec = ModelSpec.parse(
        "openai/meta-llama/Llama-3-8B?temperature=0&base_url=http://127.0.0.1:8000/v1&max_tokens=64"
        "&seed=3&timeout=5&max_retries=1&api_key_env=MY_KEY&backend=litellm&few_shot=true&reasoning=cot"
    )
    assert (spec.provider, spec.model, spec.name) == ("openai", "meta-llama/Llama-3-8B", "openai/meta-llama/Llama-3-8B")
    assert (spec.temperature, spec.base_url, spec.max_tokens, spec.seed) == (0.0, "http://127.0.0.1:8000/v1", 64, 3)
    assert (spec.timeout, spec.max_retries, spec.api_key_env, spec.backend) == (5.0, 1, "MY_KEY", "litellm")
    assert spec.options == {"few_shot": "true", "reasoning": "cot"}
    assert set(GENERATION_KEYS) <= set(ModelSpec.model_fields)


def test_a_config_value_reads_the_same_as_the_string() -> None:
    text = "openai/y?temperature=0&samples=3"
    assert ModelSpec.model_validate(text) == ModelSpec.parse(text)
    mapping = ModelSpec.model_validate({"name": "openai/y?samples=3", "samples": 5, "timeout": 9})
    assert (mapping.options, mapping.timeout) == ({"samples": "5"}, 9.0)  # the mapping's own keys win


def test_overrides_win_none_is_ignored_and_options_merge() -> None:
    spec = ModelSpec.parse("openai/y?temperature=0.5&seed=1&samples=3&max_reasks=2", temperature=0, seed=None)
    assert (spec.temperature, spec.seed) == (0.0, 1)

    merged = spec.merge(max_tokens=32, samples=5, few_shot=True, timeout=None)
    assert (merged.temperature, merged.seed, merged.max_tokens, merged.timeout) == (0.0, 1, 32, 60.0)
    assert merged.options == {"samples": "5", "max_reasks": "2", "few_shot": "true"}
    assert spec.merge() is spec and spec.merge(seed=None) is spec
    assert spec.options == {"samples": "3", "max_reasks": "2"}  # specs are frozen: merge copies
    assert ModelSpec.parse(spec, temperature=0.7).temperature == 0.7  # a parsed spec merges its overrides


def test_defaults_follow_the_provider() -> None:
    openai = ModelSpec.parse("openai/gpt-4o-mini")
    assert (openai.backend, openai.api_key_env, openai.options) == ("openai", "OPENAI_API_KEY", {})
    claude = ModelSpec.parse("anthropic/claude-3-5-haiku-latest?temperature=0")
    assert (claude.backend, claude.api_key_env, claude.temperature) == ("litellm", None, 0.0)


def test_role_options_are_typed_and_checked() -> None:
    spec = ModelSpec.parse("openai/y?samples=3&max_reasks=0")
    assert spec.role_options(JUDGE, role="judge") == {"samples": 3, "max_reasks": 0}
    assert ModelSpec.parse("openai/y").role_options(JUDGE, role="judge") == {}

    with pytest.raises(LLMConfigError) as caught:
        ModelSpec.parse("openai/y?few_shot=true&colour=blue").role_options(JUDGE, role="judge")
    message = str(caught.value)
    assert "unknown judge option(s) colour, few_shot; judge options are samples, max_reasks" in message
    assert "temperature" in message  # the generation settings are listed too

    with pytest.raises(LLMConfigError, match=r"judge option 'samples': invalid literal"):
        ModelSpec.parse("openai/y?samples=many").role_options(JUDGE, role="judge")


@pytest.mark.parametrize(
    ("text", "value"),
    [("1", True), ("true", True), ("Yes", True), ("on", True), ("0", False), ("FALSE", False), ("off", False)],
)
def test_flag(text: str, value: bool) -> None:
    assert flag(text) is value


def test_flag_refuses_other_words() -> None:
    with pytest.raises(ValueError, match="expected true/false"):
        flag("maybe")


@pytest.mark.parametrize(
    ("spec", "overrides"),
    [
        (f"openai/x?api_key={SECRET}", {}),
        (f"openai/x?temperature=0&openai_key={SECRET}", {}),
        (f"openai/x?client_secret={SECRET}", {}),
        ("openai/x", {"api_key": SECRET}),
        ("openai/x", {"options": {"password": SECRET}}),
        ("openai/x", {"api_key_env": SECRET}),
        ("openai/x", {"base_url": SECRET}),
    ],
)
def test_keys_are_refused_and_never_echoed(spec: str, overrides: dict[str, Any]) -> None:
    with pytest.raises(LLMConfigError) as caught:
        ModelSpec.parse(spec, **overrides)
    assert SECRET not in str(caught.value) and SECRET not in repr(caught.value)
    assert "api_key_env" in str(caught.value) or "base_url" in str(caught.value)


def test_a_key_in_a_config_mapping_is_refused() -> None:
    with pytest.raises(ValueError) as caught:
        ModelSpec.model_validate({"name": "openai/x", "token_key": SECRET})
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt-4o-mini", "must be 'provider/model'"),
        ("openai/?temperature=0", "must be 'provider/model'"),
        ("openai/x?seed=1&seed=2", "'seed' is given twice"),
        ("openai/x?novalue", "'name=value&name=value'"),
        ("openai/x?model=y", "the model is named before it"),
        ("openai/x?temperature=hot", "temperature: Input should be a valid number"),
        ("openai/x?temperature=-1", "temperature: Input should be greater than or equal to 0"),
        ("openai/x?backend=curl", "backend"),
        ("openai/x?base_url=localhost:8000", "http://"),
    ],
)
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(LLMConfigError, match="invalid model spec") as caught:
        ModelSpec.parse(spec)
    assert message in str(caught.value)


def test_is_model_spec() -> None:
    assert is_model_spec("openai/gpt-4o-mini?temperature=0") and is_model_spec("anthropic/claude")
    assert not any(is_model_spec(s) for s in ("heuristic", "exact", "/x", "openai/", "openai?x=/y"))
