"""Does an LLM get better at a LateralGym task? SFT on the oracle's train moves, then GRPO from that checkpoint.

On ``--config`` (default ``creativity-static-graded``: CreativityBench static, 1 for the right entity and
part, 0.25 for the right entity alone) and ``--model`` (default ``local/smollm2``), plays ``--eval-items``
held-out (test) items, spread over the split, greedily with the base model once, then for each seed:
``train_sft`` (TRL's SFTTrainer on the oracle's moves on train items, written through the player's prompts
and parser) and ``train_grpo(init=<the SFT folder>)``, each evaluated on the same held-out items. Next to them, on the
same items: a random player and the heuristic (their moves written through the same prompts and parser;
each item's reward the mean of 20 draws), the chance level a reward must beat.

Every figure is the mean reward (or valid-move share) with a 95 % interval from a bootstrap over the
problems the items pose (a task text's distractor variants drawn together), and each stage's paired
difference with the base model (and GRPO's with SFT and with the random player) on the same items. The goal:
GRPO's reward above the base model's with the paired interval above 0, in at least 2 of the seeds.

The last line of stdout is one JSON object: ``{"config", "model", "eval_items", "problems", "chance":
{"random", "heuristic"}, "base", "seeds": {SEED: {"sft", "grpo", "paired": {...}, "seconds_per_step":
{"sft", "grpo"}}}, "goal_met_seeds", "over_seeds", "load", "settings", "seconds"}``. ``over_seeds`` (2 seeds or
more): ``{"sft", "grpo": {"seeds", "reward", "minus_random", "minus_heuristic", "minus_base"}}``, each item's
reward after that stage averaged over the seeds, with its interval and its paired differences with the random
player, the heuristic and the base model. ``--grpo-steps 0`` stops each seed after SFT. ``--out`` keeps every
run folder (``results.json`` there is rewritten after each stage, so a stopped run keeps what it measured);
``--merge DIR ...`` trains nothing and sums up such folders (seeds run side by side, one process each) as one run.

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
        # The player draws from the episode's seed and its own: seed 0 is the episode's draw.
        agent.reset({}, state.info, seed=None if state.seed is None else state.seed + 7919 * seed)
        while not state.done:
            action = agent.act({}, state.info)
            asyncio.run(chat.step(state, prompts.reply_for(action, state.info, state.plan.reasoning)))
        records.append(episode_figures(chat, state))
    return records


OFFLINE_SEEDS = 20
"""Seeds each offline player plays every held-out item with: its reward on an item is the mean of these
draws, so the chance level it sets carries no noise of one lucky or unlucky draw."""


def offline_players(config: EpisodeConfig, test: Sequence[Any]) -> dict[str, list[EpisodeFigures]]:
    """The random player's and the heuristic's held-out episodes, each item's reward averaged over
    ``OFFLINE_SEEDS`` seeds."""
    return {
        name: seed_mean([offline(config, test, name, seed) for seed in range(OFFLINE_SEEDS)])
        for name in ("random", "heuristic")
    }


def figure(records: Sequence[EpisodeFigures]) -> dict[str, Any]:
    reward, valid = problem_interval(records, "reward"), problem_interval(records, "valid")
    return {"reward": reward.model_dump(), "valid": valid.model_dump()}


def paired(a: Sequence[EpisodeFigures], b: Sequence[EpisodeFigures]) -> dict[str, Any]:
    return {m: paired_difference(a, b, m).model_dump() for m in ("reward", "valid")}


def read(path: Path) -> list[EpisodeFigures]:
    """A run's held-out episodes (``eval_after.jsonl``, ``base_eval.jsonl``); one line of error if unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
        return [EpisodeFigures.model_validate_json(line) for line in text.splitlines()]
    except (OSError, ValueError) as error:
        reason = str(error).splitlines()[0]
        raise SystemExit(f"{path}: not a run's held-out episodes ({reason}); was its stage finished?") from None


def cell(value: dict[str, Any]) -> str:
    return f"{value['mean']:.3f} [{value['low']:.3f}, {value['high']:.3f}]"


def held_out_items(
    name: str, eval_items: int, max_distractors: int | None
) -> tuple[EpisodeConfig, list[Any], list[Any]]:
    """The config, the pool of its items (at most ``max_distractors`` distractor entities) and the held-out ones."""
    config = EpisodeConfig.named(name)
    pool = list(load_config_items(config))
    if max_distractors is not None:
        pool = [task for task in pool if task.factors.distractor_count <= max_distractors]
    _, test = split_train_test(config, pool, eval_items)
    return config, pool, list(test)


