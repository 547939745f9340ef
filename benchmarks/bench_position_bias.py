"""How much of a static CreativityBench score can come from where the gold entity is listed.

The official static and CoT prompts list a task's entities in the release's order, the gold first
(``options.entity_order: official``); LateralGym shuffles them by default (``shuffled``). A player
with a position bias picks the first-listed entity with probability ``b`` (else the entity whose
parts best fit the task, as the ``heuristic`` player chooses), then that entity's part whose
attributes overlap the task most. Its score under the official order minus under the shuffled
order is the share of the official-order score that position alone bought.

    python benchmarks/bench_position_bias.py [--data TASKS] [--bias 0 0.25 0.5 1] [--seed 0]

Prints, per bias, the entity / gold correct rates (``scoring: official`` and ``paper``) under both
orders and their difference in points. For a model, run the same two configs and pair them::

    lateralgym run creativity-static --player openai/M --option entity_order=official
    lateralgym run creativity-static --player openai/M --option entity_order=shuffled
    lateralgym compare runs/creativity-static-M-...  runs/creativity-static-M-...
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lateralgym.envs import Action, Commit, EpisodeConfig, LateralEnv, load_items, load_sample_items
from lateralgym.envs.benchmarks.creativity import CreativityOutcome

_STOP = frozenset(
    "a an the and or of to in on at by for with from is are it its this that my i me can what how".split()
)


def content_stems(text: str) -> frozenset[str]:
    """Lower-case words of ``text`` without stop-words, crudely stemmed (the heuristic player's cue)."""
    return frozenset(w.rstrip("s") for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 1)


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _best_part(need: frozenset[str], entity: str, parts: Mapping[str, str]) -> tuple[float, str]:
    scored = [(_overlap(need, content_stems(f"{p.replace('_', ' ')} {a} {entity}")), p) for p, a in parts.items()]
    return max(scored, default=(0.0, "body"))


def biased_move(info: Mapping[str, Any], bias: float, rng: np.random.Generator) -> Action:
    """The first-listed entity with probability ``bias``, else the best-fitting one; its best part."""
    public = info["public"]
    need = content_stems(public["task"] + " " + " ".join(public.get("items", [])))
    revealed: Mapping[str, Mapping[str, str]] = public["revealed"]
    if rng.random() < bias:
        entity = public["entities"][0]
    else:
        entity = max(public["entities"], key=lambda e: (_best_part(need, e, revealed[e])[0], e))
    part = _best_part(need, entity, revealed[entity])[1]
    return Commit(entity=entity, part=part, how_to_use=f"Use the {part.replace('_', ' ')} of the {entity}.")


def rates(tasks: Sequence[Any], order: str, bias: float, seed: int) -> dict[str, float]:
    config = EpisodeConfig.named("creativity-static").with_options(entity_order=order, scoring="official")
    env = LateralEnv(config, items=list(tasks))
    rng = np.random.default_rng(seed)
    counts = dict.fromkeys(("official_entity", "official_gold", "paper_entity", "paper_gold"), 0)
    for index, task in enumerate(tasks):
        _, info = env.reset(seed=seed * 100_003 + index, options={"item_id": task.id})
        env.step(biased_move(info, bias, rng))
        outcome = env.outcome()
        assert isinstance(outcome, CreativityOutcome)
        for rule in ("official", "paper"):
            facts = outcome.rules[rule]
            counts[f"{rule}_entity"] += facts.entity_correct or facts.part_correct
            counts[f"{rule}_gold"] += facts.part_correct
    return {name: 100.0 * count / len(tasks) for name, count in counts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", help="CreativityBench tasks (default: the shipped sample)")
    parser.add_argument("--bias", type=float, nargs="+", default=[0.0, 0.25, 0.5, 1.0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    tasks = list(load_items(args.data, benchmark="creativity") if args.data else load_sample_items("creativity"))
    first = sum(task.entities[0].name == task.gold.entity for task in tasks)
    print(f"{len(tasks)} tasks; the dataset lists the gold first in {first} ({100.0 * first / len(tasks):.1f} %)")
    print(
        f"{'bias':>5} {'rule':<9} {'entity: official':>16} {'shuffled':>9} {'diff':>6}   {'gold: official':>14} "
        f"{'shuffled':>9} {'diff':>6}"
    )
    for bias in args.bias:
        official, shuffled = rates(tasks, "official", bias, args.seed), rates(tasks, "shuffled", bias, args.seed)
        for rule in ("official", "paper"):
            e_o, e_s = official[f"{rule}_entity"], shuffled[f"{rule}_entity"]
            g_o, g_s = official[f"{rule}_gold"], shuffled[f"{rule}_gold"]
            print(
                f"{bias:>5.2f} {rule:<9} {e_o:>16.1f} {e_s:>9.1f} {e_o - e_s:>+6.1f}   {g_o:>14.1f} {g_s:>9.1f} "
                f"{g_o - g_s:>+6.1f}"
            )


if __name__ == "__main__":
    main()
