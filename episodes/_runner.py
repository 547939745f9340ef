"""Roll out a player against a config's env for many episodes, concurrently, into a run directory.

A run directory holds ``config.yaml`` (the resolved config, with the player and judge that ran),
``manifest.json`` (a ``Manifest``: package version, the ``RunOptions`` it ran with, the episode plan
with every episode's seed; no secrets, no git), ``steps.jsonl`` (the step log), ``summary.json``
(the metrics and the model usage per role) and ``report.md`` (every table; ``lateralgym report``
adds figures). ``run(..., resume=RUN_DIR)`` finishes a killed run (``_resume.py``): episodes with
an end record are kept, an episode a person left under way goes on from its last logged move
(``_continue.py``), other partial ones are dropped from the log and run again, so every episode is
counted exactly once. A run holds the lock on its directory (``_rundir.locked``) for its whole
life, and reads a resumed run's manifest once, under the lock.

``run_async`` sets a run up (options resolved, player and judge built, servers checked, plan made,
directory made and locked) and hands one ``RollOut`` to ``_play.roll_out``. Everything runs on one
event loop: the player and the judge (inside ``env.astep``) await their models directly, so Ctrl-C
cancels whatever is in flight at once and ``--llm-concurrency`` bounds both roles together. With
``backend="ray"`` Ray workers play the episodes (``_ray.py``) and this process alone writes the log.
"""

from __future__ import annotations

import asyncio
import gc
import shutil
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from lateralgym.agents import (
    DEFAULT_CONCURRENCY,
    ServedModel,
    is_model_spec,
    safe_spec,
    serving,
    set_default_concurrency,
)
from lateralgym.envs import ConfigError, EpisodeConfig, Judge, LateralEnv, load_config_items
from lateralgym.envs.support import check_hints
from lateralgym.episodes._manifest import Manifest, new_manifest, read_manifest, require_run_dir
from lateralgym.episodes._options import HUMAN, RunOptions, check_people, limit_note, plan_episodes
from lateralgym.episodes._play import FailureWatch, RollOut, RunResult, roll_out
from lateralgym.episodes._roles import AgentFactory, build_judge, build_player, check_model_servers
from lateralgym.episodes._rundir import (
    CONFIG_FILE,
    MANIFEST,
    RunDirError,
    locked,
    new_run_dir,
    os_reason,
    write_json,
)

if TYPE_CHECKING:
    from lateralgym.episodes._dryrun import DryRun
    from lateralgym.episodes._resume import ResumeRequest

__all__ = ["current_run_dir", "run", "run_async"]


class _RunState:
    """The run directory of the run this process is executing (for the CLI's interrupt message)."""

    run_dir: Path | None = None


_state = _RunState()


def current_run_dir() -> Path | None:
    """The run directory this process is running or resuming (None before one is made), for the
    line that tells a person who stopped a run how to finish it."""
    return _state.run_dir


class _Collector:
    """Python's cyclic garbage collector kept off the objects a run finds made (``gc.freeze``).

    A full collection walks every object the process holds, and most are the modules, classes and
    functions imported before the run: ~180,000 of them with an LLM client, 0.1-0.3 s of CPU a walk
    on the benchmark machine, two or three walks in a run of 600 episodes (set-up and the metrics'
    re-reading of the log allocate enough to start one), a quarter of a short run's CPU. Frozen,
    they are skipped; what the run makes is still collected as usual, and the frozen objects go back
    to the oldest generation when the last run of the process ends. A process that froze objects
    itself (``gc.get_freeze_count()``) or turned the collector off is left as it is.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs = 0
        self._ours = False

    @contextmanager
    def frozen(self) -> Iterator[None]:
        """Freeze what exists for the block's length (runs may nest or overlap in threads)."""
        with self._lock:
            if self._runs == 0:
                self._ours = gc.isenabled() and gc.get_freeze_count() == 0
            self._runs += 1
            if self._ours:
                gc.freeze()
        try:
            yield
        finally:
            with self._lock:
                self._runs -= 1
                if self._runs == 0 and self._ours:
                    self._ours = False
                    gc.unfreeze()

    def refreeze(self) -> None:
        """Freeze what a run's set-up made too (items, envs, modules it imported), before its episodes."""
        with self._lock:
            if self._ours:
                gc.freeze()