def seed_mean(runs: Sequence[Sequence[EpisodeFigures]]) -> list[EpisodeFigures]:
    """Each held-out item once, its reward the mean of the seeds' episodes of it (``runs``, one per seed)."""
    tables = [{r.item_id: r for r in run} for run in runs]
    if any(set(table) != set(tables[0]) for table in tables):
        raise SystemExit("the seeds did not play the same held-out items: merge runs of one --config and --eval-items")
    rewards = {key: float(np.mean([table[key].reward for table in tables])) for key in tables[0]}
    return [record.model_copy(update={"reward": rewards[key]}) for key, record in tables[0].items()]


def seed_row(
    after_sft: list[EpisodeFigures],
    after_grpo: list[EpisodeFigures] | None,
    base: list[EpisodeFigures],
    chance: dict[str, list[EpisodeFigures]],
    seconds_per_step: dict[str, float],
) -> dict[str, Any]:
    """One seed's figures: each stage's, and its paired differences on the same items."""
    row: dict[str, Any] = {"sft": figure(after_sft), "seconds_per_step": seconds_per_step}
    row["paired"] = {"sft-base": paired(after_sft, base), "sft-random": paired(after_sft, chance["random"])}
    if after_grpo is not None:
        row["grpo"] = figure(after_grpo)
        row["paired"]["grpo-base"] = paired(after_grpo, base)
        row["paired"]["grpo-sft"] = paired(after_grpo, after_sft)
        row["paired"]["grpo-random"] = paired(after_grpo, chance["random"])
        row["goal_met"] = row["paired"]["grpo-base"]["reward"]["low"] > 0
    return row


def finish(
    results: dict[str, Any],
    chance: dict[str, list[EpisodeFigures]],
    base: list[EpisodeFigures],
    runs: dict[str, list[list[EpisodeFigures]]],
) -> None:
    """The goal's count, each stage's seed-averaged reward (2 seeds or more) against chance, the table and the
    JSON line. ``runs``: each stage's (``sft``, ``grpo``) held-out episodes, one list a seed."""
    results["goal_met_seeds"] = sum(bool(r.get("goal_met")) for r in results["seeds"].values())
    over: dict[str, Any] = {}
    for stage, episodes in runs.items():
        if len(episodes) < 2:
            continue
        # Each item's reward averaged over the seeds, so the interval (over problems) counts what the
        # seeds share; paired on the same items with the offline players and the base model.
        mean = seed_mean(episodes)
        over[stage] = {"seeds": len(episodes), "reward": problem_interval(mean, "reward").model_dump()}
        others = {"random": chance["random"], "heuristic": chance["heuristic"], "base": base}
        for name, records in others.items():
            over[stage][f"minus_{name}"] = paired_difference(mean, records, "reward").model_dump()
    if over:
        results["over_seeds"] = over
    rows = [("random", results["chance"]["random"]), ("heuristic", results["chance"]["heuristic"])]
    rows.append(("base", results["base"]))
    for seed, row in results["seeds"].items():
        rows += [(f"SFT, seed {seed}", row["sft"])] + ([(f"GRPO, seed {seed}", row["grpo"])] if "grpo" in row else [])
    print(f"\n{'held-out (intervals over problems)':<36}{'reward':>26}{'valid moves':>26}")
    for name, value in rows:
        print(f"{name:<36}{cell(value['reward']):>26}{cell(value['valid']):>26}")
    for stage, figures in over.items():
        label = f"{stage.upper()}, each item's mean of {figures['seeds']} seeds"
        print(f"{label:<36}{cell(figures['reward']):>26}")
        for name in ("random", "heuristic", "base"):
            print(f"{f'  minus {name} (paired)':<36}{cell(figures[f'minus_{name}']):>26}")
    grpo_means = [r["grpo"]["reward"]["mean"] for r in results["seeds"].values() if "grpo" in r]
    if grpo_means:
        grpo_mean = float(np.mean(grpo_means))
        base_mean, chance_mean = results["base"]["reward"]["mean"], results["chance"]["random"]["reward"]["mean"]
        versus = f"{grpo_mean / base_mean:.2f}" if base_mean > 0 else f"{grpo_mean:.3f} against 0"
        print(
            f"GRPO reward / base reward: {versus}; / random player: {grpo_mean / max(chance_mean, 1e-9):.2f}; goal "
            f"met in {results['goal_met_seeds']} of {len(grpo_means)} seeds (GRPO - base paired interval above 0)"
        )
    print(json.dumps(results))


