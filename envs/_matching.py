"""Names: normalised for matching and display (``snake`` / ``spaced``), and matched tolerantly: the
player may write ``Led Bulbs`` for ``led_bulbs`` or drop an article."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Sequence

_NOT_ALNUM = re.compile(r"[^0-9a-z]+")


def snake(name: str) -> str:
    """Normalise a name for matching: lower case, runs of non-alphanumerics become one underscore."""
    # Every task of a file checks its entities' names, and they repeat: short names are remembered.
    return _snake_short(name) if len(name) <= _SNAKE_CACHED else _snake(name)


_SNAKE_CACHED = 120


def _snake(name: str) -> str:
    return _NOT_ALNUM.sub("_", name.strip().lower()).strip("_")


_snake_short = functools.lru_cache(maxsize=1 << 14)(_snake)


def spaced(name: str) -> str:
    """A snake_case name as people write it (``led_bulbs`` -> ``led bulbs``)."""
    return name.replace("_", " ").strip()


_ARTICLE = re.compile(r"^(the|a|an|my)_")
_CLOSE_CUTOFF = 0.88


def _key(name: str) -> str:
    # Scenes match against the same entity and part names on every turn: short names are remembered.
    return _short_key(name) if len(name) <= _KEY_CACHED else _ARTICLE.sub("", snake(name))


_KEY_CACHED = 120


@functools.lru_cache(maxsize=1 << 14)
def _short_key(name: str) -> str:
    return _ARTICLE.sub("", snake(name))


def match_name(query: str, names: Sequence[str]) -> str | None:
    """The one name in ``names`` that ``query`` refers to, or None.

    Matching ignores case, spaces vs underscores, punctuation and a leading article; a near-miss
    spelling (difflib ratio >= 0.88) matches when it is unambiguous. A query matching no name is a
    hallucination (counted separately by the metrics).
    """
    return NameMatcher(names).match(query)


class NameMatcher:
    """``match_name`` over names fixed in advance (a task's entities), their keys computed once."""

    __slots__ = ("_keys", "_order_free")

    def __init__(self, names: Sequence[str]) -> None:
        self._keys = {name: _key(name) for name in names}
        self._order_free: bool | None = None

    @property
    def order_free(self) -> bool:
        """No two names share a key, so a match does not depend on the order the names came in (one
        matcher serves every ordering of them; with shared keys the first listed wins a tie)."""
        if self._order_free is None:
            self._order_free = len(set(self._keys.values())) == len(self._keys)
        return self._order_free

    def match(self, query: str) -> str | None:
        """``match_name(query, names)``."""
        if query in self._keys and self._keys[query] and self.order_free:
            return query  # one of the names as written (what a program sends): its key is its own
        key = _key(query)
        if not key:
            return None
        keys = self._keys
        exact = [name for name, k in keys.items() if k == key]
        if len(exact) == 1:
            return exact[0]
        close = difflib.get_close_matches(key, list(keys.values()), n=2, cutoff=_CLOSE_CUTOFF)
        if len(close) == 1 or (len(close) == 2 and difflib.SequenceMatcher(None, key, close[0]).ratio() == 1.0):
            return next(name for name, k in keys.items() if k == close[0])
        return None


_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\u3040-\u30ff]")
_WORD = re.compile(
    r"[\u2e80-\u9fff\uf900-\ufaff\u3040-\u30ff]"  # CJK ideographs and kana: one token each
    r"|[^\W_\u2e80-\u9fff\uf900-\ufaff\u3040-\u30ff]+"  # other letters and digits, in runs
)


def words(text: str) -> list[str]:
    """Lower-case word tokens of ``text``, in any script.

    Runs of letters and digits form a word (``café``, ``πr``, ``2000``); Chinese and Japanese
    characters, written without spaces, are one token each, so overlap and leak checks work on
    them too.
    """
    return _WORD.findall(text.lower())


STOPWORDS = frozenset(
    "a an the and or but if of to in on at by for with from into onto over under about as is are was were be "
    "been being it its this that these those there here i me my we our you your he she him her his they them "
    "their what which who whom whose when where why how can could would should will shall may might must do "
    "does did have has had not no yes so than then too very just only also all any some each one two up down "
    "out off again more most other such own same few both through during before after above below between".split()
)


def content_words(text: str) -> set[str]:
    """Tokens of ``text`` that carry meaning (stopwords and 1-letter Latin tokens dropped; a
    Chinese or Japanese character is a word of its own)."""
    return {w for w in words(text) if w not in STOPWORDS and (len(w) > 1 or _CJK.match(w))}


def stem(word: str) -> str:
    """A crude suffix-stripping stem (``drowned`` -> ``drown``) so overlap counts word families."""
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


@functools.lru_cache(maxsize=8192)
def content_stems(text: str) -> frozenset[str]:
    """Stems of the content words of ``text`` (cached: judges and policies ask for the same story,
    answer and attribute texts on every turn)."""
    return frozenset(stem(w) for w in content_words(text))