_collector = _Collector()


def run(
    config: EpisodeConfig | str | None = None,
    options: RunOptions | None = None,
    *,
    resume: str | Path | ResumeRequest | None = None,
    items: Sequence[Any] | None = None,
    agent_factory: AgentFactory | None = None,
    judge_obj: Judge | None = None,
    **settings: Any,
) -> RunResult:
    """Run episodes of ``config`` (an ``EpisodeConfig``, a shipped config name or a YAML path), or
    finish the run in ``resume`` (``config`` is then ignored: the run's own is used).

    Args:
        config: what to run.
        options: the run's settings (``RunOptions``; default: all defaults).
        resume: a run directory to finish instead of starting a run (or a ``ResumeRequest`` saying
            what the caller takes the run's config to be); its config, player, judge, limit,
            repeats and plan are kept (given ones must match), while its servers, cache use and
            speed are this call's (``base_url`` moves every role that followed it).
        items: items to run on (default ``config.dataset`` or the sample data).
        agent_factory: builds a player from a seed (instead of ``options.player``'s construction).
        judge_obj: a ``Judge`` to use instead of the one ``options.judge`` names.
        **settings: ``RunOptions`` fields merged into ``options`` (``run(config, player="oracle",
            limit=5)``).

    Returns:
        The run directory, counts (``errored``: episodes of this call that ended in an error),
        metrics and model usage per role.

    Raises:
        ConfigError: a bad config or setting, or nothing to run; ``RunLockedError`` when another
            process is running the directory.
        RunDirError: the run directory cannot be created or written (the episodes already written
            are kept; resume to finish).
        EndpointCheckError: ``options.check`` found a model server down or refusing the key (nothing made).
    """
    options = (options or RunOptions()).merge(**settings)
    if config is None or isinstance(config, EpisodeConfig) or resume is not None:
        cfg = config if isinstance(config, EpisodeConfig) else None
    else:
        cfg = EpisodeConfig.named(config)
    return asyncio.run(
        run_async(cfg, options, resume=resume, items=items, agent_factory=agent_factory, judge_obj=judge_obj)
    )


