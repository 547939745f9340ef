"""BLAS on one thread for small numeric fits.

The logistic fits behind the affordance head and the learned judge multiply matrices of a few hundred
to a few thousand rows; OpenBLAS spreads each product over every core, and on two cores a fit took
7x the CPU it takes on one (8.5 s against 1.2 s for a 40-task head), far more when the cores were busy.
One thread also sums in one order, so a seed gives the same weights on machines with other core counts.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["one_blas_thread"]


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Limit numpy's and scipy's BLAS to one thread for the block (``threadpoolctl``)."""
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

    with threadpool_limits(limits=1, user_api="blas"):
        yield
