"""On-disk response cache: one JSON file per request, keyed by a sha256 of the full request.

An entry holds the request and the ``ModelCall`` that answered it, as the original call returned
it (tokens, cost, latency and attempts of that call); the client turns it into this call's record
on a hit (``cache_hit``, no attempts, no cost, the caller's role). Only a usable reply is stored
(``cacheable``: text, no error), and an entry without one reads as a miss, so a bad answer is never
replayed; entries are valid UTF-8 and carry no credential.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lateralgym.agents._llm_secrets import redact
from lateralgym.envs import ModelCall
from lateralgym.envs.support import writable

CACHE_FORMAT = 2
"""Version of the entry layout; part of every key, so a change never reads old entries.
2: entries hold a ``ModelCall`` (1 held the reply's text, model, tokens and cost)."""

DEFAULT_CACHE_DIR = Path(".lateralgym-cache") / "llm"
"""Where the cache lives by default, relative to the working directory."""


def cacheable(call: ModelCall) -> bool:
    """Whether ``call`` answered with a usable reply (some text, no error), the only kind cached."""
    return call.error is None and bool(call.text.strip())


def request_key(request: Mapping[str, Any]) -> str:
    """The sha256 hex digest of a request, canonically serialised.

    The request must not contain an API key; the client builds it from the
    model, base URL (without credentials), messages, sampling parameters and
    the caller's cache tag only. A lone surrogate in a string still gives a key
    (``surrogatepass``); text that is valid UTF-8 keys as it always did.
    """
    canonical = json.dumps(
        {"format": CACHE_FORMAT, **request},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


class ResponseCache:
    """A directory of cached replies, ``<dir>/<key[:2]>/<key>.json``.

    Writes are atomic (a temporary file in the same directory, then
    ``os.replace``), so readers never see half an entry; an unreadable entry
    counts as a miss and is overwritten by the next put.

    Args:
        directory: The cache directory; created on first write.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.directory)!r})"

    def path_for(self, key: str) -> Path:
        """The file that holds (or would hold) the entry for ``key``."""
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> ModelCall | None:
        """The call cached for ``key`` (as the original call returned it), or ``None`` on a miss or
        an unreadable entry."""
        try:
            entry = json.loads(self.path_for(key).read_text(encoding="utf-8"))
            if entry.get("key") != key or entry.get("format") != CACHE_FORMAT:
                return None
            call = ModelCall.model_validate(entry["call"])  # an odd character in an old entry is made writable
            return call if cacheable(call) else None
        except (OSError, ValueError, KeyError, TypeError, AttributeError, ValidationError):
            return None

    def put(
        self,
        key: str,
        request: Mapping[str, Any],
        call: ModelCall,
        *,
        secrets: Iterable[str | None] = (),
    ) -> Path | None:
        """Write one entry atomically, unless the call is not fit to replay.

        Args:
            key: The request's key (``request_key(request)``).
            request: The request, stored beside the call for inspection (its text made writable:
                a lone surrogate in a prompt keys the entry, but is stored as U+FFFD).
            call: The call that answered it, replayed on a hit.
            secrets: Values redacted from the request before it is written (every form of them, and
                any credential-shaped text), as a last line of defence (the request should hold none).

        Returns:
            The path of the entry, or ``None`` when nothing was written: the call is not
            ``cacheable`` (an error, or no text), or its reply carries a credential (a server
            echoing a key), which is neither written nor replayed altered: it is asked again.

        Raises:
            OSError: The entry could not be written.
        """
        if not cacheable(call):
            return None
        secrets = list(secrets)
        stored = call.model_dump(mode="json")
        entry = {
            "format": CACHE_FORMAT,
            "key": key,
            "created_at": time.time(),
            "request": dict(request),
            "call": stored,
        }
        raw = writable(json.dumps(entry, ensure_ascii=False, default=str))
        text = redact(raw, secrets)
        if text != raw:  # something to redact somewhere: a reply carrying it is not stored at all
            shown = json.dumps(stored, ensure_ascii=False)
            if redact(shown, secrets) != shown:
                return None
        path = self.path_for(key)
        try:
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        except FileNotFoundError:  # the folder's first entry (asking first would cost every put a call)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    def clear(self) -> int:
        """Delete every entry; returns how many were deleted."""
        removed = 0
        for path in self.directory.glob("*/*.json"):
            path.unlink(missing_ok=True)
            removed += 1
        return removed
