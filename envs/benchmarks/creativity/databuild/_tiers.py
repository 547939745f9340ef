"""Stages B, E and G of the task pipeline (paper §4.2, App. D): gold strata, distractor pools, tiers.

B. Gold candidates are grouped by tier, (scene, cluster size band, level 0..5), and each tier's
   candidates are put in a seeded random order (one variant of an entity per use); the pipeline
   walks that order until ``per_tier`` golds pass stages C and D.
E. A candidate distractor is an entity (other than the gold and any entity of the gold's name; of
   several variants of a name only the nearest is kept) whose distance to the gold is the smallest
   cosine distance between any of its affordances and the gold affordance. The near pool holds the
   ``pool_size`` nearest, the far pool the ``pool_size`` furthest of the rest.
G. An entity with a part that should replace the gold, or that is too hard to tell from it
   (``decision_difficulty`` above ``max_difficulty``), is dropped; the others are similar (some part
   has a similar affordance) or not. Tiers: ``similar`` draws k similar entities, ``dissimilar`` k
   others, ``mixed`` ceil(k/2) similar and the rest others, for each k of ``counts``; a tier without
   enough entities is skipped (and counted).

Every draw uses a numpy ``Generator`` seeded from the SHA-256 of a text naming what is drawn, so the
result depends on neither the process nor the order of work.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from lateralgym.envs import snake
from lateralgym.envs.benchmarks.creativity import AffordanceKB, Entity
from lateralgym.envs.benchmarks.creativity.databuild._cluster import AffordanceIndex, band_of, use_key
from lateralgym.envs.benchmarks.creativity.databuild._tasks_models import GoldRef, PartVerdict

__all__ = [
    "SIMILARITIES",
    "Tier",
    "assemble_tiers",
    "candidate_pools",
    "gold_strata",
    "keep_tiers",
    "limit_strata",
    "rng_for",
    "split_verdicts",
]

SIMILARITIES: tuple[str, ...] = ("similar", "mixed", "dissimilar")

Stratum = tuple[str, tuple[int, int], int]
"""(scene, cluster size band, level)."""


def rng_for(*names: object) -> np.random.Generator:
    """A generator seeded from the SHA-256 of ``names`` (process- and order-independent)."""
    text = "/".join(str(n) for n in names)
    return np.random.default_rng(int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big"))


def gold_strata(
    kb: AffordanceKB, index: AffordanceIndex, seed: int, allowed: set[GoldRef] | None = None
) -> dict[Stratum, list[GoldRef]]:
    """Stage B: every gold candidate with a band, by stratum, each list in its seeded random order.

    Args:
        kb: The knowledge base.
        index: Stage A's result.
        seed: The build seed.
        allowed: When given, only these affordances may be golds (offline: those with a stored task text).
    """
    entities = {e.id: e for e in kb.entities}
    strata: dict[Stratum, list[GoldRef]] = defaultdict(list)
    for ref in index.refs:
        band = band_of(index.cluster_of[ref].size)
        if band is None or (allowed is not None and ref not in allowed):
            continue
        entity = entities[ref.entity_id]
        level = next(p for p in entity.parts if p.name == ref.part).affordances[ref.index].level
        strata[(entity.scene, band, level)].append(ref)
    ordered: dict[Stratum, list[GoldRef]] = {}
    for stratum in sorted(strata):
        refs = sorted(strata[stratum])
        order = rng_for("gold-order", seed, *stratum).permutation(len(refs))
        uses: set[tuple[str, str, str]] = set()
        ordered[stratum] = []
        for ref in (refs[int(i)] for i in order):  # one variant of a use: the first in the seeded order
            key = use_key(entities[ref.entity_id], ref)
            if key not in uses:
                uses.add(key)
                ordered[stratum].append(ref)
    return ordered


def limit_strata(strata: dict[Stratum, list[GoldRef]], most: int | None) -> dict[Stratum, list[GoldRef]]:
    """The first ``most`` strata of ``gold_strata``'s (sorted) result; all of them when ``most`` is None."""
    return strata if most is None else dict(list(strata.items())[:most])


@dataclass(frozen=True)
class _PoolTable:
    """What ``candidate_pools`` reads of a KB and its index, built once per build (not once per gold)."""

    kb: AffordanceKB
    index: AffordanceIndex
    entities: dict[str, Entity]
    ids: list[str]
    """Every entity id, by position."""
    position: dict[str, int]
    names: list[str]
    """Each position's entity name, snake-cased (variants share it)."""
    ref_entity: np.ndarray
    """Each index ref's entity position."""
    name_code: np.ndarray
    scene_code: np.ndarray


_TABLE: list[_PoolTable] = []


def _pool_table(kb: AffordanceKB, index: AffordanceIndex) -> _PoolTable:
    if _TABLE and _TABLE[0].kb is kb and _TABLE[0].index is index:
        return _TABLE[0]
    entities = {e.id: e for e in kb.entities}
    ids = list(entities)
    position = {entity_id: n for n, entity_id in enumerate(ids)}
    names = [snake(entities[i].name) for i in ids]
    name_codes = {name: n for n, name in enumerate(dict.fromkeys(names))}
    scene_codes = {scene: n for n, scene in enumerate(dict.fromkeys(entities[i].scene for i in ids))}
    table = _PoolTable(
        kb=kb,
        index=index,
        entities=entities,
        ids=ids,
        position=position,
        names=names,
        ref_entity=np.array([position[ref.entity_id] for ref in index.refs], dtype=np.intp),
        name_code=np.array([name_codes[name] for name in names], dtype=np.intp),
        scene_code=np.array([scene_codes[entities[i].scene] for i in ids], dtype=np.intp),
    )
    _TABLE[:] = [table]
    return table


