"""``pass^k`` and ``pass@k``: the unbiased estimators over an item's tries, checked by hand and against
counting every draw of k tries; their ``ItemTerms`` over items of unequal tries."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lateralgym.envs import is_pass_key, pass_at_k, pass_hat_k, pass_k_rates, pass_k_terms, pass_key_order


def test_hand_computed_cases() -> None:
    # n = 5 tries, c = 2 successes, k = 2: C(2,2)/C(5,2) = 1/10 all succeed; 1 - C(3,2)/C(5,2) = 7/10 some
    assert pass_hat_k(5, 2, 2) == pytest.approx(0.1)
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    # n = 4, c = 3, k = 3: C(3,3)/C(4,3) = 1/4; only one failure, so any 3 tries hold a success
    assert pass_hat_k(4, 3, 3) == pytest.approx(0.25)
    assert pass_at_k(4, 3, 3) == 1.0
    # n = 10, c = 4, k = 3: C(4,3)/C(10,3) = 4/120; 1 - C(6,3)/C(10,3) = 1 - 20/120
    assert pass_hat_k(10, 4, 3) == pytest.approx(4 / 120)
    assert pass_at_k(10, 4, 3) == pytest.approx(100 / 120)


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_k_one_is_the_success_share(n: int) -> None:
    for c in range(n + 1):
        assert pass_hat_k(n, c, 1) == pytest.approx(c / n)
        assert pass_at_k(n, c, 1) == pytest.approx(c / n)


@pytest.mark.parametrize("n", [1, 2, 4, 9])
def test_k_equal_to_n_is_all_or_any_of_the_tries(n: int) -> None:
    for c in range(n + 1):
        assert pass_hat_k(n, c, n) == (1.0 if c == n else 0.0)
        assert pass_at_k(n, c, n) == (1.0 if c > 0 else 0.0)


@pytest.mark.parametrize("n", [1, 3, 6])
def test_an_item_never_solved_and_one_always_solved(n: int) -> None:
    for k in range(1, n + 1):
        assert (pass_hat_k(n, 0, k), pass_at_k(n, 0, k)) == (0.0, 0.0)
        assert (pass_hat_k(n, n, k), pass_at_k(n, n, k)) == (1.0, 1.0)


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4), (0, 0, 1)])
def test_impossible_counts_are_refused(n: int, c: int, k: int) -> None:
    for estimator in (pass_hat_k, pass_at_k):
        with pytest.raises(ValueError, match="1 <= k <= n"):
            estimator(n, c, k)


@given(st.lists(st.booleans(), min_size=1, max_size=8), st.integers(min_value=1, max_value=8))
def test_the_estimators_count_every_draw_of_k_tries(tries: list[bool], k: int) -> None:
    """Unbiased: the share of the C(n, k) ways to pick k of the tries in which all (some) succeeded."""
    if k > len(tries):
        return
    draws = list(itertools.combinations(tries, k))
    assert len(draws) == math.comb(len(tries), k)
    assert pass_hat_k(len(tries), sum(tries), k) == pytest.approx(sum(all(d) for d in draws) / len(draws))
    assert pass_at_k(len(tries), sum(tries), k) == pytest.approx(sum(any(d) for d in draws) / len(draws))


def test_rates_average_over_items_in_percent() -> None:
    tries = [[True, False, True, True], [False] * 4, [True] * 4]
    rates = pass_k_rates(tries)
    assert list(rates) == [f"pass^{k}" for k in range(1, 5)] + [f"pass@{k}" for k in range(1, 5)]
    # item 1 (c = 3 of 4): pass^k 3/4, 1/2, 1/4, 0 and pass@k 3/4, 1, 1, 1; item 2 always 0, item 3 always 1
    hat = [0.75, 0.5, 0.25, 0.0]
    at = [0.75, 1.0, 1.0, 1.0]
    for k in range(1, 5):
        assert rates[f"pass^{k}"] == pytest.approx(100 * (hat[k - 1] + 0 + 1) / 3)
        assert rates[f"pass@{k}"] == pytest.approx(100 * (at[k - 1] + 0 + 1) / 3)
    assert rates["pass^1"] == rates["pass@1"] == pytest.approx(100 * 7 / 12)  # the plain success rate


def test_an_item_with_fewer_tries_is_left_out_of_the_larger_k() -> None:
    # a killed run: the second item has two of its three tries
    terms = pass_k_terms([[True, True, False], [True, False]])
    assert terms["pass^3"].denominator == [1.0, 0.0]
    assert terms["pass^2"].numerator == pytest.approx([1 / 3, 0.0])
    rates = pass_k_rates([[True, True, False], [True, False]])
    assert rates["pass^2"] == pytest.approx(100 * (1 / 3 + 0) / 2)
    assert rates["pass@2"] == pytest.approx(100 * (1 + 1) / 2)
    assert rates["pass^3"] == 0.0 and rates["pass@3"] == 100.0  # the first item alone
    # an item with no try at all (every episode dropped) counts for no k
    assert pass_k_rates([[True, False], []]) == pass_k_rates([[True, False]])


def test_one_try_per_item_gives_no_keys() -> None:
    assert pass_k_terms([[True], [False]]) == {}
    assert pass_k_rates([]) == {}


def test_key_names() -> None:
    assert pass_key_order("pass^3") == (0, 3) and pass_key_order("pass@12") == (1, 12)
    for other in ("pass^0", "pass^", "pass@k", "acc", "pass^2_low", "xpass@2"):
        assert not is_pass_key(other), other
