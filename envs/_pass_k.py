"""Reliability over repeated tries: ``pass^k`` (all of k tries succeed) and ``pass@k`` (at least one does).

With ``--repeats R`` every item is tried R times. For an item tried ``n`` times with ``c`` successes, the
unbiased estimators over its tries (k tries drawn without replacement from the n) are

* ``pass@k = 1 - C(n - c, k) / C(n, k)`` (Chen et al. 2021, the code-generation pass@k);
* ``pass^k = C(c, k) / C(n, k)`` (Yao et al. 2024, tau-bench's reliability measure),

each averaged over the items tried at least k times and reported in percent, for k = 1 .. the most
tries of one item. ``pass^1 == pass@1`` is the mean over items of each item's success share: the plain
success rate when every item has all its tries. A mean over items, each metric is an ``ItemTerms``
(one number per item), so ``compare`` resamples it like any other headline metric.

The tries are the scorer's (``Scorer.tries``): by default each episode's ``Outcome.succeeded()``, an
errored episode a failure; a benchmark whose headline leaves episodes out of its denominator leaves
them out of the tries too (a scoring rule that drops unparsed answers, say).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from lateralgym.envs._scoring import ItemTerms

__all__ = ["is_pass_key", "pass_at_k", "pass_hat_k", "pass_k_rates", "pass_k_terms", "pass_key_order"]

ALL = "pass^"
"""The prefix of ``pass^k``: every one of k tries succeeds."""
ANY = "pass@"
"""The prefix of ``pass@k``: at least one of k tries succeeds."""

_KEY = re.compile(r"^pass([\^@])([1-9][0-9]*)$")


def pass_hat_k(n: int, c: int, k: int) -> float:
    """``pass^k`` of one item: the chance that k of its n tries, drawn without replacement, all succeeded
    (``C(c, k) / C(n, k)``), given c successes.

    Raises:
        ValueError: not ``0 <= c <= n`` and ``1 <= k <= n``.
    """
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def pass_at_k(n: int, c: int, k: int) -> float:
    """``pass@k`` of one item: the chance that at least one of k of its n tries succeeded
    (``1 - C(n - c, k) / C(n, k)``), given c successes.

    Raises:
        ValueError: not ``0 <= c <= n`` and ``1 <= k <= n``.
    """
    _check(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass^k and pass@k need 0 <= c <= n and 1 <= k <= n; got n={n}, c={c}, k={k}")


def pass_k_terms(tries: Sequence[Sequence[bool]]) -> dict[str, ItemTerms]:
    """``pass^1`` .. ``pass^K`` and ``pass@1`` .. ``pass@K`` as ``ItemTerms`` (percent), K the most tries of
    one item; one entry of ``tries`` per item (its tries' successes). An item tried fewer than k times is
    left out of ``pass^k`` and ``pass@k`` (a 0 in both sums). Empty when no item was tried twice: one try
    per item has no spread to measure, and ``pass^1`` is then the success rate itself."""
    most = max((len(t) for t in tries), default=0)
    if most < 2:
        return {}
    counts = [(len(t), sum(map(bool, t))) for t in tries]
    terms: dict[str, ItemTerms] = {}
    for prefix, estimator in ((ALL, pass_hat_k), (ANY, pass_at_k)):
        for k in range(1, most + 1):
            numerator = [estimator(n, c, k) if n >= k else 0.0 for n, c in counts]
            denominator = [1.0 if n >= k else 0.0 for n, _ in counts]
            terms[f"{prefix}{k}"] = ItemTerms(numerator, denominator, 100.0)
    return terms


def pass_k_rates(tries: Sequence[Sequence[bool]]) -> dict[str, float]:
    """``pass_k_terms`` as values: each metric over every item once."""
    rates = {name: terms.value() for name, terms in pass_k_terms(tries).items()}
    return {name: value for name, value in rates.items() if value is not None}


def pass_key_order(name: str) -> tuple[int, int] | None:
    """``(0, k)`` for ``pass^k``, ``(1, k)`` for ``pass@k`` (sorting the keys as reports list them);
    None for any other name."""
    match = _KEY.match(name)
    if match is None:
        return None
    return (0 if match[1] == "^" else 1, int(match[2]))


def is_pass_key(name: str) -> bool:
    """Whether ``name`` is a ``pass^k`` or ``pass@k`` key."""
    return pass_key_order(name) is not None
