"""Keeping credentials out of everything the LLM layer writes or shows.

A credential can reach text in many forms: an API key, ``user:password@`` in a URL (which HTTP
clients turn into an ``Authorization: Basic base64(user:password)`` header), a secret query
parameter (``api-key=``, ``token=``, ``sig=``, ...), any of those URL-encoded, or echoed back by a
server in its error body. This module knows them all:

* ``redact(text, secrets)``: every known secret (raw, URL-encoded, URL-decoded, base64) and every
  credential-shaped run (bearer and Basic tokens, URL userinfo, secret query values, ``api-key:``
  headers) replaced by ``[REDACTED]``: for error messages and cache entries; ``redact_values``
  replaces the known secrets only (for a model's reply);
* ``display_url(url)``: a base URL fit for logs, manifests, reprs and cache entries;
* ``safe_spec(spec)``: a whole player or judge spec string fit to write, credentials removed from
  every URL inside it, ``?base_url=`` values included, URL-encoded or not;
* ``url_secrets`` and ``conventional_key_values``: the values the backends hand to ``redact``.
"""

from __future__ import annotations

import base64
import binascii
import functools
import os
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, quote, quote_plus, unquote, unquote_plus, urlencode, urlsplit, urlunsplit

__all__ = [
    "REDACTED",
    "conventional_key_values",
    "display_url",
    "is_secret_name",
    "redact",
    "redact_values",
    "safe_spec",
    "scrub_credentials",
    "url_secrets",
]

REDACTED = "[REDACTED]"

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

# Secrets shorter than this are not redacted by value: they would blank out ordinary words.
_MIN_SECRET_LEN = 6

