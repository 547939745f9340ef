"""The facts a report states about its run: judge, dataset, progress against the plan, model use.

A report is read apart from the run (pasted in a paper draft, sent to a colleague), so it says
what produced the numbers: the judge (with what an offline judge can and cannot do), the dataset,
whether the run finished its plan (a partial run's rates are of the episodes done so far), and the
tokens and cost per role, summed from the step log.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from lateralgym.envs import judge_note
from lateralgym.episodes._log import Usage
from lateralgym.episodes._manifest import RunRecord
from lateralgym.episodes._metrics import RunMetrics

__all__ = ["cost_text", "items_chosen", "judge_agreement", "local_roles", "partial_warning", "run_facts", "usage_text"]

_LOOPBACK = ("localhost", "::1", "0.0.0.0")


def local_roles(run: RunRecord) -> set[str]:
    """The roles (``player``, ``judge``) whose model server the run's manifest puts on this machine, where
    an unpriced model costs nothing rather than an unknown amount."""
    if run.manifest is None:
        return set()
    recorded = run.manifest.options
    urls = {"player": recorded.base_url, "judge": recorded.judge_base_url or recorded.base_url}
    return {
        role
        for role, url in urls.items()
        if url and ((host := urlsplit(url).hostname or "") in _LOOPBACK or host.startswith("127."))
    }


def cost_text(usage: Usage, local: bool = False) -> str:
    """``$0.0012``; for an unpriced model ``local: free`` when its server is on this machine, else ``unknown``."""
    if usage.cost_usd is not None:
        return f"${usage.cost_usd:.4f}"
    return "local: free" if local else "unknown"


def usage_text(usage: Usage, local: bool = False) -> str:
    """``12 calls (3 cache hits, 1 failed), 1,234 + 567 tokens, cost $0.0012`` (see ``cost_text``)."""
    extra = [f"{usage.cache_hits} cache hits"] if usage.cache_hits else []
    extra += [f"{usage.failed_calls} failed"] if usage.failed_calls else []
    cost = cost_text(usage, local)
    calls = f"{usage.calls} calls" + (f" ({', '.join(extra)})" if extra else "")
    return f"{calls}, {usage.prompt_tokens:,} + {usage.completion_tokens:,} tokens, cost {cost}"


def partial_warning(run: RunRecord, metrics: RunMetrics) -> str | None:
    """The warning for a run that has not finished its plan, or None."""
    planned = run.planned
    if planned is None or metrics.episodes >= planned:
        return None
    return (
        f"Partial run: {metrics.episodes} of {planned} planned episodes finished; the numbers are of those only. "
        f"Finish it with `lateralgym run --resume {run.run_dir}`"
    )


def judge_agreement(run: RunRecord, benchmark: str, *, short: bool = False) -> str | None:
    """How far the run's judge agrees with people: its card's figures (``--judge-card``), "unmeasured"
    for a benchmark whose judges can be measured (it reads human-labelled judgements), None otherwise
    (a judge that grades exactly, as the paper does)."""
    from lateralgym.envs import ConfigError, get_benchmark

    card = run.manifest.judge_card if run.manifest else None
    if card is not None:
        return card.short() if short else card.summary()
    try:
        measurable = bool(get_benchmark(benchmark).judging.judgement_formats)
    except ConfigError:
        return None
    if not measurable:
        return None
    if short:
        return "agreement with people unmeasured"
    return (
        "unmeasured: no judge card (measure it: lateralgym judges eval DATA --judge SPEC --save-card CARD, "
        "then run with --judge-card CARD)"
    )


def items_chosen(run: RunRecord) -> str:
    """Which of the dataset's items the run played: a ``--sample`` (its size and seed), the first
    ``--limit``, or blank for all of them (or a run without a manifest)."""
    if run.manifest is None:
        return ""
    options = run.manifest.options
    if options.sample is not None:
        return (
            f"a sample of {options.sample} (--sample {options.sample}, seed {run.manifest.seed}), spread over the "
            "benchmark's groups"
        )
    if options.limit is not None:
        return f"the first {options.limit} (--limit {options.limit}), with the rest of any group they touch"
    return ""


def run_facts(metrics: RunMetrics, run: RunRecord, usage: dict[str, Usage]) -> list[tuple[str, Any]]:
    """Rows for the report's header table: judge, dataset, episodes against the plan, use per role."""
    judge = (run.manifest.options.judge if run.manifest else None) or ""
    note = judge_note(metrics.benchmark, judge)
    planned = run.planned
    facts: list[tuple[str, Any]] = [
        ("judge", f"{judge} ({note})" if note else judge),
        ("dataset", run.manifest.dataset if run.manifest else ""),
    ]
    chosen = items_chosen(run)
    if chosen:
        facts.append(("items played", chosen))
    agreement = judge_agreement(run, metrics.benchmark)
    if agreement is not None:
        facts.append(("judge agreement with people", agreement))
    if planned is not None:
        state = "finished" if metrics.episodes >= planned else "partial"
        facts.append(("planned episodes", f"{planned} ({state}: {metrics.episodes} done)"))
    local = local_roles(run)
    for role, used in usage.items():
        facts.append((f"{role} model use", usage_text(used, role in local)))
    return facts
