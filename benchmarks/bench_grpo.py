"""Seconds per GRPO step of ``lateralgym train grpo``, against TRL's own ``GRPOTrainer`` with a constant reward.

LateralGym: ``train_grpo`` itself (the ``grpo`` extra), on ``local/smollm2`` by default (SmolLM2-135M, the
GGUF dequantised once into the cache folder, as ``train grpo`` loads it), with its defaults (8 completions
of at most 32 tokens per move, temperature 1, 2 torch threads, seed 0), one held-out item evaluated
(untimed; the run's before/after play is no step) and no checkpoint during the timed steps. Two routes:

* ``plain`` (``--config``, default ``riddlesense``): a single-move config, GRPO's plain route; each
  completion is one move of a fresh episode, graded by the env through the player's parser.
* ``multi`` (``--multi-config``, default ``splat``, ``--max-turns`` 3): a multi-turn config through TRL's
  ``rollout_func``: whole episodes, each turn one ``generate`` call, the env's replies masked out.

Floor: TRL's ``GRPOTrainer`` on the same model (loaded the same way), with the very ``GRPOConfig`` the
LateralGym side built (captured from its trainer: the same seed, threads, batch, generation settings),
the same prompts (the LateralGym side's dataset rows, without the episode key), and a constant reward (0
for every completion, one function per reward function of the LateralGym side). On the plain route
the two sides sample the same tokens (the same seed, prompts and model): the same completion lengths,
checked and printed. On the multi route TRL alone cannot play turns, so the floor writes completions
of a fixed length (``min_new_tokens`` = ``max_completion_length``) equal to the mean, over the
LateralGym side's timed steps, of each step's longest completion (the model's tokens and the env's,
which the loss pads to), in one ``generate`` call: the ratio there includes what several turns cost
against one (each turn reads its whole context again), which is the route's, not the env's.

Both sides are timed the same way: a trainer callback reads the clock (wall, and this process's CPU
time beside it) at the end of every step, and a round's figure is the mean period from the end of the
first step to the end of the last (the first step of a trainer pays for its first touches: optimizer
state, data loader), so ``--steps`` N runs N + 1 steps. Nothing after the last step is timed (the
checkpoint TRL writes at the end, the LateralGym side's held-out play and model folder).

After one untimed one-step warm-up run per side come ``--rounds`` rounds of both sides, LateralGym
first in the first (the floor takes its arguments and prompts), then in turn floor-first and
LateralGym-first, each run a fresh trainer on a freshly loaded model. Then one LateralGym run under
cProfile: the top entries by cumulative time among LateralGym's own functions (TRL, transformers and
torch are left out of the listing), and what the route adds per step (plain: the reward function;
multi: the rollout function without its ``generate`` calls, plus the reward functions).

Goal (issue 39): LateralGym's seconds per step <= 1.10x the floor's. The last line is one JSON object
with ``lateralgym_s_per_step``, ``floor_s_per_step`` and ``ratio`` (median of the rounds' ratios) for
the first route run, a ``routes`` object with each route's figures (min/median/max per side, ratios,
completion lengths, the profile), and the machine's load average before and after.

Needs the grpo extra (``pip install -e '.[grpo]'``). A plain step took 13-14 s on 2 near-idle cores
(Intel Xeon; 24-25 s on the AMD EPYC); the default (``--route plain --steps 1 --rounds 2``) runs 11 steps
and 7 trainers (each loads the model; the LateralGym side plays one held-out item and saves its model):
about 5 minutes there (4 without the profile), far longer on shared cores (a step took 5 minutes at
load 10). Run it niced there.
Usage: ``python benchmarks/bench_grpo.py [--steps 1] [--rounds 2] [--route plain|multi|both] [--no-profile]``.
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import gc
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lateralgym.envs import EpisodeConfig
from lateralgym.integrations.grpo import GRPOSettings, grpo_missing, load_model, train_grpo

GOAL = 1.10
"""LateralGym's seconds per step at most this multiple of the floor's."""

ADDED = ("lateralgym_reward", "episode_reward", "valid_reward", "rollout")
"""``_text.py``'s functions a step calls: what LateralGym adds (the rollout without its ``generate`` calls)."""

ROOT = Path(__file__).resolve().parents[1]
"""The project's source tree: a profile entry is LateralGym's when its file is under it (not the venv)."""


