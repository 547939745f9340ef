"""``ModelSpec``: the generation config of every model role (player, judge, annotator), from one string.

One syntax names a model and how to call it, whoever calls it::

    openai/qwen?base_url=http://127.0.0.1:8000/v1&temperature=0&few_shot=true

Before ``?`` is ``provider/model``; after it, ``name=value`` pairs. Generation settings
(``GENERATION_KEYS``: ``base_url``, ``api_key_env``, ``backend``, ``temperature``, ``max_tokens``,
``seed``, ``timeout``, ``max_retries``, ``logprobs``, ``token_ids``) become fields; any other name goes, as text, to
``options``, which the role reads and checks with ``role_options`` (a player knows ``few_shot``
-- true/false or a number of worked examples --, ``demos`` and ``reasoning``, a judge ``samples``
and ``max_reasks``). Keys never go in a spec: only the
*name* of the environment variable holding one (``api_key_env``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal
from urllib.parse import parse_qsl

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_serializer, model_validator

from lateralgym.agents._llm_errors import LLMConfigError
from lateralgym.agents._llm_secrets import display_url

__all__ = [
    "GENERATION_KEYS",
    "LOCAL_PROVIDER",
    "LOCAL_SERVER_KEYS",
    "ModelSpec",
    "OptionParser",
    "flag",
]

Backend = Literal["openai", "litellm"]
OptionParser = Callable[[str], Any]
"""Turns an option's text into its typed value; raises ``ValueError`` (with a short reason) when it cannot."""

GENERATION_KEYS: tuple[str, ...] = (
    "base_url",
    "api_key_env",
    "backend",
    "temperature",
    "max_tokens",
    "seed",
    "timeout",
    "max_retries",
    "logprobs",
    "token_ids",
)
"""Spec settings that are ``ModelSpec`` fields; every other ``name=value`` is a role option."""

LOCAL_PROVIDER = "local"
"""``local/<name or file>``: a model LateralGym serves itself (``lateralgym.agents._local_serve``)."""
LOCAL_SERVER_KEYS: tuple[str, ...] = ("runtime", "threads", "context", "port")
"""Settings of a ``local/`` spec that go to its server (``_local_serve``), not to the request or the role."""
LOCAL_TIMEOUT_S = 900.0
"""A ``local/`` spec's request timeout unless it sets one."""
LOCAL_MAX_TOKENS = 512
"""A ``local/`` spec's completion cap unless it sets one."""
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PROVIDER_KEY_ENV = {"openai": "OPENAI_API_KEY"}
_SECRET_NAME = re.compile(r"(?i)key|secret|passw")
_NAMING = frozenset({"name", "provider", "model", "options"})
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def flag(value: str) -> bool:
    """A true/false option: ``1/true/yes/on`` or ``0/false/no/off`` (any case)."""
    word = value.strip().lower()
    if word in _TRUE | _FALSE:
        return word in _TRUE
    raise ValueError(f"expected true/false, got {value!r}")


def _split_name(name: str) -> tuple[str, str]:
    provider, sep, model = name.strip().partition("/")
    if not sep or not provider or not model:
        raise LLMConfigError(
            f"model name {name!r} must be 'provider/model', e.g. 'openai/gpt-4o-mini', "
            "'anthropic/claude-3-5-haiku-latest' or 'openai/NAME' with base_url for a local server"
        )
    return provider.lower(), model