def candidate_pools(
    gold: GoldRef, kb: AffordanceKB, index: AffordanceIndex, *, scope: str, pool_size: int
) -> tuple[list[Entity], list[Entity]]:
    """Stage E: the near and far candidate pools of a gold (see the module docstring)."""
    table = _pool_table(kb, index)
    gold_at = table.position[gold.entity_id]
    distances = 1.0 - index.vectors @ index.vectors[index.row_of[gold]]
    owners = table.ref_entity
    keep = table.name_code[owners] != table.name_code[gold_at]
    if scope == "scene":
        keep &= table.scene_code[owners] == table.scene_code[gold_at]
    smallest = np.full(len(table.ids), np.inf)
    np.minimum.at(smallest, owners[keep], distances[keep])
    # an entity's distance: its nearest affordance's, rounded (rounding keeps the order, so rounding
    # the smallest is the smallest rounded), at most 2
    distance = {table.ids[n]: min(2.0, round(float(smallest[n]), 6)) for n in np.flatnonzero(np.isfinite(smallest))}
    nearest: dict[str, str] = {}  # name -> the variant nearest the gold
    for entity_id in sorted(distance, key=lambda i: (distance[i], i)):
        nearest.setdefault(table.names[table.position[entity_id]], entity_id)
    ranked = sorted(nearest.values(), key=lambda i: (distance[i], i))
    near_n = min(pool_size, math.ceil(len(ranked) / 2)) if len(ranked) < 2 * pool_size else pool_size
    near = ranked[:near_n]
    far = ranked[near_n:][-pool_size:]
    return [table.entities[i] for i in near], [table.entities[i] for i in far]


def split_verdicts(
    candidates: Iterable[tuple[Entity, Sequence[PartVerdict]]], max_difficulty: int
) -> tuple[list[Entity], list[Entity], int]:
    """Stage G's filter: (similar entities, not similar entities, how many were excluded)."""
    similar: list[Entity] = []
    other: list[Entity] = []
    excluded = 0
    for entity, verdicts in candidates:
        if any(v.gold_change or (v.decision_difficulty or 0) > max_difficulty for v in verdicts):
            excluded += 1
        elif any(v.similar_affordance for v in verdicts):
            similar.append(entity)
        else:
            other.append(entity)
    return similar, other, excluded


@dataclass(frozen=True)
class Tier:
    """One task's distractor tier and its distractors."""

    similarity: str
    count: int
    distractors: tuple[Entity, ...]


def assemble_tiers(
    gold: GoldRef, similar: Sequence[Entity], other: Sequence[Entity], counts: Sequence[int], seed: int
) -> tuple[list[Tier], int]:
    """Stage G's tiers: similar / mixed / dissimilar x ``counts``; returns (tiers, skipped tiers)."""
    similar = sorted(similar, key=lambda e: e.id)
    other = sorted(other, key=lambda e: e.id)
    tiers: list[Tier] = []
    skipped = 0
    for similarity in SIMILARITIES:
        for count in counts:
            wanted_similar = {"similar": count, "dissimilar": 0, "mixed": math.ceil(count / 2)}[similarity]
            wanted_other = count - wanted_similar
            if wanted_similar > len(similar) or wanted_other > len(other):
                skipped += 1
                continue
            rng = rng_for("tier", seed, gold.key, similarity, count)
            picked = [similar[int(i)] for i in sorted(rng.choice(len(similar), wanted_similar, replace=False))]
            picked += [other[int(i)] for i in sorted(rng.choice(len(other), wanted_other, replace=False))]
            tiers.append(Tier(similarity, count, tuple(picked)))
    return tiers, skipped


def keep_tiers(
    gold: GoldRef, tiers: Sequence[Tier], keep: int | None, seed: int, used: Counter[tuple[str, int]]
) -> list[Tier]:
    """At most ``keep`` of a gold's tiers (all when ``keep`` is None), in tier order.

    Each pick takes the tier least used so far over the whole build (``used``, updated in place; golds
    are taken in sorted order), ties broken by a seeded order: scarce tiers (many similar distractors)
    are kept wherever a gold has them, so every tier cell fills as evenly as the KB allows.
    """
    if keep is None or len(tiers) <= keep:
        chosen = list(range(len(tiers)))
    else:
        order = [int(i) for i in rng_for("keep-tiers", seed, gold.key).permutation(len(tiers))]
        chosen = []
        for _ in range(keep):
            best = min(
                (i for i in order if i not in chosen),
                key=lambda i: used[(tiers[i].similarity, tiers[i].count)],
            )
            chosen.append(best)
        chosen.sort()
    for i in chosen:
        used[(tiers[i].similarity, tiers[i].count)] += 1
    return [tiers[i] for i in chosen]
