"""CreativityBench metrics: gold / entity correct rates, hallucinations, gold-inspection rate, factors.

Definitions (rates in percent):

* gold correct rate: the committed entity *and* part are the gold ones;
* entity correct rate: the committed entity is the gold one (whatever the part; a gold-correct
  answer is entity-correct too);
* hallucinated-entity rate: the answer named an entity that is not in the scene, over all
  episodes, reported on its own (a hallucination is also simply wrong);
* interactive mode: mean turns, mean inspections, and the gold-inspection rate (the gold entity
  was inspected before the final answer), overall and split by outcome (gold correct / entity
  correct only / both wrong), as in CreativityBench's Table 4; entity coverage is inspections
  over the scene's entity count.

Which episodes the rates count over follows the run's ``scoring`` (recorded in every outcome):

* ``official`` and ``paper``: unparsed replies, errored episodes (API errors) and timed-out
  interactive episodes (truncated without a commit) are dropped from the denominator; under
  ``official`` also answers with an empty ``how_to_use``, which the official judge never scores;
* ``strict``: every episode counts; errored, unparsed and timed-out ones count as wrong.

Every answer is also graded under the two other rules (``CreativityOutcome.rules``): the headline
adds ``<rule>_gold_correct_rate`` and ``<rule>_entity_correct_rate`` for each (with that rule's own
denominator), and ``by_scoring`` has one row per rule, the run's own marked, so ``compare`` shows
the official rule's numbers beside ours.

With an LLM judge, the breakdowns add the paper's judged metrics over the counted, answered
episodes (``judged_tables``): ``judged_quality`` (Table 3's rubric for gold-correct answers,
Tables 5-6's gold comparison and quality scores for entity-only and both-wrong answers, with the
judged / unjudged counts) and ``failure_attribution`` (Figure 11: primary and contributing
failure categories).

Beside every rate, the headline and each breakdown row report ``scored_episodes`` (the denominator
of the mean-of-R rates) and the ``unparsed`` / ``errored`` / ``timed_out`` counts, under both
scorings. Errored episodes are never hallucinated; their outcome is partial or empty, so they are
left out of the behaviour means (turns, inspections, gold inspection, exploration).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from lateralgym.envs._errors import ConfigError
from lateralgym.envs._scoring import (
    Exploration,
    ItemTerms,
    Scored,
    ScoredEpisode,
    Scorer,
    exploration_of,
    mean,
    mean_terms,
    pct,
    put,
    put_plain,
    rate_terms,
    success_rates,
    summarise_exploration,
)
from lateralgym.envs.benchmarks.creativity._judged import CreativityJudgement, judged_tables
from lateralgym.envs.benchmarks.creativity._judges import AnswerFacts
from lateralgym.envs.benchmarks.creativity._options import SCORINGS, Scoring
from lateralgym.envs.benchmarks.creativity._scene import CreativityOutcome

FACTORS = ("cluster_band", "gold_level", "level_kind", "distractor_count", "distractor_similarity")
"""The sampling factors the accuracy is broken down by (plus the scene)."""

OUTCOME_CLASSES = ("gold_correct", "entity_correct_only", "both_wrong")
"""CreativityBench Table 4's split of episodes by how the answer scored."""

_ORDER: dict[str, tuple[Any, ...]] = {
    "cluster_band": ("small", "medium", "large"),
    "level_kind": ("normal", "emergency"),
    "distractor_similarity": ("similar", "mixed", "dissimilar"),
}
UNKNOWN = "unknown"
"""The group of episodes whose item does not report a factor (an errored episode without metadata)."""


@dataclass(frozen=True, slots=True)
class CreativityAnswer:
    """The compact outcome of one CreativityBench episode."""

    errored: bool
    unparsed: bool
    """Finished without a graded answer, its last action unusable as one."""
    timed_out: bool
    """Finished by running out of turns without a graded answer (and not unparsed)."""
    scoring: Scoring | None
    """The rule its outcome was graded under; None for an episode that never started."""
    gold: bool
    entity: bool
    hallucinated: bool
    turns: int
    inspections: int
    entity_count: int
    gold_inspected: bool
    explore: Exploration | None
    answered: bool = False
    """A graded answer was committed."""
    judgement: CreativityJudgement | None = None
    """The LLM judge's assessment of the answer (None with an offline judge)."""
    rules: tuple[tuple[str, RuleAnswer], ...] = ()
    """The answer under every rule (empty without a commit, or from a log older than the rules)."""

    def under(self, rule: str) -> RuleAnswer:
        """The answer under ``rule``: its own grade, or nothing right when the episode has none."""
        return next((answer for name, answer in self.rules if name == rule), _NOTHING)

    @property
    def outcome_class(self) -> str:
        """``gold_correct``, ``entity_correct_only`` or ``both_wrong``."""
        return "gold_correct" if self.gold else "entity_correct_only" if self.entity else "both_wrong"

    @property
    def dropped(self) -> bool:
        """What the ``paper`` scoring leaves out of the denominator."""
        return self.errored or self.unparsed or self.timed_out


