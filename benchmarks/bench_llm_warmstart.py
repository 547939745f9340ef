"""Does an LLM get better at a LateralGym task? SFT on the oracle's train moves, then GRPO from that checkpoint.

On ``--config`` (default ``creativity-static-graded``: CreativityBench static, 1 for the right entity and
part, 0.25 for the right entity alone) and ``--model`` (default ``local/smollm2``), plays ``--eval-items``
held-out (test) items, spread over the split, greedily with the base model once, then for each seed:
``train_sft`` (TRL's SFTTrainer on the oracle's moves on train items, written through the player's prompts
and parser) and ``train_grpo(init=<the SFT folder>)``, each evaluated on the same held-out items. Next to them, on the
same items: a random player and the heuristic (their moves written through the same prompts and parser),
the chance level a reward must beat.

Every figure is the mean reward (or valid-move share) with a 95 % interval from a bootstrap over the
problems the items pose (a task text's distractor variants drawn together), and each stage's paired
difference with the base model (and GRPO's with SFT and with the random player) on the same items. The goal:
GRPO's reward above the base model's with the paired interval above 0, in at least 2 of the seeds.

The last line of stdout is one JSON object: ``{"config", "model", "eval_items", "problems", "chance":
{"random", "heuristic"}, "base", "seeds": {SEED: {"sft", "grpo", "paired": {...}, "seconds_per_step":
{"sft", "grpo"}}}, "goal_met_seeds", "load", "settings", "seconds"}``; ``--out`` keeps every run folder
(``results.json`` there is rewritten after each stage, so a stopped run keeps what it measured).

``--max-distractors 3`` keeps the tasks whose scene has four entities (550 of the sample's 2,198: 146
held out over 128 texts): prompts of about half the tokens, so every stage costs about a third as much on
a CPU, and chance is higher (a quarter of random picks name the right entity).

Needs the grpo extra. Usage: ``nice -n 10 python benchmarks/bench_llm_warmstart.py --seeds 0,1,2
[--eval-items 100] [--sft-steps 40] [--grpo-steps 10] [--num-generations 4] [--max-distractors N] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lateralgym.agents import HeuristicAgent, RandomAgent
from lateralgym.envs import EpisodeConfig, get_benchmark, load_config_items
from lateralgym.integrations import ChatEnv, EpisodeFigures, GRPOSettings, SFTSettings, train_grpo, train_sft
from lateralgym.integrations.grpo import paired_difference, problem_interval
from lateralgym.integrations.grpo._model import load
from lateralgym.integrations.grpo._play import episode_figures, episode_of
from lateralgym.integrations.grpo._train import evaluation, split_train_test


def offline(config: EpisodeConfig, test: Sequence[Any], player: str, seed: int) -> list[EpisodeFigures]:
    """An offline player's episodes on ``test``, each move written as the prompt asks and read back."""
    chat = ChatEnv(config, items=test)
    prompts = get_benchmark(config.benchmark).prompts
    records = []
    for row in chat.dataset():
        agent = RandomAgent(seed=seed) if player == "random" else HeuristicAgent(seed=seed)
        state = chat.start(**episode_of(row))
        agent.reset({}, state.info, seed=state.seed)
        while not state.done:
            action = agent.act({}, state.info)
            asyncio.run(chat.step(state, prompts.reply_for(action, state.info, state.plan.reasoning)))
        records.append(episode_figures(chat, state))
    return records


def figure(records: Sequence[EpisodeFigures]) -> dict[str, Any]:
    reward, valid = problem_interval(records, "reward"), problem_interval(records, "valid")
    return {"reward": reward.model_dump(), "valid": valid.model_dump()}


def paired(a: Sequence[EpisodeFigures], b: Sequence[EpisodeFigures]) -> dict[str, Any]:
    return {m: paired_difference(a, b, m).model_dump() for m in ("reward", "valid")}


def read(path: Path) -> list[EpisodeFigures]:
    return [EpisodeFigures.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines()]


