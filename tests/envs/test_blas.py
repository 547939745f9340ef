"""Small fits run BLAS on one thread (``envs/_blas.py``): on two cores a 40-task affordance-head fit
took 7x the CPU on two threads, and one thread sums in one order on every machine."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from lateralgym.envs import load_sample_items
from lateralgym.envs._blas import one_blas_thread
from lateralgym.envs.benchmarks.creativity import split_tasks
from lateralgym.envs.benchmarks.creativity.rl import affordance
from lateralgym.envs.benchmarks.creativity.rl.text import make_encoder


def blas_threads() -> list[int]:
    np.ones((2, 2)) @ np.ones((2, 2))  # numpy's BLAS is loaded
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_one_thread_inside_the_block_and_as_before_after() -> None:
    before = blas_threads()
    assert before
    with one_blas_thread():
        assert set(blas_threads()) == {1}
    assert blas_threads() == before


def test_the_affordance_heads_fits_run_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[int]] = []
    real = affordance.minimize

    def minimize(*args: Any, **kwargs: Any) -> Any:
        seen.append(blas_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(affordance, "minimize", minimize)
    tasks = load_sample_items("creativity")
    train, test = split_tasks(tasks, "train")[:12], split_tasks(tasks, "test")[:4]
    affordance.fit_affordance_head(train, test, make_encoder("lexical", dim=8))
    assert seen and all(set(threads) == {1} for threads in seen)
