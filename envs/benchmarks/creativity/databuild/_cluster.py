"""Stage A of the task pipeline (paper §4.2, App. D): embed every affordance, cluster with a diameter cap.

Each scene's affordances (or the whole KB's, ``cluster_scope="kb"``) are embedded and clustered by
complete-linkage hierarchical clustering (scipy) cut at the diameter cap: complete linkage merges two
clusters at the largest distance between their members, so every cluster cut at ``diameter`` has no
two members further apart than that (checked again here). A cluster's size (its member affordances)
puts its golds in one of the paper's bands (2-4, 5-10, 10-50); singletons and clusters above 50 have
no band and yield no gold. Variants of an entity share their parts' uses: each distinct use (entity
name, part, action) is clustered and counted once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lateralgym.databuild import CheckpointStore, DataBuildError, Embedder, embed_cached
from lateralgym.envs import snake, spaced
from lateralgym.envs.benchmarks.creativity import Affordance, AffordanceKB, Entity
from lateralgym.envs.benchmarks.creativity.databuild._tasks_models import BANDS, GoldRef

__all__ = [
    "AffordanceIndex",
    "Cluster",
    "band_of",
    "cluster_affordances",
    "complete_linkage",
    "embed_text",
    "use_key",
]


@dataclass(frozen=True)
class Cluster:
    """Affordances whose embeddings lie within the diameter cap of each other."""

    id: str
    """``<scope>-<number>``, numbered in the order of each cluster's first member."""
    members: tuple[GoldRef, ...]
    """The member affordances, sorted (every variant's copy of a use)."""
    size: int
    """How many distinct uses the cluster holds (an entity's variants count a shared use once)."""


@dataclass(frozen=True)
class AffordanceIndex:
    """Stage A's result: every affordance's unit vector and cluster."""

    refs: tuple[GoldRef, ...]
    """Every affordance of the KB, sorted."""
    vectors: np.ndarray
    """One L2-normalised row per ref, in order."""
    clusters: tuple[Cluster, ...]
    """Every cluster (singletons too)."""
    cluster_of: dict[GoldRef, Cluster]
    """Each ref's cluster."""
    row_of: dict[GoldRef, int]
    """Each ref's row in ``vectors``."""


def embed_text(affordance: Affordance, field: str) -> str:
    """The text embedded for an affordance: its action (paper), or its functional category when asked and set."""
    if field == "category" and affordance.category:
        return spaced(affordance.category)
    return affordance.action


def use_key(entity: Entity, ref: GoldRef) -> tuple[str, str, str]:
    """What makes a use distinct: the entity's name (variants share it), the part and the action."""
    part = next(p for p in entity.parts if p.name == ref.part)
    return snake(entity.name), ref.part, part.affordances[ref.index].action


def band_of(size: int) -> tuple[int, int] | None:
    """The paper's size band of a cluster of ``size`` members, or None (a singleton, or above 50)."""
    fitting = [band for band in BANDS if band[0] <= size <= band[1]]
    return max(fitting) if fitting else None


def complete_linkage(vectors: np.ndarray, diameter: float) -> list[list[int]]:
    """Row groups of complete-linkage clustering on cosine distance, cut at ``diameter``.

    Returns:
        Groups of row indices, each sorted, groups ordered by their first row.
    """
    from scipy.cluster.hierarchy import fcluster, linkage  # type: ignore[import-untyped]
    from scipy.spatial.distance import squareform  # type: ignore[import-untyped]

    n = len(vectors)
    if n == 0:
        return []
    if n == 1:
        return [[0]]
    distances = np.clip(1.0 - vectors.astype(np.float64) @ vectors.astype(np.float64).T, 0.0, 2.0)
    np.fill_diagonal(distances, 0.0)
    distances = (distances + distances.T) / 2
    labels = fcluster(linkage(squareform(distances, checks=False), method="complete"), t=diameter, criterion="distance")
    groups: dict[int, list[int]] = defaultdict(list)
    for row, label in enumerate(labels):
        groups[int(label)].append(row)
    result = sorted(groups.values(), key=lambda rows: rows[0])
    for rows in result:  # the hard cap, checked rather than trusted
        widest = float(distances[np.ix_(rows, rows)].max())
        if widest > diameter + 1e-6:
            raise DataBuildError(f"internal error: a cluster of diameter {widest:.3f} exceeds the cap {diameter}")
    return result


async def cluster_affordances(
    kb: AffordanceKB,
    embedder: Embedder,
    *,
    diameter: float,
    field: str,
    scope: str,
    store: CheckpointStore | None = None,
) -> AffordanceIndex:
    """Embed every affordance of ``kb`` and cluster them per scene (``scope="scene"``) or all at once.

    Args:
        kb: The knowledge base.
        embedder: Any ``Embedder`` (vectors must be L2-normalised).
        diameter: The diameter cap in cosine distance.
        field: ``"action"`` or ``"category"`` (see ``embed_text``).
        scope: ``"scene"`` or ``"kb"``.
        store: Where a model's vectors are checkpointed (``embed_cached``), so a resume pays for none twice.
    """
    entities = {e.id: e for e in kb.entities}
    refs: list[GoldRef] = []
    texts: list[str] = []
    for entity in sorted(kb.entities, key=lambda e: e.id):
        for part in entity.parts:
            for index, affordance in enumerate(part.affordances):
                refs.append(GoldRef(entity.id, part.name, index))
                texts.append(embed_text(affordance, field))
    unique = sorted(set(texts))
    if not unique:
        unique_vectors = np.zeros((0, 1), dtype=np.float32)
    elif store is not None:
        unique_vectors = await embed_cached(embedder, unique, store)
    else:
        unique_vectors = await embedder.embed(unique)
    if len(unique_vectors) != len(unique):
        raise DataBuildError(f"embedder {embedder.name!r} returned {len(unique_vectors)} vectors for {len(unique)}")
    position = {text: row for row, text in enumerate(unique)}
    vectors = np.asarray(unique_vectors, dtype=np.float32)[[position[t] for t in texts]] if texts else unique_vectors
    # Variants of an entity repeat their parts' affordances: one row per distinct use is clustered and
    # counted, and every variant's copy joins its row's cluster.
    keys = [use_key(entities[ref.entity_id], ref) for ref in refs]
    by_scope: dict[str, dict[tuple[str, str, str], list[int]]] = defaultdict(dict)
    for row, ref in enumerate(refs):
        where: str = entities[ref.entity_id].scene if scope == "scene" else "kb"
        by_scope[where].setdefault(keys[row], []).append(row)
    clusters: list[Cluster] = []
    for name in sorted(by_scope):
        uses = list(by_scope[name].values())
        firsts = [rows[0] for rows in uses]
        for number, group in enumerate(complete_linkage(vectors[firsts], diameter), start=1):
            members = tuple(refs[row] for i in group for row in uses[i])
            clusters.append(Cluster(f"{name}-{number:04d}", tuple(sorted(members)), len(group)))
    cluster_of = {ref: cluster for cluster in clusters for ref in cluster.members}
    return AffordanceIndex(
        refs=tuple(refs),
        vectors=vectors,
        clusters=tuple(clusters),
        cluster_of=cluster_of,
        row_of={ref: row for row, ref in enumerate(refs)},
    )


def cluster_sizes(index: AffordanceIndex) -> Sequence[int]:
    """Every cluster's size, for summaries."""
    return [c.size for c in index.clusters]