def cell(value: dict[str, Any]) -> str:
    return f"{value['mean']:.3f} [{value['low']:.3f}, {value['high']:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="creativity-static-graded")
    parser.add_argument("--model", default="local/smollm2")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--eval-items", type=int, default=100)
    parser.add_argument("--sft-steps", type=int, default=40)
    parser.add_argument("--sft-batch", type=int, default=2)
    parser.add_argument("--sft-lr", type=float, default=5e-5)
    parser.add_argument("--grpo-steps", type=int, default=10)
    parser.add_argument("--num-generations", type=int, default=4)
    parser.add_argument("--grpo-lr", type=float, default=5e-6)
    # The oracle's replies run to 70 SmolLM2 tokens (median 46): a cap of 64 would cut a learnt reply
    # mid-object and count it invalid; one cap for every stage's play, training and held-out.
    parser.add_argument("--max-completion-length", type=int, default=96)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--max-distractors",
        type=int,
        help="only the tasks whose scene has at most this many distractor entities (3: four entities, prompts "
        "of about half the tokens; every stage is that much cheaper on a CPU); default: every task",
    )
    parser.add_argument("--out", type=Path, help="keep the run folders here (default: a temporary folder)")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-warmstart-"))
    out.mkdir(parents=True, exist_ok=True)
    started, load_start = time.perf_counter(), os.getloadavg()
    config = EpisodeConfig.named(args.config)
    pool = list(load_config_items(config))
    if args.max_distractors is not None:
        pool = [task for task in pool if task.factors.distractor_count <= args.max_distractors]
    _, test = split_train_test(config, pool, args.eval_items)
    results: dict[str, Any] = {
        "config": config.name,
        "model": args.model,
        "eval_items": len(test),
        "pool": {"items": len(pool), "max_distractors": args.max_distractors},
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "machine": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine()},
        "seeds": {},
    }

    def save() -> None:
        results["load"] = {"start": load_start, "now": os.getloadavg()}
        results["seconds"] = time.perf_counter() - started
        (out / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")

    chance = {name: offline(config, test, name, 0) for name in ("random", "heuristic")}
    results["chance"] = {name: figure(records) for name, records in chance.items()}
    results["problems"] = results["chance"]["random"]["reward"]["problems"]
    base_file = out / "base_eval.jsonl"
    if base_file.is_file():
        base = read(base_file)
    else:
        model, tokenizer, _ = load(args.model, None)
        base = evaluation(config, test, args.max_completion_length, tokenizer)(model)
        base_file.write_text("".join(r.model_dump_json() + "\n" for r in base), encoding="utf-8")
        del model
    results["base"] = figure(base)
    save()
    base_reward = cell(results["base"]["reward"])
    print(f"{config.name}, {len(test)} held-out items over {results['problems']} problems; base reward {base_reward}")
    for seed in seeds:
        sft_dir, grpo_dir = out / f"sft-{seed}", out / f"grpo-{seed}"
        sft_settings = SFTSettings(
            steps=args.sft_steps,
            batch_size=args.sft_batch,
            learning_rate=args.sft_lr,
            eval_items=args.eval_items,
            eval_max_new_tokens=args.max_completion_length,
            threads=args.threads,
            seed=seed,
        )
        sft = train_sft(config, args.model, sft_dir, sft_settings, items=pool, before=base)
        after_sft = read(sft_dir / "eval_after.jsonl")
        row: dict[str, Any] = {"sft": figure(after_sft), "paired": {"sft-base": paired(after_sft, base)}}
        row["seconds_per_step"] = {"sft": sft.seconds_per_step}
        results["seeds"][str(seed)] = row
        save()
        grpo_settings = GRPOSettings(
            steps=args.grpo_steps,
            learning_rate=args.grpo_lr,
            num_generations=args.num_generations,
            max_completion_length=args.max_completion_length,
            eval_items=args.eval_items,
            eval_max_new_tokens=args.max_completion_length,
            threads=args.threads,
            seed=seed,
            save_every=max(args.grpo_steps, 1),
        )
        grpo = train_grpo(config, args.model, grpo_dir, grpo_settings, items=pool, init=sft_dir)
        after_grpo = read(grpo_dir / "eval_after.jsonl")
        row["grpo"] = figure(after_grpo)
        row["paired"]["grpo-base"] = paired(after_grpo, base)
        row["paired"]["grpo-sft"] = paired(after_grpo, after_sft)
        row["paired"]["grpo-random"] = paired(after_grpo, chance["random"])
        row["seconds_per_step"]["grpo"] = grpo.seconds_per_step
        row["goal_met"] = row["paired"]["grpo-base"]["reward"]["low"] > 0
        save()
        print(
            f"seed {seed}: SFT {cell(row['sft']['reward'])}, GRPO {cell(row['grpo']['reward'])}; "
            f"GRPO - base {cell(row['paired']['grpo-base']['reward'])}"
        )
    results["goal_met_seeds"] = sum(bool(r.get("goal_met")) for r in results["seeds"].values())
    save()
    rows = [("random", results["chance"]["random"]), ("heuristic", results["chance"]["heuristic"])]
    rows.append(("base", results["base"]))
    for seed, row in results["seeds"].items():
        rows += [(f"SFT, seed {seed}", row["sft"])] + ([(f"GRPO, seed {seed}", row["grpo"])] if "grpo" in row else [])
    print(f"\n{'held-out (intervals over problems)':<36}{'reward':>26}{'valid moves':>26}")
    for name, value in rows:
        print(f"{name:<36}{cell(value['reward']):>26}{cell(value['valid']):>26}")
    grpo_mean = np.mean([r["grpo"]["reward"]["mean"] for r in results["seeds"].values() if "grpo" in r] or [np.nan])
    base_mean, chance_mean = results["base"]["reward"]["mean"], results["chance"]["random"]["reward"]["mean"]
    versus = f"{grpo_mean / base_mean:.2f}" if base_mean > 0 else f"{grpo_mean:.3f} against 0"
    print(
        f"GRPO reward / base reward: {versus}; / random player: {grpo_mean / max(chance_mean, 1e-9):.2f}; goal met "
        f"in {results['goal_met_seeds']} of {len(seeds)} seeds (GRPO - base paired interval above 0)"
    )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