@dataclass
class Run:
    """One trainer's run: the clock at each step's end, and TRL's logged figures of each step."""

    ends: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    """This process's CPU time at each step's end (every thread's: torch's too)."""
    logs: list[dict[str, float]] = field(default_factory=list)
    args: Any = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    reward_funcs: int = 0
    widths: list[int] = field(default_factory=list)
    """Multi route: each rollout batch's longest completion, the model's tokens and the env's."""
    load: float = float("nan")
    """The 1-minute load average when the run ended."""
    profiler: cProfile.Profile | None = None
    """Profile the trainer's ``train`` (the steps alone: no loading, evaluation or saving)."""

    def seconds_per_step(self) -> float:
        """The mean period between step ends after the first (the first step pays for first touches)."""
        if len(self.ends) < 2:
            raise SystemExit("bench_grpo: a run needs at least 2 steps to time one (give --steps 1 or more)")
        return (self.ends[-1] - self.ends[0]) / (len(self.ends) - 1)

    def cpu_per_step(self) -> float:
        """The same period in this process's CPU time (waiting for a core other jobs hold is not counted)."""
        return (self.cpu[-1] - self.cpu[0]) / (len(self.cpu) - 1)

    def figure(self, name: str) -> float:
        """The mean over the timed steps (all but the first) of one of TRL's logged figures."""
        values = [log[name] for log in self.logs[1:] if name in log]
        return statistics.fmean(values) if values else float("nan")


def timed_trainer_class(trl: Any, run: Run) -> type:
    """``GRPOTrainer`` with a clock callback and the record of its arguments and dataset in ``run``
    (the same class on both sides, so both are measured the same way)."""
    from transformers import TrainerCallback

    class Clock(TrainerCallback):  # type: ignore[misc]  # transformers is seen as Any
        def on_step_end(self, *_: Any, **__: Any) -> None:
            run.ends.append(time.perf_counter())
            run.cpu.append(time.process_time())

        def on_log(self, _: Any, __: Any, ___: Any, logs: dict[str, float] | None = None, **____: Any) -> None:
            if logs and "train_runtime" not in logs:
                run.logs.append(dict(logs))

    class Timed(trl.GRPOTrainer):  # type: ignore[misc, name-defined]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            run.args = kwargs["args"]
            run.rows = list(kwargs["train_dataset"])
            funcs = kwargs["reward_funcs"]
            run.reward_funcs = len(funcs) if isinstance(funcs, list) else 1
            if kwargs.get("rollout_func") is not None:
                kwargs["rollout_func"] = widths_of(kwargs["rollout_func"], run.widths)
            super().__init__(*args, **kwargs)
            self.add_callback(Clock())

        def train(self, *args: Any, **kwargs: Any) -> Any:
            if run.profiler is None:
                return super().train(*args, **kwargs)
            return run.profiler.runcall(super().train, *args, **kwargs)

    return Timed


def widths_of(rollout: Callable[..., dict[str, Any]], widths: list[int]) -> Callable[..., dict[str, Any]]:
    """``rollout`` recording each batch's longest completion (what the loss pads to) in ``widths``."""

    def recorded(prompts: Any, trainer: Any) -> dict[str, Any]:
        out = rollout(prompts, trainer)
        widths.append(max(len(ids) for ids in out["completion_ids"]))
        return out

    return recorded


def lateralgym_run(
    config: EpisodeConfig, model: str, settings: GRPOSettings, out: Path, profiler: cProfile.Profile | None = None
) -> Run:
    """``train_grpo`` as ``lateralgym train grpo`` runs it, its trainer timed by the clock callback
    (and its ``train`` profiled by ``profiler``)."""
    import trl

    run = Run(profiler=profiler)
    original = trl.GRPOTrainer
    trl.GRPOTrainer = timed_trainer_class(trl, run)  # train_grpo imports it from trl when it is called
    try:
        train_grpo(config, model, out, settings, cache_dir=None)
    finally:
        trl.GRPOTrainer = original
    run.load = os.getloadavg()[0]
    gc.collect()
    return run


def constant_reward(prompts: Any, completions: Any, **_: Any) -> list[float]:
    """The floor's reward: 0 for every completion (``constant_reward``'s cost is TRL's alone)."""
    return [0.0] * len(completions)


def floor_run(model: str, settings: GRPOSettings, template: Run, out: Path, length: int | None) -> Run:
    """TRL's ``GRPOTrainer`` alone: the LateralGym side's arguments and prompts, a constant reward;
    ``length``: every completion exactly that many tokens (the multi route's floor)."""
    import torch
    import trl
    from datasets import Dataset
    from transformers.trainer_callback import PrinterCallback
    from transformers.trainer_utils import SaveStrategy

    run = Run()
    torch.set_num_threads(settings.threads)  # what train_grpo sets
    torch.manual_seed(settings.seed)
    lm, tokenizer = load_model(model)
    args = copy.deepcopy(template.args)  # as built (dataclasses.replace would derive the batch fields again)
    args.output_dir = str(out)
    if length is not None:
        args.max_completion_length, args.generation_kwargs = length, {"min_new_tokens": length}
    args.save_strategy = SaveStrategy.NO  # the LateralGym side saves after its last step: untimed, so not here
    rows = [
        {"prompt": [{k: v for k, v in m.items() if k in ("role", "content")} for m in r["prompt"]]}
        for r in template.rows
    ]
    funcs: list[Callable[..., list[float]]] = [constant_reward] * template.reward_funcs
    trainer = timed_trainer_class(trl, run)(
        model=lm, reward_funcs=funcs, args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer
    )
    trainer.remove_callback(PrinterCallback)
    trainer.train()
    run.load = os.getloadavg()[0]
    del trainer, lm
    gc.collect()
    return run