# A parameter is secret when its name *ends* in one of these words (``api-key``, ``access_token``,
# ``sig``, ``X-Amz-Signature``): ``max_tokens`` and ``api_key_env`` (a variable's name) are not.
_SECRET_NAME = re.compile(
    r"(?i)(?:key|token|secret|passw(?:or)?d|passphrase|pwd|sig|signature|credentials?|auth|authorization)$"
)
# Token-like runs only, so prose such as "the bearer of bad news" is left alone.
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{16,}")
# ``Basic base64(user:password)``; redacted only when the run decodes to something with a colon.
_BASIC = re.compile(r"(?i)\b(basic\s+)([A-Za-z0-9+/]{4,}={0,2})")
# ``scheme://userinfo@`` in a URL; URL-encoded (``%3A%2F%2F ... %40``), where an encoded ``/``, ``?``
# or ``#`` ends the authority (the userinfo's own are encoded twice there). A scheme is at most 32
# characters: unbounded, every word of a long dotted run ("a.a.a...") would rescan the rest of it.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,31}://)[^\s/?#@\"'<>\\]+@")
_USERINFO_ENCODED = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,31}%3A%2F%2F)(?:(?!%2F|%3F|%23|%40)[^\s/?#@&\"'<>\\])+%40")
# ``?name=value`` / ``&name=value``, raw or URL-encoded; the value ends at ``&``, ``#``, a quote or a space.
_PARAM = re.compile(r"(?i)((?:[?&;]|%3F|%26)([\w.~-]+)(?:=|%3D))((?:(?!%26)[^&#\s\"'<>\\])+)")
# ``api-key: value``, ``x-api-key=value``, ``api_key='value'`` (a header or a keyword echoed back).
_KEY_HEADER = re.compile(r"(?i)\b((?:x-)?(?:api|subscription)[-_]?key[\"']?\s*[:=]\s*[\"']?)([A-Za-z0-9._~+/=-]{6,})")


def is_secret_name(name: str) -> bool:
    """Whether a query parameter or option called ``name`` holds a credential (``api-key``, ``key``,
    ``token``, ``access_token``, ``sig``, ``client_secret``, ...)."""
    return _SECRET_NAME.search(name.strip()) is not None


def scrub_credentials(text: str) -> str:
    """``text`` without credential-shaped runs: bearer and Basic tokens, ``user:password@`` in URLs
    (removed), secret query values and ``api-key:`` values (``[REDACTED]``), URL-encoded or not.

    It needs no list of secrets; ``redact`` adds the known ones.
    """
    text = _USERINFO_ENCODED.sub(r"\1", _USERINFO.sub(r"\1", text))
    text = _PARAM.sub(lambda m: m.group(1) + REDACTED if is_secret_name(unquote(m.group(2))) else m.group(0), text)
    text = _KEY_HEADER.sub(lambda m: m.group(1) + REDACTED, text)
    text = _BEARER.sub(lambda m: m.group(1) + REDACTED, text)
    return _BASIC.sub(lambda m: m.group(1) + REDACTED if _is_basic_token(m.group(2)) else m.group(0), text)


def _is_basic_token(token: str) -> bool:
    try:
        return b":" in base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False


@functools.lru_cache(maxsize=64)
def _forms(secret: str) -> frozenset[str]:
    """Every form a secret may take in text: as is, URL-decoded, URL-encoded and base64 (the
    ``Basic`` header of a ``user:password`` is its base64). Remembered for the few secrets a process
    holds (every model call redacts its reply with them)."""
    plain = {secret, unquote(secret), unquote_plus(secret)}
    forms: set[str] = set()
    for value in plain:
        encoded = base64.b64encode(value.encode("utf-8", "replace")).decode("ascii")
        urlsafe = base64.urlsafe_b64encode(value.encode("utf-8", "replace")).decode("ascii")
        forms |= {value, quote(value, safe=""), quote(value), quote_plus(value), encoded, encoded.rstrip("=")}
        forms |= {urlsafe, urlsafe.rstrip("=")}
    return frozenset(form for form in forms if len(form) >= _MIN_SECRET_LEN)


def redact_values(text: str, secrets: Iterable[str | None]) -> str:
    """Replace every form of each secret (as is, URL-encoded, URL-decoded, base64) with
    ``[REDACTED]``, and nothing else: for a model's reply, which may discuss tokens and URLs freely
    but must never carry the caller's own key (a server echoing it back)."""
    forms: set[str] = set()
    for secret in secrets:
        if secret and len(secret) >= _MIN_SECRET_LEN:
            forms |= _forms(secret)
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, REDACTED)
    return text


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Replace every form of each secret, and every credential-shaped run, with ``[REDACTED]``.

    Args:
        text: Any text that might carry a secret (an error message, a server's error body, a
            cache entry).
        secrets: The secret values to remove, each in every form it may take (as is, URL-encoded,
            URL-decoded, base64); ``None``, empty and very short values are skipped.

    Returns:
        The text with the secrets replaced and ``scrub_credentials`` applied.

    Example:
        >>> redact("user:sk-secret%40x sent 'Basic dXNlcjpzay1zZWNyZXRAeA=='", ["user:sk-secret%40x"])
        "[REDACTED] sent 'Basic [REDACTED]'"
    """
    return scrub_credentials(redact_values(text, secrets))


@functools.lru_cache(maxsize=256)  # pure, and asked for every call and log record
def display_url(url: str | None) -> str | None:
    """``url`` fit to show or store: without ``user:password@`` and with secret query values
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
        if any(is_secret_name(name) for name, _ in pairs):
            query = urlencode([(name, REDACTED if is_secret_name(name) else value) for name, value in pairs], safe="[]")
    if netloc != parts.netloc or query != parts.query:
        url = urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    return scrub_credentials(url)  # and credentials nested deeper (an encoded URL in a parameter)


@functools.lru_cache(maxsize=256)  # pure, and asked for every call and log record
def safe_spec(spec: str) -> str:
    """A player or judge spec string fit to write to a file or a screen: credentials removed from
    every URL inside it (``?base_url=`` values included, URL-encoded or not, at any depth of
    encoding), secret-named settings (``api_key=``, ``token=``) and credential-shaped runs redacted.

    Offline specs (``heuristic``, ``kb``) and specs without credentials come back unchanged. A run
    whose server URL carried credentials must be given them again to resume.

    Example:
        >>> safe_spec("openai/m?base_url=http://me:sk-1@h/v1?api-key=sk-1&temperature=0")
        'openai/m?base_url=http://h/v1?api-key=[REDACTED]&temperature=0'
    """
    name, sep, query = spec.partition("?")
    if sep:
        settings = []
        for setting in query.split("&"):
            key, eq, value = setting.partition("=")
            if eq and is_secret_name(unquote_plus(key)):
                settings.append(f"{key}={REDACTED}")
            else:
                settings.append(f"{key}{eq}{_scrub_value(value)}")
        spec = name + sep + "&".join(settings)
    return scrub_credentials(spec)


def _scrub_value(value: str, depth: int = 0) -> str:
    """A setting's value without credentials, however many times its URL was encoded."""
    cleaned = scrub_credentials(value)
    decoded = unquote_plus(cleaned)
    if decoded == cleaned or depth >= 4:
        return cleaned
    deeper = _scrub_value(decoded, depth + 1)
    # Credentials found only once decoded: write the cleaned value back, encoded once.
    return cleaned if deeper == decoded else quote(deeper, safe=":/[]")


def url_secrets(url: str | None) -> list[str]:
    """The credentials a URL carries: its userinfo (``user:password``, or a token standing alone), the
    password, the decoded ``user:password`` an HTTP client sends as ``Basic`` (``redact`` knows its
    base64), and secret query values."""
    if url is None:
        return []
    try:
        parts = urlsplit(url)
        userinfo = parts.netloc.rpartition("@")[0]
        found = [userinfo, parts.password or ""]
        if userinfo:  # what an HTTP client base64-encodes into ``Authorization: Basic``
            found.append(f"{unquote(parts.username or '')}:{unquote(parts.password or '')}")
        found += [value for name, value in parse_qsl(parts.query) if is_secret_name(name)]
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