def merge(folders: Sequence[Path]) -> None:
    """Earlier runs' ``--out`` folders (seeds run apart, one process each) summed up as one run, without training."""
    runs = []
    for folder in folders:
        try:
            runs.append(json.loads((folder / "results.json").read_text(encoding="utf-8")))
        except (OSError, ValueError) as error:
            raise SystemExit(
                f"{folder}: no readable results.json of this script ({error}); pass its --out folders"
            ) from None
    keys = ("config", "model", "eval_items", "pool")
    for folder, run in zip(folders, runs, strict=True):
        missing = [key for key in (*keys, "seeds") if key not in run]
        if missing:
            raise SystemExit(f"{folder}/results.json has no {', '.join(missing)}: not written by this script's --out")
    if any(tuple(run.get(k) for k in keys) != tuple(runs[0].get(k) for k in keys) for run in runs):
        raise SystemExit(f"the folders' runs differ in {', '.join(keys)}: merge only runs of one set-up")
    first = runs[0]
    config, _, test = held_out_items(first["config"], first["eval_items"], first["pool"]["max_distractors"])
    chance = offline_players(config, test)
    base = read(folders[0] / "base_eval.jsonl")
    results = {**first, "merged": [str(f) for f in folders], "seeds": {}}
    results["chance"] = {name: figure(records) for name, records in chance.items()}
    results["base"] = figure(base)
    episodes: dict[str, list[list[EpisodeFigures]]] = {"sft": [], "grpo": []}
    for folder, run in zip(folders, runs, strict=True):
        if {r.item_id for r in read(folder / "base_eval.jsonl")} != {r.item_id for r in base}:
            raise SystemExit(f"{folder}: its held-out items are not {folders[0]}'s: merge only runs of one set-up")
        for seed, row in run["seeds"].items():
            if seed in results["seeds"]:
                raise SystemExit(f"seed {seed} is in two of the folders: merge each seed once")
            # Every figure again from the episodes, against this merge's chance level and base model.
            after = {stage: read(folder / f"{stage}-{seed}" / "eval_after.jsonl") for stage in episodes if stage in row}
            if "sft" not in after:
                raise SystemExit(f"{folder}: seed {seed} has no SFT figures: was its SFT stage finished?")
            results["seeds"][seed] = seed_row(
                after["sft"], after.get("grpo"), base, chance, row.get("seconds_per_step", {})
            )
            for stage, records in after.items():
                episodes[stage].append(records)
    finish(results, chance, base, episodes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="creativity-static-graded")
    parser.add_argument("--model", default="local/smollm2")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--eval-items", type=int, default=100)
    parser.add_argument("--sft-steps", type=int, default=40)
    parser.add_argument("--sft-batch", type=int, default=2)
    parser.add_argument("--sft-lr", type=float, default=5e-5)
    parser.add_argument("--grpo-steps", type=int, default=10, help="0: SFT only (default 10)")
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
    parser.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        metavar="DIR",
        help="train nothing: sum up earlier runs' --out folders (one seed each, run side by side) as one run, "
        "with the seed-averaged reward paired against chance; prints the table and the JSON line",
    )
    args = parser.parse_args()
    if args.merge:
        merge(args.merge)
        return
    seeds = [int(s) for s in args.seeds.split(",")]
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-warmstart-"))
    out.mkdir(parents=True, exist_ok=True)
    started, load_start = time.perf_counter(), os.getloadavg()
    config, pool, test = held_out_items(args.config, args.eval_items, args.max_distractors)
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

    chance = offline_players(config, test)
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
    runs: dict[str, list[list[EpisodeFigures]]] = {"sft": [], "grpo": []}
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
        row = seed_row(after_sft, None, base, chance, {"sft": sft.seconds_per_step})
        results["seeds"][str(seed)] = row
        runs["sft"].append(after_sft)
        save()
        if args.grpo_steps == 0:
            print(f"seed {seed}: SFT {cell(row['sft']['reward'])} (no GRPO: --grpo-steps 0)")
            continue
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
        runs["grpo"].append(after_grpo)
        seconds = {"sft": sft.seconds_per_step, "grpo": grpo.seconds_per_step}
        row = results["seeds"][str(seed)] = seed_row(after_sft, after_grpo, base, chance, seconds)
        save()
        print(
            f"seed {seed}: SFT {cell(row['sft']['reward'])}, GRPO {cell(row['grpo']['reward'])}; "
            f"GRPO - base {cell(row['paired']['grpo-base']['reward'])}"
        )
    finish(results, chance, base, runs)
    save()


if __name__ == "__main__":
    main()