async def run_async(
    config: EpisodeConfig | None,
    options: RunOptions | None = None,
    *,
    resume: str | Path | ResumeRequest | None = None,
    items: Sequence[Any] | None = None,
    agent_factory: AgentFactory | None = None,
    judge_obj: Judge | None = None,
) -> RunResult:
    """``run`` on the caller's event loop; see ``run``."""
    options = options or RunOptions()
    if isinstance(resume, str | Path):
        from lateralgym.episodes._resume import ResumeRequest

        resume = ResumeRequest(run_dir=Path(resume))
    request = resume
    manifest: Manifest | None = None
    with ExitStack() as held:
        held.enter_context(_collector.frozen())
        held.enter_context(serving())  # local/ models' servers stop with the run, however it ends
        if request is not None:
            from lateralgym.episodes._resume import resume_options

            run_dir = request.run_dir
            require_run_dir(run_dir)  # before a lock file is made in it
            _state.run_dir = run_dir
            held.enter_context(locked(run_dir))
            manifest = read_manifest(run_dir)  # under the lock: its last holder may have just written it
            config, options = resume_options(request, manifest, options)
            run_id = manifest.run_id
        elif config is None:
            raise ConfigError("give a config to run, or a run directory to resume")
        else:
            # validated again: model_copy(update=...) skips the checks (a name with '/', a seed of -1)
            config = EpisodeConfig.from_dict(config.model_dump(mode="json"), source=f"config {config.name!r}")
        if options.backend == "ray" and agent_factory is not None:
            raise ConfigError("--backend ray builds players from the player spec: pass player=..., not agent_factory")
        check_hints(config)  # before anything is made (a resumed run's config too)
        options = _settled(options, config, judge_obj)
        if options.backend == "ray" and any(_local(spec) for spec in (options.player, options.judge)):
            raise ConfigError(
                "a local/ model is served by this process: drop --backend ray (or serve the model yourself and "
                "name it openai/NAME with --base-url)"
            )
        if items is None:
            items = load_config_items(config)
        dry = _plan_local_servers(config, options, items)
        judge = judge_obj or build_judge(config, options)
        # the spec as given, options and all (the judge's name is only provider/model), so a
        # resume builds the same judge
        raw_judge = options.judge if judge_obj is None else getattr(judge_obj, "name", str(judge_obj))
        assert options.player is not None and raw_judge is not None  # filled in from the config above
        factory = agent_factory or build_player(config, options, items)
        served = _served(factory, judge)
        if manifest is not None:
            _same_models(manifest, served)
        # config.yaml tells the truth: the player and judge that actually run.
        config = config.model_copy(update={"player": safe_spec(options.player), "judge": safe_spec(raw_judge)})
        envs = [LateralEnv(config, items=items, judge=judge)]  # fail now (e.g. a wrong judge), not mid-run
        if options.check:  # a dead server or a wrong key stops the run now, before anything is made
            await check_model_servers(factory, judge, resuming=manifest is not None)
        if served and manifest is None:  # a local model's speed depends on this machine: say what to expect
            from lateralgym.episodes._estimate import time_estimate

            estimate = await time_estimate(config, options, items, served, dry)
            if estimate is not None:
                print(estimate.line(), flush=True)
        if manifest is not None:
            plan = list(manifest.episodes or [])
        else:
            plan = plan_episodes(items, config.seed, options.limit, options.repeats, sample=options.sample)
            note = limit_note(items, options.limit)
            if note is not None:  # a few items that stand for one scene or band alone: said before they run
                print(f"warning: {note}", file=sys.stderr, flush=True)
        if not plan:
            raise ConfigError("nothing to run: the dataset is empty")
        card = _judge_card(options, config.benchmark, raw_judge, served) if manifest is None else None
        if manifest is None:
            # created only now, so a run that fails to set up leaves no directory behind
            run_dir, run_id = new_run_dir(options.out, config.name, options.player, judge=raw_judge)
            _state.run_dir = run_dir
            new = new_manifest(run_id, config, options, raw_judge, plan).model_copy(
                update={"served": served, "judge_card": card}
            )
            _start(run_dir, held, new, config, options.out)
        if any(getattr(owner, "client", None) is not None for owner in (factory, judge)):  # a model's
            from lateralgym.episodes._prompts_log import attach_prompt_store

            # each distinct prompt sent, once, in prompts/; all on disk before the lock is released
            held.callback(attach_prompt_store(run_dir, factory, judge).close)
        watch = FailureWatch(options.stop_after_errors)
        _collector.refreeze()
        try:
            return await roll_out(
                RollOut(config, options, plan, run_dir, run_id, items, envs, judge, judge_obj, factory, watch)
            )
        except OSError as exc:
            raise RunDirError(
                f"cannot write the run in {run_dir}: {os_reason(exc)}; the episodes already written are kept: "
                f"fix that, then finish the run with: lateralgym run --resume {run_dir}"
            ) from exc


def _local(spec: str | None) -> bool:
    if spec is None or not is_model_spec(spec):
        return False
    from lateralgym.agents import LOCAL_PROVIDER, ModelSpec  # a model's spec: parsed only for one

    return ModelSpec.parse(spec).provider == LOCAL_PROVIDER