@dataclass(frozen=True, slots=True)
class RuleAnswer:
    """An answer's grade under one scoring rule."""

    gold: bool = False
    entity: bool = False
    hallucinated: bool = False
    unjudged: bool = False
    """The official judge would not score it (an empty ``how_to_use``)."""


_NOTHING = RuleAnswer()


def _rule_answer(facts: AnswerFacts) -> RuleAnswer:
    return RuleAnswer(
        gold=facts.part_correct,
        entity=facts.entity_correct or facts.part_correct,
        hallucinated=facts.hallucinated,
        unjudged=facts.unjudged,
    )


class CreativityScorer(Scorer[CreativityAnswer, dict[str, Any]]):
    """Scores CreativityBench (static, CoT and interactive)."""

    def summarise(self, end: ScoredEpisode) -> CreativityAnswer:
        outcome = end.outcome if isinstance(end.outcome, CreativityOutcome) else None
        ok = end.ok and outcome is not None
        gold = ok and outcome is not None and outcome.gold_correct
        unparsed = ok and outcome is not None and not outcome.committed and outcome.unparsed
        return CreativityAnswer(
            errored=not ok,
            unparsed=unparsed,
            timed_out=ok and outcome is not None and not outcome.committed and end.truncated and not unparsed,
            scoring=outcome.scoring if outcome is not None else None,
            gold=gold,
            entity=gold or (ok and outcome is not None and outcome.entity_correct),
            hallucinated=ok and outcome is not None and outcome.hallucinated,
            turns=end.turns,
            inspections=outcome.inspections if outcome is not None else 0,
            entity_count=outcome.entity_count if outcome is not None else int(end.meta.get("entity_count", 0) or 0),
            gold_inspected=ok and outcome is not None and outcome.gold_inspected,
            explore=exploration_of(outcome) if outcome is not None else None,
            answered=ok and outcome is not None and outcome.committed,
            judgement=outcome.judgement if ok and outcome is not None else None,
            rules=tuple((rule, _rule_answer(facts)) for rule, facts in outcome.rules.items())
            if ok and outcome is not None
            else (),
        )

    def describe(self, end: ScoredEpisode) -> dict[str, Any]:
        if isinstance(end.outcome, CreativityOutcome):
            info: dict[str, Any] = {**end.outcome.factors.model_dump(), "scene": end.outcome.scene}
        else:  # an episode that never started: its public metadata
            info = {name: end.meta.get(name) for name in (*FACTORS, "scene")}
            if info["level_kind"] is None and isinstance(info["gold_level"], int):
                info["level_kind"] = "normal" if info["gold_level"] == 0 else "emergency"
        return {key: UNKNOWN if value is None else value for key, value in info.items()}

    def interactive(self) -> bool:
        """Whether the run explored (interactive mode), so turn and inspection metrics mean something."""
        if self.mode is not None:
            return self.mode in ("interactive", "explore")
        return any(a.inspections or (a.explore and a.explore.questions) or a.turns > 1 for a in self.episodes())

    def scoring(self) -> Scoring:
        """The run's scoring rule, from its outcomes (``paper``, the config default, when none has one).

        Raises:
            ConfigError: the episodes were graded under both rules (logs of two runs mixed).
        """
        rules = {a.scoring for a in self.episodes() if a.scoring is not None}
        if len(rules) > 1:
            names = [repr(r) for r in sorted(map(str, rules))]
            which = f"both {names[0]} and {names[1]}" if len(names) == 2 else f"{', '.join(names[:-1])} and {names[-1]}"
            raise ConfigError(
                f"these CreativityBench episodes were scored under {which} scoring; "
                "compute metrics for each run's log separately"
            )
        return rules.pop() if rules else "paper"

    def _counted(self, items: list[str] | None = None, rule: str | None = None) -> dict[str, list[CreativityAnswer]]:
        """Each item's repeats that the rates count under ``rule`` (default: the run's scoring)."""
        rule = rule or self.scoring()
        keys = self.items if items is None else items
        return {k: [a for a in self.items[k].values() if _counts(a, rule)] for k in keys if k in self.items}

    def _rates(self, target: dict[str, Any], items: list[str] | None = None) -> None:
        """Gold / entity correct rates over the counted episodes, with the denominator and the
        unparsed / errored / timed-out counts beside them."""
        repeats = self.repeats
        counted = self._counted(items)
        put(target, "gold_correct_rate", *success_rates([[a.gold for a in c] for c in counted.values()]), repeats)
        put(target, "entity_correct_rate", *success_rates([[a.entity for a in c] for c in counted.values()]), repeats)
        keys = self.items if items is None else items
        every = [a for k in keys if k in self.items for a in self.items[k].values()]
        target["scored_episodes"] = sum(len(c) for c in counted.values())
        target["unparsed"] = sum(a.unparsed for a in every)
        target["errored"] = sum(a.errored for a in every)
        target["timed_out"] = sum(a.timed_out for a in every)

    def _rule_rates(self, rule: str) -> dict[str, Any]:
        """Gold / entity correct and hallucinated rates under ``rule``, over that rule's own denominator."""
        repeats = self.repeats
        counted = self._counted(rule=rule)
        row: dict[str, Any] = {"scoring": rule, "run's own": rule == self.scoring()}
        per_item = [[a.under(rule) for a in c] for c in counted.values()]
        put(row, "gold_correct_rate", *success_rates([[r.gold for r in c] for c in per_item]), repeats)
        put(row, "entity_correct_rate", *success_rates([[r.entity for r in c] for c in per_item]), repeats)
        every = [r for c in per_item for r in c]
        put_plain(row, "hallucinated_rate", pct(sum(r.hallucinated for r in every), len(every)))
        row["scored_episodes"] = len(every)
        return row

    def score(self) -> Scored:
        scored = Scored()
        self._rates(scored.headline)
        counted = [a for c in self._counted().values() for a in c]
        put_plain(scored.headline, "hallucinated_rate", pct(sum(a.hallucinated for a in counted), len(counted)))
        if any(a.rules for a in self.episodes()):
            own = self.scoring()
            rows = [self._rule_rates(rule) if rule != own else None for rule in SCORINGS]
            scored.breakdowns["by_scoring"] = [
                row if row is not None else {"scoring": own, "run's own": True, **_rates_of(scored.headline)}
                for row in rows
            ]
            for row in rows:
                if row is not None:
                    for name, value in row.items():
                        if name.startswith(("gold_correct_rate", "entity_correct_rate")):
                            scored.headline[f"{row['scoring']}_{name}"] = value
        if self.interactive():
            self._interactive(scored, [a for a in self.episodes() if not a.errored])
        # Table 3, Tables 5-6 and Figure 11 (LLM judge runs only): over the counted, answered episodes.
        scored.breakdowns.update(judged_tables([(a.outcome_class, a.judgement) for a in counted if a.answered]))
        for factor in (*FACTORS, "scene"):
            scored.breakdowns[f"by_{factor}"] = self._breakdown(factor)
        return scored

    def tries(self) -> list[list[bool]]:
        """Each item's gold-correct tries over the episodes the run's scoring counts (``gold_correct_rate``'s),
        for ``pass^k`` and ``pass@k``: under ``official`` and ``paper`` a dropped episode is no try."""
        return [[a.gold for a in counted] for counted in self._counted().values()]

    def headline_terms(self) -> dict[str, ItemTerms]:
        """``score``'s headline as sums over items, for the bootstrap (``ItemTerms``)."""
        own = self.scoring()
        every = [list(repeats.values()) for repeats in self.items.values()]
        counted = [[a for a in answers if _counts(a, own)] for answers in every]
        terms: dict[str, ItemTerms] = {}
        rate_terms(terms, "gold_correct_rate", [[a.gold for a in c] for c in counted], self.repeats)
        rate_terms(terms, "entity_correct_rate", [[a.entity for a in c] for c in counted], self.repeats)
        if any(a.rules for a in self.episodes()):  # the other rules' rates, over each rule's own denominator
            for rule in SCORINGS:
                if rule != own:
                    graded = [[a.under(rule) for a in answers if _counts(a, rule)] for answers in every]
                    for name in ("gold", "entity"):
                        per_item = [[getattr(r, name) for r in g] for g in graded]
                        rate_terms(terms, f"{rule}_{name}_correct_rate", per_item, self.repeats)
        terms["scored_episodes"] = ItemTerms([float(len(c)) for c in counted])
        for count in ("unparsed", "errored", "timed_out"):
            terms[count] = ItemTerms([float(sum(getattr(a, count) for a in answers)) for answers in every])
        terms["hallucinated_rate"] = mean_terms([[a.hallucinated for a in c] for c in counted], 100.0)
        if self.interactive():
            finished = [[a for a in answers if not a.errored] for answers in every]
            terms["mean_turns"] = mean_terms([[a.turns for a in f] for f in finished])
            terms["mean_inspections"] = mean_terms([[a.inspections for a in f] for f in finished])
            terms["gold_inspection_rate"] = mean_terms([[a.gold_inspected for a in f] for f in finished], 100.0)
            for outcome_class in OUTCOME_CLASSES:
                short = "entity_only" if outcome_class == "entity_correct_only" else outcome_class
                terms[f"gold_inspection_rate_{short}"] = mean_terms(
                    [[a.gold_inspected for a in f if a.outcome_class == outcome_class] for f in finished], 100.0
                )
        return terms

    def _interactive(self, scored: Scored, finished: list[CreativityAnswer]) -> None:
        headline = scored.headline
        put_plain(headline, "mean_turns", mean(a.turns for a in finished))
        put_plain(headline, "mean_inspections", mean(a.inspections for a in finished))
        put_plain(headline, "gold_inspection_rate", pct(sum(a.gold_inspected for a in finished), len(finished)))
        rows: list[dict[str, Any]] = []
        for outcome_class in OUTCOME_CLASSES:
            group = [a for a in finished if a.outcome_class == outcome_class]
            rate = pct(sum(a.gold_inspected for a in group), len(group))
            short = "entity_only" if outcome_class == "entity_correct_only" else outcome_class
            put_plain(headline, f"gold_inspection_rate_{short}", rate)
            row: dict[str, Any] = {"outcome": outcome_class, "episodes": len(group)}
            put_plain(row, "share", pct(len(group), len(finished)))
            put_plain(row, "mean_turns", mean(a.turns for a in group))
            put_plain(row, "mean_inspections", mean(a.inspections for a in group))
            put_plain(row, "gold_inspection_rate", rate)
            rows.append(row)
        scored.breakdowns["by_outcome"] = rows
        exploration = summarise_exploration([a.explore for a in finished if a.explore is not None])
        put_plain(exploration, "mean_inspections", mean(a.inspections for a in finished))
        put_plain(
            exploration,
            "entity_coverage",
            mean(100.0 * a.inspections / a.entity_count for a in finished if a.entity_count > 0),
        )
        scored.exploration = exploration

    def _breakdown(self, factor: str) -> list[dict[str, Any]]:
        groups: dict[Any, list[str]] = defaultdict(list)
        for item_id, info in self.info.items():
            groups[info[factor]].append(item_id)
        rows = []
        for value in sorted(groups, key=lambda v: _sort_key(factor, v)):
            items = groups[value]
            row: dict[str, Any] = {
                factor: value,
                "items": len(items),
                "episodes": sum(len(self.items[i]) for i in items),
            }
            self._rates(row, items)
            rows.append(row)
        return rows


def _counts(answer: CreativityAnswer, rule: str) -> bool:
    """Whether ``rule``'s denominator counts the episode: every one under ``strict``; under ``official``
    and ``paper`` not the unparsed, errored and timed-out ones (``official``: nor an unjudged answer)."""
    if rule == "strict":
        return True
    return not answer.dropped and not (rule == "official" and answer.under("official").unjudged)


def _rates_of(headline: dict[str, Any]) -> dict[str, Any]:
    """The run's own rates and denominator as a ``by_scoring`` row holds them."""
    keep = ("gold_correct_rate", "entity_correct_rate", "hallucinated_rate")
    row = {k: v for k, v in headline.items() if k.startswith(keep)}
    row["scored_episodes"] = headline.get("scored_episodes")
    return row


def _sort_key(factor: str, value: Any) -> tuple[int, float, str]:
    """Known categories in their natural order, numbers ascending, ``unknown`` last."""
    if value == UNKNOWN:
        return (3, 0.0, "")
    order = _ORDER.get(factor, ())
    if value in order:
        return (0, float(order.index(value)), "")
    if isinstance(value, int | float):
        return (1, float(value), "")
    return (2, 0.0, str(value))
