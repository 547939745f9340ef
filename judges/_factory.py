"""Build a judge from the spec string a config or the command line names."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lateralgym.envs import BENCHMARKS, ConfigError, Judge, did_you_mean, get_benchmark

if TYPE_CHECKING:
    from lateralgym.agents import LLMClient


_CLIENT_ARGS = ("concurrency", "usage", "backoff_base_s", "backoff_max_s", "raise_on_error")
"""``make_judge`` keywords that go to ``LLMClient`` itself rather than into the model spec."""


def offline_judges() -> dict[str, list[str]]:
    """Offline judge specs -> the benchmarks that have a judge of that name."""
    from lateralgym.envs import all_benchmarks

    found: dict[str, list[str]] = {}
    for benchmark in all_benchmarks():
        for name in benchmark.judging.offline_judges:
            found.setdefault(name, []).append(benchmark.name)
    return found


def llm_judge_for(benchmark: str, client: LLMClient, **options: Any) -> Judge:
    """The benchmark's LLM judge on ``client``; a benchmark without one grades by its exact rules.

    A benchmark names its LLM judge as ``module:Class`` (``Benchmark.judging.llm_judge``), imported only here.
    """
    unit = get_benchmark(benchmark)
    if unit.judging.llm_judge is None:
        # Multiple choice needs no model to grade: the exact judge decides, as the papers do.
        return unit.judging.offline_judges[unit.judging.default_judge]()
    judge: Judge = _import(unit.judging.llm_judge)(client, **options)
    return judge


HUMAN = "human"
"""The judge spec of a person judging in the terminal (benchmarks that have one: ``Benchmark.judging.human_judge``)."""


def _import(reference: str) -> Any:
    module_name, _, name = reference.partition(":")
    return getattr(importlib.import_module(module_name), name)


def _human_judge(benchmark: str | None) -> Judge:
    """A person judging in the terminal, as the benchmark names it (``Benchmark.judging.human_judge``)."""
    from lateralgym.envs import all_benchmarks

    unit = get_benchmark(benchmark) if benchmark is not None else None
    if unit is None or unit.judging.human_judge is None:
        judged = (
            ", ".join(f"{b.title or b.name} ({b.name})" for b in all_benchmarks() if b.judging.human_judge) or "nothing"
        )
        raise ConfigError(f"the human judge judges {judged}, not {benchmark}; pick another judge for {benchmark}")
    judge: Judge = _import(unit.judging.human_judge)()
    return judge


def make_judge(
    spec: str,
    *,
    benchmark: str | None = None,
    base_url: str | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    samples: int | None = None,
    temperature: float | None = None,
    **fields: Any,
) -> Judge:
    """The judge ``spec`` names: one of the benchmark's offline judges (``Benchmark.judging.make_judge``: its
    ``offline_judges``, some taking options as ``name?option=value``), ``human`` (a person in the
    terminal, where the benchmark has one), or an LLM as a model spec (the benchmark's LLM judge).

    Args:
        spec: offline judge name (the benchmark's, see ``lateralgym configs``) or model spec,
            ``provider/model[?name=value&...]`` (``openai/gpt-4o-mini?temperature=0``,
            ``openai/NAME?base_url=...`` for an OpenAI-compatible server, ``anthropic/...`` through
            litellm). Besides the generation settings it may carry the judge options ``samples`` and
            ``max_reasks``.
        benchmark: the benchmark judged (its offline judges and its LLM judge protocol).
        base_url: OpenAI-compatible server for the LLM judge, when the spec names none.
        cache_dir: response cache directory (default ``.lateralgym-cache/llm``).
        use_cache: read and write the response cache.
        samples: LLM judge: majority vote over this many samples (wins over the spec's).
        temperature: LLM judge sampling temperature (wins over the spec's).
        **fields: other settings or judge options, winning over the spec's (``timeout``,
            ``max_retries``, ``seed``, ``max_reasks``, ...; ``None`` is ignored), and ``LLMClient``'s
            own arguments (``concurrency``, ``usage``, ``backoff_base_s``, ``backoff_max_s``,
            ``raise_on_error``).

    Raises:
        ConfigError: the spec names no known judge (``LLMConfigError`` for a bad model setup or
            an unknown judge option).
    """
    if spec == HUMAN:
        return _human_judge(benchmark)
    if benchmark is not None:
        offline = get_benchmark(benchmark).judging.make_judge(spec)
        if offline is not None:
            return offline
    from lateralgym.agents import is_model_spec

    if is_model_spec(spec):
        from lateralgym.agents import LOCAL_PROVIDER, LLMClient, ModelSpec
        from lateralgym.judges._asker import JUDGE_OPTIONS

        client_args = {name: fields.pop(name) for name in _CLIENT_ARGS if name in fields}
        model = ModelSpec.parse(spec, samples=samples, temperature=temperature, **fields)
        if model.base_url is None and model.provider != LOCAL_PROVIDER:  # a local model gets its own server
            model = model.merge(base_url=base_url)
        options = model.role_options(JUDGE_OPTIONS, role="judge")
        if benchmark is None:
            raise ConfigError(f"an LLM judge needs the benchmark it judges: make_judge({spec!r}, benchmark=...)")
        client = LLMClient(model, cache_dir=cache_dir, use_cache=use_cache, **client_args)
        return llm_judge_for(benchmark, client, **options)
    known = offline_judges()
    name, _, settings = spec.partition("?")
    if benchmark is not None and not get_benchmark(benchmark).judging.offline_judges:
        raise ConfigError(
            f"benchmark {benchmark!r} defines no offline judge, so judge {spec!r} cannot judge it: give its class "
            "`judging = JudgingPart.having(offline_judges={'name': JudgeClass}, default_judge='name')` "
            "(docs/adding-a-benchmark.md), or name a model judge as provider/model"
        )
    if name in known and benchmark in known[name]:
        raise ConfigError(f"judge {name!r} is an offline judge and takes no settings; drop '?{settings}'")
    if name in known:
        raise ConfigError(
            f"judge {name!r} cannot judge {benchmark} (it judges {', '.join(known[name])}); "
            "pick another judge, e.g. the config's default"
        )
    raise _unknown(spec, known)


def _unknown(spec: str, known: dict[str, list[str]]) -> ConfigError:
    return ConfigError(
        f"unknown judge {spec!r}{did_you_mean(spec, sorted(known))}; offline judges are: {', '.join(sorted(known))}; "
        "or name a model as provider/model (e.g. openai/gpt-4o-mini)"
    )


def check_judge_spec(spec: str) -> None:
    """Refuse a judge spec that names no judge of any benchmark (before the benchmark is known):
    not ``human``, not an offline judge, not a model spec that parses. Whether a given benchmark has
    that judge is ``make_judge``'s to say.

    Raises:
        ConfigError: the spec names no judge (``LLMConfigError``: a model spec that does not parse,
            or a judge option it does not take or whose value it refuses).
    """
    if spec == HUMAN or any(spec.partition("?")[0] in b.judging.offline_judges for b in list(BENCHMARKS.values())):
        return  # a judge of a benchmark loaded already: the others need not load to say so
    from lateralgym.agents import ModelSpec, is_model_spec
    from lateralgym.judges._asker import JUDGE_OPTIONS

    known = offline_judges()
    if spec.partition("?")[0] in known:
        return
    if not is_model_spec(spec):
        raise _unknown(spec, known)
    ModelSpec.parse(spec).role_options(JUDGE_OPTIONS, role="judge")  # as make_judge reads them (samples=0)