def ours(path: str) -> bool:
    """Whether a profiled function's file is LateralGym's (under the source tree, not the venv)."""
    if not os.path.isabs(path):  # built-ins are profiled as "~"
        return False
    resolved = os.path.realpath(path)
    return resolved.startswith(str(ROOT) + os.sep) and f"{os.sep}.venv{os.sep}" not in resolved


def profile_figures(stats: pstats.Stats, route: str, steps: int, top: int) -> dict[str, Any]:
    """The top LateralGym entries by cumulative time, and what the route adds per step."""
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]  # pstats keeps its table untyped
    rows = []
    for (path, line, name), (_, calls, _, cumulative, _) in table.items():
        if ours(path) and not path.endswith("bench_grpo.py") and name != "train_grpo":
            rows.append((cumulative, calls, f"{os.path.relpath(path, ROOT)}:{line}({name})"))
    rows.sort(reverse=True)
    added = 0.0
    for (path, _, name), (_, _, _, cumulative, _) in table.items():
        if path.replace(os.sep, "/").endswith("integrations/grpo/_text.py") and name in ADDED:
            added += cumulative
    for (path, _, name), (_, _, _, _, callers) in table.items():
        if name == "generate" and "transformers" in path:  # the rollout's generate calls are the model's
            for (caller_path, _, caller), timing in callers.items():
                if caller == "rollout" and caller_path.replace(os.sep, "/").endswith("integrations/grpo/_text.py"):
                    added -= timing[3]
    return {
        "added_s_per_step": added / steps,
        "route": route,
        "top": [{"cumulative_s": round(c, 3), "calls": n, "function": f} for c, n, f in rows[:top]],
    }