def _option_text(value: Any) -> str:
    """An option given as a Python value, as the text a spec string would carry."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _refuse_secret(key: str) -> None:
    if _SECRET_NAME.search(key) and key != "api_key_env":
        # Never echo the value: it may be a key.
        raise LLMConfigError(
            f"{key!r}: API keys cannot go in a spec; set an environment variable and name it with api_key_env=VARIABLE"
        )


def _query_settings(query: str) -> dict[str, str]:
    """The ``name=value`` pairs after ``?``, checked: no keys, no repeats, no renaming the model."""
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True) if query else []
    except ValueError:
        raise LLMConfigError("settings after '?' must be written 'name=value&name=value'") from None
    settings: dict[str, str] = {}
    for key, value in pairs:
        _refuse_secret(key)
        if key in _NAMING:
            raise LLMConfigError(f"{key!r} cannot be set after '?'; the model is named before it")
        if key in settings:
            raise LLMConfigError(f"{key!r} is given twice")
        settings[key] = value
    return settings


class ModelSpec(BaseModel):
    """Which model to call and how (the generation config of a player, a judge or an annotator).

    ``openai/...`` goes through the ``openai`` SDK (give ``base_url`` for any OpenAI-compatible
    server: vLLM, Ollama, llama.cpp); ``local/<name or file.gguf>`` too, on a server LateralGym
    starts for it (``threads``, ``context`` and ``port`` options are its server's); every other
    provider (``anthropic/...``, ``gemini/...``) goes through ``litellm``. The spec holds the *name*
    of the environment variable with the key, never the key itself.

    Build one with ``ModelSpec.parse("openai/gpt-4o-mini?temperature=0", max_tokens=64)``, or
    validate a config value that is either such a string or a mapping with a ``name`` key
    (``{"name": "openai/qwen", "base_url": "http://127.0.0.1:8000/v1", "samples": 3}``); either
    way, names outside ``GENERATION_KEYS`` land in ``options``.
    """

    # hide_input_in_errors: a mistaken key in any field must not be echoed by pydantic.
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    provider: str = Field(min_length=1)
    """Provider prefix of the model name: ``openai``, ``anthropic``, ``gemini``, ..."""
    model: str = Field(min_length=1)
    """The model name after the provider prefix (it may itself contain slashes)."""
    base_url: str | None = None
    """Base URL of an OpenAI-compatible server (``http://127.0.0.1:8000/v1``); ``None`` for the provider's own.
    Credentials in it (``http://user:key@host``, ``?api-key=...``) are used, but shown and dumped
    (``model_dump``, JSON or not) without (see ``display_url``)."""
    api_key_env: str | None = None
    """Name of the environment variable holding the API key; defaults to ``OPENAI_API_KEY`` for openai.
    ``None`` for other providers lets litellm find its usual variable."""
    backend: Backend = "litellm"
    """Which library sends the request; defaults to ``openai`` for the openai provider, else ``litellm``."""
    temperature: float | None = Field(default=None, ge=0.0)
    """Sampling temperature; ``None`` leaves the server's default."""
    max_tokens: int | None = Field(default=None, gt=0)
    """Cap on completion tokens; ``None`` leaves the server's default."""
    seed: int | None = None
    """Sampling seed, where the server supports one."""
    timeout: float = Field(default=60.0, gt=0.0)
    """Seconds allowed for one request before it counts as timed out."""
    max_retries: int = Field(default=4, ge=0)
    """Retries after the first attempt on 429, 5xx, timeouts, connection errors and malformed replies."""
    logprobs: bool = False
    """Ask for each completion token's log-probability (OpenAI's ``logprobs``) and keep the tokens and
    logprobs in every call's record (the step log, the export) when the server returns them. Off by
    default: training-grade rollouts need them, evaluations do not."""
    token_ids: bool = False
    """Also ask for the completion's token ids (vLLM's ``return_token_ids``, sent as an extra body
    field; servers that do not know it may refuse the request)."""
    options: dict[str, str] = Field(default_factory=dict)
    """Role options, as written (``few_shot``, ``reasoning``, ``samples``, ...): the client ignores them;
    the player or judge reads them with ``role_options``, which refuses names it does not know."""

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, data: Any) -> Any:
        if isinstance(data, str):
            data = {"name": data}
        if not isinstance(data, dict):
            return data
        data = dict(data)
        options = {str(k): _option_text(v) for k, v in dict(data.pop("options", None) or {}).items()}
        extra = [key for key in data if key not in cls.model_fields and key != "name"]
        options.update({str(key): _option_text(data.pop(key)) for key in extra})
        if "name" in data:
            name, _, query = str(data.pop("name")).strip().partition("?")
            data["provider"], data["model"] = _split_name(name)
            for key, value in _query_settings(query).items():  # explicit values win over the string's
                (data if key in GENERATION_KEYS else options).setdefault(key, value)
        for key in options:
            _refuse_secret(key)
        data["options"] = options
        provider = str(data.get("provider", "")).lower()
        if provider == LOCAL_PROVIDER:
            if data.get("base_url") is not None:
                raise LLMConfigError(
                    "a local/ model is served by LateralGym on a port of its own: drop base_url (for a server "
                    "you run yourself, name the model openai/NAME with --base-url)"
                )
            # A CPU model reads a long scene's prompt for minutes on a busy machine, and writes until its
            # context is full when nothing stops it.
            data.setdefault("timeout", LOCAL_TIMEOUT_S)
            data.setdefault("max_retries", 1)
            data.setdefault("max_tokens", LOCAL_MAX_TOKENS)
        data.setdefault("backend", "openai" if provider in ("openai", LOCAL_PROVIDER) else "litellm")
        if "api_key_env" not in data:
            data["api_key_env"] = _PROVIDER_KEY_ENV.get(provider)
        env = data.get("api_key_env")
        if env is not None and not _ENV_NAME.match(str(env)):
            # Never echo the value: a key pasted here by mistake must not reach an error message.
            raise LLMConfigError("api_key_env must be the *name* of an environment variable, e.g. OPENAI_API_KEY")
        base_url = data.get("base_url")
        if base_url is not None and not str(base_url).startswith(("http://", "https://")):
            # Never echo the value: a key pasted into --base-url must not reach an error message.
            raise LLMConfigError(
                "base_url must be a URL starting with http:// or https://, e.g. http://127.0.0.1:8000/v1"
            )
        return data

    @field_serializer("base_url")
    def _dump_base_url(self, base_url: str | None) -> str | None:
        # Every dump (Python or JSON) is fit to write; only the attribute holds the credentials.
        return display_url(base_url)

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        for name, value in super().__repr_args__():
            yield name, display_url(value) if name == "base_url" else value

    @classmethod
    def parse(cls, spec: str | ModelSpec, **overrides: Any) -> ModelSpec:
        """Build a spec from ``provider/model[?name=value&...]``, then ``merge(**overrides)``.

        Generation settings (``GENERATION_KEYS``) become fields, every other name an option.

        Example:
            >>> s = ModelSpec.parse("openai/x?temperature=0&few_shot=true", max_tokens=64)
            >>> (s.model, s.temperature, s.max_tokens, s.options)
            ('x', 0.0, 64, {'few_shot': 'true'})

        Args:
            spec: The spec string (or an existing spec, merged with the overrides).
            **overrides: Fields or options that win over the string's; ``None`` is ignored.

        Raises:
            LLMConfigError: Not ``provider/model``; a malformed, repeated or invalid setting; or
                a key where only the name of its variable may go (the value is never echoed).
        """
        if isinstance(spec, ModelSpec):
            return spec.merge(**overrides)
        name = spec.strip().partition("?")[0]
        return _validated({"name": spec}, name).merge(**overrides)

    def merge(self, **overrides: Any) -> ModelSpec:
        """A copy with ``overrides`` applied: they win, ``None`` ones are ignored; fields and options
        are told apart as in ``parse`` (options merge into the existing ones).

        Raises:
            LLMConfigError: An invalid value, or a key where only the name of its variable may go.
        """
        given = {key: value for key, value in overrides.items() if value is not None}
        if not given:
            return self
        fields = {key: value for key, value in given.items() if key in type(self).model_fields and key != "options"}
        options = {key: value for key, value in given.items() if key not in fields}
        options = {**self.options, **dict(options.pop("options", None) or {}), **options}
        # The attributes, not model_dump(): a dump has the base URL's credentials removed.
        data = {**{name: getattr(self, name) for name in type(self).model_fields if name != "options"}, **fields}
        data["options"] = options
        return _validated(data, self.name)

    def role_options(self, known: Mapping[str, OptionParser], *, role: str) -> dict[str, Any]:
        """The options typed by ``known`` (option name -> parser), for a ``role`` such as ``player``.

        Example:
            >>> ModelSpec.parse("openai/x?samples=3").role_options({"samples": int}, role="judge")
            {'samples': 3}

        Raises:
            LLMConfigError: An option the role does not know (the message lists those it does), or
                a value its parser refuses.
        """
        server = set(LOCAL_SERVER_KEYS) if self.provider == LOCAL_PROVIDER else set()
        unknown = sorted(set(self.options) - set(known) - server)
        if unknown:
            from lateralgym.envs import did_you_mean

            names = [*known, *GENERATION_KEYS, *server]
            guessed = ", ".join(f"{key}{did_you_mean(key, names)}" for key in unknown)
            raise LLMConfigError(
                f"{self.name}: unknown {role} option(s) {guessed}; {role} options are "
                f"{', '.join(known) or '(none)'}, generation settings are {', '.join(GENERATION_KEYS)}"
            )
        typed: dict[str, Any] = {}
        for key, value in self.options.items():
            if key in server:
                continue
            try:
                typed[key] = known[key](value)
            except ValueError as exc:
                raise LLMConfigError(f"{self.name}: {role} option {key!r}: {exc}") from None
        return typed

    @property
    def name(self) -> str:
        """The full model name, ``provider/model``."""
        return f"{self.provider}/{self.model}"

    def read_api_key(self) -> str | None:
        """Read the API key from ``api_key_env`` now (an empty value counts as unset)."""
        if self.api_key_env is None:
            return None
        return os.environ.get(self.api_key_env) or None


def _validated(data: dict[str, Any], name: str) -> ModelSpec:
    """``ModelSpec.model_validate(data)``, its errors as one ``LLMConfigError`` naming ``name`` (no values)."""
    try:
        return ModelSpec.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            ": ".join([*(str(p) for p in err["loc"]), err["msg"].removeprefix("Value error, ")]) for err in exc.errors()
        )
        raise LLMConfigError(f"invalid model spec {name!r}: {problems}") from None
