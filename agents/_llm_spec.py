"""``ModelSpec``: one model named by one string, plus how to call it."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_serializer, model_validator

from lateralgym.agents._llm_errors import LLMConfigError
from lateralgym.agents._llm_secrets import display_url

Backend = Literal["openai", "litellm"]

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PROVIDER_KEY_ENV = {"openai": "OPENAI_API_KEY"}


def _split_name(name: str) -> tuple[str, str]:
    provider, sep, model = name.strip().partition("/")
    if not sep or not provider or not model:
        raise LLMConfigError(
            f"model name {name!r} must be 'provider/model', e.g. 'openai/gpt-4o-mini', "
            "'anthropic/claude-3-5-haiku-latest' or 'openai/NAME' with base_url for a local server"
        )
    return provider.lower(), model


class ModelSpec(BaseModel):
    """Which model to call and how: parsed from one string such as ``openai/gpt-4o-mini``.

    ``openai/...`` goes through the ``openai`` SDK (give ``base_url`` for any
    OpenAI-compatible server: vLLM, Ollama, llama.cpp); every other provider
    (``anthropic/...``, ``gemini/...``) goes through ``litellm``. The spec holds the
    *name* of the environment variable with the key, never the key itself.

    Build one with ``ModelSpec.parse("openai/gpt-4o-mini", temperature=0)``, or
    validate a config value that is either that string or a mapping with a
    ``name`` key (``{"name": "openai/qwen", "base_url": "http://127.0.0.1:8000/v1"}``).
    """

    # hide_input_in_errors: a mistaken key in any field must not be echoed by pydantic.
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    provider: str = Field(min_length=1)
    """Provider prefix of the model name: ``openai``, ``anthropic``, ``gemini``, ..."""
    model: str = Field(min_length=1)
    """The model name after the provider prefix (it may itself contain slashes)."""
    base_url: str | None = None
    """Base URL of an OpenAI-compatible server (``http://127.0.0.1:8000/v1``); ``None`` for the provider's own.
    Credentials in it (``http://user:key@host``) are used, but shown and dumped to JSON without
    (see ``display_url``)."""
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

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, data: Any) -> Any:
        if isinstance(data, str):
            data = {"name": data}
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "name" in data:
            data["provider"], data["model"] = _split_name(str(data.pop("name")))
        provider = str(data.get("provider", "")).lower()
        data.setdefault("backend", "openai" if provider == "openai" else "litellm")
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

    @field_serializer("base_url", when_used="json")
    def _dump_base_url(self, base_url: str | None) -> str | None:
        return display_url(base_url)

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        for name, value in super().__repr_args__():
            yield name, display_url(value) if name == "base_url" else value

    @classmethod
    def parse(cls, name: str | ModelSpec, **fields: Any) -> ModelSpec:
        """Build a spec from ``provider/model`` and optional field overrides.

        Args:
            name: ``provider/model`` (or an existing spec, copied with the overrides).
            **fields: Any other field: ``base_url``, ``temperature``, ``timeout``, ...

        Raises:
            LLMConfigError: The name or a field is invalid.
        """
        if isinstance(name, ModelSpec):
            data = name.model_dump(exclude={"provider", "model"})
            data.update(fields)
            data["name"] = name.name
        else:
            data = {"name": name, **fields}
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'spec'}: {err['msg'].removeprefix('Value error, ')}"
                for err in exc.errors()
            )
            raise LLMConfigError(f"invalid model spec {data['name']!r}: {problems}") from None

    @property
    def name(self) -> str:
        """The full model name, ``provider/model``."""
        return f"{self.provider}/{self.model}"

    def read_api_key(self) -> str | None:
        """Read the API key from ``api_key_env`` now (an empty value counts as unset)."""
        if self.api_key_env is None:
            return None
        return os.environ.get(self.api_key_env) or None
