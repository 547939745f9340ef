"""Secrets that are not the API key variable: credentials in a base URL, and provider key variables.

``display_url`` is the form of a base URL fit for logs, manifests, reprs and cache entries;
``url_secrets`` and ``conventional_key_values`` feed the redaction list the backends hand to
``redact``.
"""

from __future__ import annotations

import os
import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from lateralgym.agents._llm_errors import REDACTED

__all__ = ["conventional_key_values", "display_url", "url_secrets"]

# Variables litellm reads keys from when the spec names none; their values are redacted from
# errors and cache entries. Beyond these, any variable named *_API_KEY or *_API_TOKEN counts.
_CONVENTIONAL_KEY_ENVS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AZURE_AD_TOKEN",
    "GITHUB_TOKEN",
    "HF_TOKEN",
    "HUGGINGFACE_TOKEN",
    "VERTEXAI_CREDENTIALS",
)
_KEY_ENV_SUFFIXES = ("_API_KEY", "_API_TOKEN", "_APIKEY")
_SECRET_QUERY_NAME = re.compile(r"(?i)key|token|secret|password|passwd|auth|signature|sig$|credential")


def display_url(url: str | None) -> str | None:
    """``url`` fit to show or store: without ``user:password@`` and with secret-looking query values
    (``api-key=``, ``token=``, ...) replaced by ``[REDACTED]``. ``None`` stays ``None``.

    A URL holding no credentials comes back unchanged, so it can key caches and fill manifests.

    Example:
        >>> display_url("https://me:sk-123@llm.example.com/v1?api-key=sk-123")
        'https://llm.example.com/v1?api-key=[REDACTED]'
    """
    if url is None:
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # a malformed URL: show none of it rather than risk a secret
        return REDACTED
    netloc = parts.netloc
    if "@" in netloc:
        netloc = (f"[{host}]" if ":" in host else host) + (f":{port}" if port is not None else "")
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(_SECRET_QUERY_NAME.search(name) for name, _ in pairs):
            query = urlencode(
                [(name, REDACTED if _SECRET_QUERY_NAME.search(name) else value) for name, value in pairs],
                safe="[]",
            )
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str | None) -> list[str]:
    """The credentials a URL carries: its ``user:password``, password, and secret query values."""
    if url is None:
        return []
    try:
        parts = urlsplit(url)
        found = [parts.password or "", parts.netloc.rpartition("@")[0]]
        found += [value for name, value in parse_qsl(parts.query) if _SECRET_QUERY_NAME.search(name)]
    except ValueError:
        return [url]
    return [value for value in found if value]


def conventional_key_values() -> list[str]:
    """Values of the variables providers' keys conventionally live in, as set now.

    Any ``*_API_KEY`` / ``*_API_TOKEN`` (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``,
    ``GEMINI_API_KEY``, ``HOSTED_VLLM_API_KEY``, ...) and a few others (``AWS_SECRET_ACCESS_KEY``,
    ``HF_TOKEN``, ...): litellm may have sent any of them when the spec names no variable.
    """
    return [
        value
        for name, value in os.environ.items()
        if value and (name.upper().endswith(_KEY_ENV_SUFFIXES) or name.upper() in _CONVENTIONAL_KEY_ENVS)
    ]