def measure(route: str, config: EpisodeConfig, args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    """Warm-up, interleaved rounds and the profiled run of one route; prints its rows."""
    settings = GRPOSettings(
        steps=args.steps + 1,
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        eval_items=1,
        eval_max_new_tokens=8,
        save_every=args.steps + 2,
        threads=args.threads,
    )
    warm = settings.model_copy(update={"steps": 1, "save_every": 2})
    counter = iter(range(10_000))

    def folder() -> Path:
        return scratch / f"{route}-{next(counter)}"

    print(f"route {route}: config {config.name} (max_turns {config.max_turns}), warm-up ...", flush=True)
    probe = lateralgym_run(config, args.model, warm, folder())
    length: int | None = None
    if route == "multi":  # the floor's completion length: known once the LateralGym side has played
        length = probe.widths[0]
    floor_run(args.model, warm, probe, folder(), length)
    print(
        f"{'round':>5} {'floor s/step':>12} {'LateralGym s/step':>17} {'ratio':>6}  "
        "CPU s/step (floor / LG, ratio)  completion tokens (floor / LG)  load at the end (floor / LG)"
    )
    floors, lgs, ratios, lengths, cpus, loads = [], [], [], [], [], []
    template: Run | None = None
    for number in range(1, args.rounds + 1):
        if template is None:  # the first round: LateralGym first, its arguments and prompts the floor's
            ours_run = template = lateralgym_run(config, args.model, settings, folder())
            if route == "multi":
                length = max(1, round(statistics.fmean(ours_run.widths[1:])))
            floor = floor_run(args.model, settings, template, folder(), length)
        elif number % 2 == 0:  # then the order alternates
            floor = floor_run(args.model, settings, template, folder(), length)
            ours_run = lateralgym_run(config, args.model, settings, folder())
        else:
            ours_run = lateralgym_run(config, args.model, settings, folder())
            floor = floor_run(args.model, settings, template, folder(), length)
        floors.append(floor.seconds_per_step())
        lgs.append(ours_run.seconds_per_step())
        ratios.append(lgs[-1] / floors[-1])
        cpus.append((floor.cpu_per_step(), ours_run.cpu_per_step()))
        loads.append((floor.load, ours_run.load))
        pair = (floor.figure("completions/mean_length"), ours_run.figure("completions/mean_length"))
        lengths.append(pair)
        print(
            f"{number:5} {floors[-1]:12.2f} {lgs[-1]:17.2f} {ratios[-1]:6.3f}  {cpus[-1][0]:.1f} / {cpus[-1][1]:.1f}, "
            f"{cpus[-1][1] / cpus[-1][0]:.3f}  {pair[0]:.1f} / {pair[1]:.1f}  {loads[-1][0]:.1f} / {loads[-1][1]:.1f}",
            flush=True,
        )
    figures: dict[str, Any] = {
        "config": config.name,
        "max_turns": config.max_turns,
        "lateralgym_s_per_step": statistics.median(lgs),
        "floor_s_per_step": statistics.median(floors),
        "ratio": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "lateralgym_s": [min(lgs), statistics.median(lgs), max(lgs)],
        "floor_s": [min(floors), statistics.median(floors), max(floors)],
        "cpu_s_per_step": {"floor": [c[0] for c in cpus], "lateralgym": [c[1] for c in cpus]},
        "cpu_ratio": statistics.median(c[1] / c[0] for c in cpus),
        "load_at_end": {"floor": [x[0] for x in loads], "lateralgym": [x[1] for x in loads]},
        "completion_mean_length": {"floor": [p[0] for p in lengths], "lateralgym": [p[1] for p in lengths]},
        "floor_fixed_length": length,
    }
    if not args.no_profile:
        profile_steps = max(1, min(args.steps, 2))
        profiled = settings.model_copy(update={"steps": profile_steps, "save_every": profile_steps + 1})
        profiler = cProfile.Profile()
        lateralgym_run(config, args.model, profiled, folder(), profiler)
        figures["profile"] = profile_figures(pstats.Stats(profiler), route, profile_steps, args.top)
        added = figures["profile"]["added_s_per_step"]
        print(
            f"profiled run ({profile_steps} steps): LateralGym adds {added:.3f} s a step "
            f"({100 * added / figures['lateralgym_s_per_step']:.1f} % of the median step); "
            "LateralGym's top entries by cumulative time (callees in TRL and torch included):"
        )
        for entry in figures["profile"]["top"]:
            print(f"  {entry['cumulative_s']:9.3f} s {entry['calls']:7} calls  {entry['function']}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--route", choices=("plain", "multi", "both"), default="plain", help="rollout path (default plain)"
    )
    parser.add_argument(
        "--config", default="riddlesense", help="the plain route's single-move config (default riddlesense)"
    )
    parser.add_argument("--multi-config", default="splat", help="the multi route's multi-turn config (default splat)")
    parser.add_argument("--max-turns", type=int, default=3, help="the multi route's episode length cap (default 3)")
    parser.add_argument(
        "--model", default="local/smollm2", help="the model (train grpo's --model; default local/smollm2)"
    )
    parser.add_argument(
        "--steps", type=int, default=1, help="timed steps per round and side (default 1; one more is run)"
    )
    parser.add_argument("--rounds", type=int, default=2, help="rounds of floor and LateralGym (default 2)")
    parser.add_argument("--num-generations", type=int, default=8, help="completions per prompt (default 8)")
    parser.add_argument("--max-completion-length", type=int, default=32, help="tokens per move (default 32)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads, both sides (default 2)")
    parser.add_argument("--top", type=int, default=12, help="profile entries listed (default 12)")
    parser.add_argument("--no-profile", action="store_true", help="skip the profiled run")
    args = parser.parse_args()
    missing = grpo_missing()
    if missing:
        sys.exit(f"bench_grpo: {missing}")
    if args.steps < 1 or args.rounds < 1:
        sys.exit("bench_grpo: --steps and --rounds must be at least 1")
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TRL_EXPERIMENTAL_SILENCE"):
        os.environ.setdefault(name, "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    load_before = os.getloadavg()
    routes: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-grpo-") as scratch:
        for route in ("plain", "multi") if args.route == "both" else (args.route,):
            config = EpisodeConfig.named(args.config if route == "plain" else args.multi_config)
            if route == "multi":
                config = config.model_copy(update={"max_turns": args.max_turns})
            elif config.max_turns != 1:
                sys.exit(
                    f"bench_grpo: --config {config.name} is multi-turn; the plain route needs a single-move config"
                )
            routes[route] = measure(route, config, args, Path(scratch))
    first = next(iter(routes.values()))
    figures: dict[str, Any] = {
        "lateralgym_s_per_step": first["lateralgym_s_per_step"],
        "floor_s_per_step": first["floor_s_per_step"],
        "ratio": first["ratio"],
        "route": next(iter(routes)),
        "goal": GOAL,
        "steps": args.steps,
        "rounds": args.rounds,
        "model": args.model,
        "num_generations": args.num_generations,
        "max_completion_length": args.max_completion_length,
        "threads": args.threads,
        "routes": routes,
        "load_avg": {"before": list(load_before), "after": list(os.getloadavg())},
    }
    for route, found in routes.items():
        met = found["ratio"] <= GOAL
        print(
            f"{route}: ratio {found['ratio']:.3f} (min {found['ratio_min']:.3f}, max {found['ratio_max']:.3f}); "
            f"goal <= {GOAL}: {'met' if met else 'NOT MET'}"
        )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