def _plan_local_servers(config: EpisodeConfig, options: RunOptions, items: Sequence[Any]) -> DryRun | None:
    """Size the run's ``local/`` servers (``plan_local``) to its longest prompt and the conversations it
    holds at once (episodes in flight, times the local roles); the plan made for it, None without one."""
    roles = sum(1 for spec in (options.player, options.judge) if _local(spec))
    if not roles:
        return None
    from lateralgym.agents import plan_local
    from lateralgym.episodes._dryrun import dry_run

    dry = dry_run(config, options, items=items)
    plan_local(dry.longest_prompt, dry.longest_reply, options.concurrency * roles)
    return dry


def _judge_card(options: RunOptions, benchmark: str, judge: str, served: list[ServedModel]) -> Any:
    """The ``--judge-card`` read and checked against the run's judge (None when none is given).

    Raises:
        ConfigError: the card is unreadable, or measured another judge, benchmark or model file.
    """
    if options.judge_card is None:
        return None
    from lateralgym.judges import check_card, read_card

    card = read_card(options.judge_card)
    model = next((m.sha256 for m in served if m.spec == judge), None)
    check_card(card, judge=judge, benchmark=benchmark, model_sha256=model, path=options.judge_card)
    return card


def _served(factory: Any, judge: Any) -> list[ServedModel]:
    """The local models the player's and the judge's clients are served by (one entry per server)."""
    clients = (getattr(factory, "client", None), getattr(judge, "client", None))
    served = [client.local for client in clients if client is not None and getattr(client, "local", None)]
    return list({(s.path, s.base_url): s for s in served}.values())


def _same_models(manifest: Manifest, served: list[ServedModel]) -> None:
    """Refuse to resume a run on a local model file other than the one it started with.

    Raises:
        ConfigError: a ``local/`` spec now names a file with another sha256.
    """
    now = {s.spec: s for s in served}
    for before in manifest.served:
        after = now.get(before.spec)
        if after is not None and after.sha256 != before.sha256:
            raise ConfigError(
                f"{before.spec} is not the model this run started with ({before.path}, sha256 {before.sha256[:12]}...; "
                f"now {after.path}, sha256 {after.sha256[:12]}...): resume with the same file, or start a new run"
            )


def _settled(options: RunOptions, config: EpisodeConfig, judge_obj: Judge | None) -> RunOptions:
    """The options a run runs with: the LLM cap and cache use applied, the config's player and
    judge where none is given, and one episode at a time without a bar when a person takes part.

    Raises:
        ConfigError: a spec of the config's names nothing, or a person cannot take part this way.
    """
    # unless given, the LLM cap follows --concurrency, so 64 episodes in flight are not held to 8 requests
    llm_cap = options.llm_concurrency or max(DEFAULT_CONCURRENCY, options.concurrency)
    set_default_concurrency(llm_cap, adaptive=options.adaptive_concurrency)
    options = options.merge(use_cache=options.use_cache is not False, llm_concurrency=llm_cap)
    if judge_obj is None:
        options = options.with_config(config)
        judge_name = options.judge
    else:
        options = options.merge(player=options.player or config.player)
        judge_name = getattr(judge_obj, "name", None) or config.judge
        check_people(options.player, judge_name, options.backend)
    if HUMAN in (options.player, judge_name):
        # one person, one episode at a time; no bar redrawn over the prompt
        options = options.merge(concurrency=1, progress=False)
    return options


def _start(run_dir: Path, held: ExitStack, manifest: Manifest, config: EpisodeConfig, out: Path) -> None:
    """Lock the new run directory and write its config and manifest; on failure remove it.

    Raises:
        RunDirError: the directory cannot be locked or written (nothing is left behind).
    """
    try:
        held.enter_context(locked(run_dir))
        (run_dir / CONFIG_FILE).write_text(
            yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True), encoding="utf-8"
        )
        write_json(run_dir / MANIFEST, manifest.model_dump(mode="json"))
    except (OSError, RunDirError) as exc:
        shutil.rmtree(run_dir, ignore_errors=True)  # ours, just made: no half-made run to resume
        reason = os_reason(exc) if isinstance(exc, OSError) else str(exc)
        raise RunDirError(f"cannot create a run directory in {out} (--out): {reason}") from exc
