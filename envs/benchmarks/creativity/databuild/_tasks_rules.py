"""A deterministic, rule-based judge for stages D and F: the offline stand-in for the LLM judge.

LateralGym's shipped sample was built with it (``--judge rules``), and its verdicts are stored as the
engine's checkpoints like a model's. It compares a part with the gold affordance by category and
attribute overlap, not by meaning:

* The part has an affordance of the gold's category (the same function). At a level no higher
  than the gold's, it is as natural a choice: similar, **should replace the gold**, difficulty 5
  (the gold is rejected at stage D; the distractor is excluded at stage G). At a higher level it
  is a more far-fetched way to do the same job: similar, not a replacement, difficulty
  ``5 - level gap`` (at least 1), so a one-level gap is 4.
* Otherwise the part is similar when it shares at least a third of the gold's features (its
  category, the words of its enabling attributes and of the gold part's material) with the part's
  own (categories, enabling-attribute words, material words); difficulty 2, or 3 from half. Else
  not similar.
"""

from __future__ import annotations

import functools
import re

from lateralgym.envs import spaced
from lateralgym.envs.benchmarks.creativity import Affordance, Part
from lateralgym.envs.benchmarks.creativity.databuild._tasks_models import PartVerdict

__all__ = ["SIMILAR_SHARE", "compare_part", "features"]

SIMILAR_SHARE = 1 / 3
"""Share of the gold's features a part of another function must have to count as similar."""

_STOPWORDS = frozenset({"and", "the", "with", "for", "its", "that", "from", "into", "onto", "not", "can", "very"})


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 3 and w not in _STOPWORDS}


@functools.lru_cache(maxsize=65536)
def features(part: Part, only: Affordance | None = None) -> frozenset[str]:
    """A part's features: use categories, enabling-attribute words, material words (of ``only`` when given)."""
    affordances = (only,) if only is not None else part.affordances
    found = {f"use:{a.category}" for a in affordances if a.category}
    for affordance in affordances:
        for phrase in affordance.enabling_attributes:
            found |= {f"attr:{w}" for w in _words(phrase)}
    found |= {f"material:{w}" for w in _words(part.physical.material)}
    return frozenset(found)


def compare_part(part: Part, gold_part: Part, gold: Affordance) -> PartVerdict:
    """The rule-based verdict on ``part`` against the gold affordance (see the module docstring)."""
    name = spaced(part.name)
    same = [a for a in part.affordances if gold.category and a.category == gold.category]
    if same:
        best = min(same, key=lambda a: a.level)
        if best.level <= gold.level:
            reason = (
                f"Yes. The {name} can {best.action} (level {best.level}), as natural as the gold (level {gold.level})."
            )
            return PartVerdict(
                part=part.name,
                similar_affordance=True,
                similar_affordance_reason=reason,
                affordance=best.action,
                gold_change=True,
                gold_change_reason=reason,
                decision_difficulty=5,
            )
        gap = best.level - gold.level
        return PartVerdict(
            part=part.name,
            similar_affordance=True,
            similar_affordance_reason=f"Yes. The {name} can {best.action}, a less natural use (level {best.level}).",
            affordance=best.action,
            gold_change=False,
            gold_change_reason=f"No. The gold is the more usual choice (level {gold.level} against {best.level}).",
            decision_difficulty=max(1, 5 - gap),
        )
    wanted = features(gold_part, only=gold)
    shared = wanted & features(part)
    share = len(shared) / len(wanted) if wanted else 0.0
    if share >= SIMILAR_SHARE:
        common = ", ".join(sorted(f.split(":", 1)[1] for f in shared))
        return PartVerdict(
            part=part.name,
            similar_affordance=True,
            similar_affordance_reason=f"Partly. The {name} shares {common} with the gold part, but not its use.",
            affordance=part.affordances[0].action if part.affordances else "",
            gold_change=False,
            gold_change_reason="No. It lacks the gold's function; the gold does the job directly.",
            decision_difficulty=3 if share >= 0.5 else 2,
        )
    return PartVerdict(
        part=part.name,
        similar_affordance=False,
        similar_affordance_reason=f"No. The {name} has neither the gold's function nor its enabling attributes.",
        affordance="",
        gold_change=False,
        gold_change_reason="No. It cannot do this job.",
        decision_difficulty=None,
    )
