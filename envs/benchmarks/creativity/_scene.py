"""The rules of one CreativityBench task: inspect entities (and scene items), ask about attributes, commit a part.

Two exploring protocols share these rules. ``interactive`` is the paper's (CreativityBench §5 and
App. E-F; the official ``run_interactive``): the first message shows the task, the first-person
environment text and the names of the entities and interactable scene items, mixed in one list;
each turn inspects one of them; every reply while the episode goes on ends with the turns
remaining. ``explore`` is LateralGym's own: entity names only, yes/no questions allowed, no
countdown.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from gymnasium import spaces
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lateralgym.envs._actions import Ask, Commit, Inspect
from lateralgym.envs._benchmark import ViewSection
from lateralgym.envs._cache import IdentityCache
from lateralgym.envs._config import EpisodeConfig, RewardConfig
from lateralgym.envs._engine import Handled, Scene, usage_text
from lateralgym.envs._errors import ConfigError
from lateralgym.envs._judging import Judge, JudgeReply, question_counts
from lateralgym.envs._matching import NameMatcher, match_name, snake
from lateralgym.envs._scoring import ExplorationOutcome
from lateralgym.envs._text import MAX_TEXT, is_clean, sanitise
from lateralgym.envs.benchmarks.creativity._judged import CreativityJudgement
from lateralgym.envs.benchmarks.creativity._judges import (
    AnswerFacts,
    answer_facts,
    grades_by_rule,
    rule_facts,
    shared_reply,
)
from lateralgym.envs.benchmarks.creativity._lookup import task_lookup
from lateralgym.envs.benchmarks.creativity._options import CreativityOptions, Scoring
from lateralgym.envs.benchmarks.creativity._render import described, task_text
from lateralgym.envs.benchmarks.creativity._schema import ClusterBand, CreativityTask, DistractorSimilarity, Entity


class Factors(BaseModel):
    """The sampling factors of the task, as the metrics break down by them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cluster_band: ClusterBand
    gold_level: int
    level_kind: Literal["normal", "emergency"]
    distractor_count: int
    distractor_similarity: DistractorSimilarity


class Answer(BaseModel):
    """The committed answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    entity: str | None
    part: str | None
    how_to_use: str | None


class CreativityOutcome(ExplorationOutcome):
    """A CreativityBench episode's outcome (paper §5-6: gold / entity correct, exploration)."""

    answer: Answer | None
    """The committed answer; None without a commit."""
    gold_correct: bool
    """Entity and part are the gold ones."""
    entity_correct: bool
    """The entity is the gold one."""
    hallucinated: bool
    """The answer named an entity that is not in the scene."""
    rubric: dict[str, float]
    """LLM judge rubric scores on the 1-5 scale, NA fields left out, plus ``mean`` (empty with an
    offline judge); the whole judgement is ``judgement``."""
    judgement: CreativityJudgement | None = None
    """The LLM judge's assessment of the committed answer: Table 3's rubric (gold correct), Tables
    5-6's scores and the failure attribution (wrong); None with an offline judge or no answer."""
    inspections: int
    """Distinct entities inspected."""
    inspected: list[str]
    """The inspected entities, in order."""
    gold_inspected: bool
    """The gold entity was inspected."""
    entity_count: int
    """Entities in the scene."""
    asks: int
    """Yes/no questions asked (explore mode)."""
    items_inspected: list[str] = Field(default_factory=list)
    """Interactable scene items inspected (interactive mode), in order."""
    factors: Factors
    """The task's sampling factors."""
    scene: str
    """The household scene."""
    scoring: Scoring
    """The config's scoring rule: it graded the answer and decides whether the metrics count the
    episode (``official`` and ``paper`` drop unparsed, errored and timed-out episodes from the
    denominator)."""
    rules: dict[str, AnswerFacts] = Field(default_factory=dict)
    """The committed answer graded under every rule (``official``, ``paper``, ``strict``), so a run
    reports the other rules' rates beside its own; empty without a commit (and in older logs). A lean
    env (``LateralEnv(lean=True)``, what the RL trainers step) grades the config's rule alone."""
    unparsed: bool
    """No answer was graded and the episode's last action was unusable as one: unparsable text
    (``Invalid``), an action the mode does not allow, or a commit without an entity or a part."""

    judge_prose: ClassVar[frozenset[str]] = frozenset({"judgement.comment"})

    def succeeded(self) -> bool:
        return self.gold_correct

    def badge(self) -> str:
        return "correct" if self.gold_correct else "entity only" if self.entity_correct else "wrong"

    view_hidden = frozenset({"inspected", "answer", "judgement", "rubric", "rules"})

    def view_sections(self) -> list[ViewSection]:
        """The inspected entities, the answer and, with an LLM judge, its judgement."""
        answer = self.answer.model_dump() if self.answer is not None else None
        sections = [
            ViewSection(title="Inspected entities", chips=list(self.inspected), css_class="inspected"),
            ViewSection(title="Answer", rows=list(answer.items()) if answer else None, empty="no answer committed"),
        ]
        j = self.judgement
        if j is None:
            return sections
        if not j.judged:
            empty = "unjudged: the judge's reply stayed malformed after its re-ask"
            return [*sections, ViewSection(title="Judged (LLM judge)", empty=empty)]
        kind = "gold correct (Table 3 rubric, 1-5)" if j.kind == "gold" else "wrong answer (Tables 5-6, 1-5)"
        rows: list[tuple[str, Any]] = [("assessed as", f"{kind}; measured as {j.protocol} judging")]
        rows += [(name, "NA" if score is None else score) for name, score in j.scores.items()]
        rows.append(("mean", j.mean))
        if j.comparison_level is not None:
            rows.append(("comparison with the gold (0 gold better, 1 close, 2 replace it)", j.comparison_level))
        if j.comparison_reason:
            rows.append(("comparison's reason", j.comparison_reason))
        if j.gold_comparison is not None:
            rows.append(("gold comparison (1 gold ... 5 prediction)", j.gold_comparison))
        if j.failure_category:
            rows.append(("failure category (Figure 11)", j.failure_category.replace("_", " ")))
        if j.contributing_categories:
            rows.append(("contributing categories", ", ".join(c.replace("_", " ") for c in j.contributing_categories)))
        if j.primary_failure:
            rows.append(("primary failure", j.primary_failure))
        if j.contributing_failures:
            rows.append(("contributing failures", ", ".join(j.contributing_failures)))
        if j.comment:
            rows.append(("judge's comment", j.comment))
        return [*sections, ViewSection(title="Judged (LLM judge)", rows=rows, element_id="judged-table")]


class CreativityScene(Scene[CreativityTask, CreativityOutcome]):
    """The rules of one CreativityBench task."""

    def __init__(
        self, item: CreativityTask, config: EpisodeConfig, judge: Judge | None, rng: np.random.Generator
    ) -> None:
        super().__init__(item, config, judge, rng)
        self.options = options = config.options_as(CreativityOptions)
        if len(item.entities) > options.max_entities:
            raise ConfigError(
                f"task {item.id!r} has {len(item.entities)} entities but options.max_entities is "
                f"{options.max_entities}; raise it in the config"
            )
        view = task_text(item)
        self._view = view
        # Releases list the gold first: by default the scene order is drawn per episode from the env's
        # seed. ``shuffle`` of a list makes the same swaps as ``permutation`` (it shuffles an ``arange``),
        # faster. ``official`` lists the gold first, as the official static and CoT prompts show a release.
        self._order = list(range(len(item.entities)))
        order = options.order()
        if order == "shuffled":
            self.rng.shuffle(self._order)
        elif order == "official":
            gold = view.names.index(next(n for n in view.names if snake(n) == view.gold_entity))
            self._order = [gold, *(n for n in self._order if n != gold)]
        names = view.names
        self.names = [names[n] for n in self._order]
        self._by_name = view.by_name
        self.inspected: list[str] = []
        self._entity_mask = _entity_mask(options.max_entities, len(self.names))
        """Which entity slots are in use (shared by every scene of that size: read only)."""
        self._inspected_mask = np.zeros(options.max_entities, dtype=np.int8)
        """Which entity slots are inspected (``fields``), kept as ``_inspect`` adds to ``inspected``."""
        self._revealed: list[str] = []
        """The inspected entities in the scene's order (what ``public`` reveals in the names mode)."""
        self._gold_seen = False
        """The gold entity was inspected (``final_reward`` pays for it, the outcome records it)."""
        self.asks = 0
        self.committed: Commit | None = None
        self.first_commit_turn: int | None = None
        self._handled_turn = 0
        self._incomplete_commit_turn = 0
        self.result: dict[str, Any] = {}
        self._gold_entity = view.gold_entity
        self.paper_protocol = config.mode == "interactive"
        """The paper's interactive protocol: environment text, inspectable items, a countdown."""
        self._items = view.interactable if self.paper_protocol else {}
        """Inspectable scene items by name (shared by every episode of the task: read only)."""
        self.items_inspected: list[str] = []
        self.things = [*self.names, *self._items]
        self._matcher: NameMatcher | None = None
        if self.paper_protocol:
            # The official harness shuffles entities and items into one list: no hint which is which.
            self.rng.shuffle(self.things)

    @property
    def entities(self) -> list[Entity]:
        """The scene's entities in the order the player sees them (``names``' order)."""
        entities = self.item.entities
        return [entities[n] for n in self._order]

    def brief(self) -> str:
        task, view = self.item, self._view
        if self.paper_protocol:
            return (
                f"TASK: {task.task}\nENVIRONMENT: {task.environment}\nTHINGS IN THE SCENE: {'; '.join(self.things)}\n"
                f"You have {self.config.max_turns} turns. Each turn, inspect ONE thing to read its description "
                "(an entity's parts with their physical and state attributes), or give your final answer.\n"
                + usage_text(self.config)
            )
        if self.config.reveal == "full":
            descriptions = view.descriptions
            lines = [view.head, *[descriptions[n] for n in self._order]]
        else:
            lines = [f"TASK: {task.task}", "ENTITIES AROUND YOU: " + "; ".join(self.names)]
        if view.items_line:
            lines.append(view.items_line)
        if self.config.reveal != "full":
            lines.append(
                f"You have {self.config.max_turns} turns. Inspect an entity to see its parts and their attributes."
            )
        lines.append(usage_text(self.config))
        return "\n".join(lines)

    def opening(self) -> str:
        """The brief, unscanned when it is joined from pieces already known clean (see ``TaskText``)."""
        text = self.brief()
        return text if self._view.clean and len(text) <= MAX_TEXT and _clean_usage(self.config) else sanitise(text)

    async def handle(self, action: Inspect | Ask | Commit) -> Handled:
        # The engine answers invalid and disallowed actions itself: a turn this never saw was one.
        self._handled_turn = self.turn
        if isinstance(action, Inspect):
            return self._inspect(action.entity)
        if isinstance(action, Ask):
            self.asks += 1
            reply = await self.ask_judge(action.question)
            return Handled(message=f"{self.history[-1].label.capitalize()}.", judge=reply)
        return await self._commit(action)

    def _inspect(self, query: str) -> Handled:
        if self._matcher is None:  # the task's own (built once per task) unless the scene's order could matter
            shared = task_lookup(self.item).entities
            self._matcher = shared if shared.order_free else NameMatcher(self.names)
        name = self._matcher.match(query)
        if name is None and self._items:
            item = match_name(query, list(self._items))
            if item is not None:
                if item not in self.items_inspected:
                    self.items_inspected.append(item)
                return Handled(message=f"{item}: {self._items[item].description or 'nothing more to see.'}")
        if name is None:
            kind, listed = ("thing", self.things) if self.paper_protocol else ("entity", self.names)
            return Handled(
                message=f"There is no {kind} called {query!r} here. Choose one of: {'; '.join(listed)}.",
                valid=False,
            )
        if name not in self.inspected:
            self.inspected.append(name)
            for slot, other in enumerate(self.names):  # every slot of that name (a name may repeat)
                if other == name:
                    self._inspected_mask[slot] = 1
            self._revealed = [n for n in self.names if n in self.inspected]
            self._gold_seen = self._gold_seen or snake(name) == self._gold_entity
        return _inspected(self._entity(name))

    async def _commit(self, action: Commit) -> Handled:
        scoring = self.options.scoring
        # The official judge grades an answer missing its entity or its part (the empty name is grounded,
        # quirks Q1 and Q7 of ``_official.py``); our rules need both.
        incomplete = not action.entity or not action.part
        if incomplete and not (scoring == "official" and (action.entity or action.part)):
            self._incomplete_commit_turn = self.turn
            return Handled(
                message="A commit needs an entity and a part: commit: <entity> | <part> | <how>.", valid=False
            )
        # ``isinstance(judge, ScoringJudge)``, without a runtime protocol check's cost on every commit.
        grade_under = getattr(self.judge, "grade_under", None)
        if grade_under is not None:
            reply = await grade_under(self.item, action, tuple(self.history), scoring, self.options)
        else:
            reply = await self.grade(action)
        # A lean env's reward reads the config's rule alone: the other two are graded for runs' reports only.
        rules = {scoring: rule_facts(self.item, action, scoring)} if self.lean else grades_by_rule(self.item, action)
        if scoring != "strict":
            # The rule's own correctness, whatever the judge (an LLM judge adds its rubric).
            own = rules[scoring]
            if reply.detail is not own and reply.detail != own:
                label = "correct" if own.part_correct else "incorrect"
                reply = reply.model_copy(update={"label": label, "detail": own})
        if self.first_commit_turn is None:
            self.first_commit_turn = self.turn
        self.committed = action
        facts = answer_facts(reply)
        gold_correct, entity_correct = facts.part_correct, facts.entity_correct
        self.result = {
            "gold_correct": gold_correct,
            "entity_correct": entity_correct,
            "hallucinated": facts.hallucinated,
            "rules": rules,
            "rubric": dict(reply.rubric),
            "judgement": _judgement(reply.assessment),
        }
        rewards = self.config.rewards
        reward = rewards.correct if gold_correct else rewards.extra("entity_only") if entity_correct else 0.0
        verdict = (
            "correct: the entity and the part fit the task"
            if gold_correct
            else "partly correct: the entity fits, the part does not"
            if entity_correct
            else "not the intended solution"
        )
        key = (id(reply), id(rewards), verdict)
        shared = _commit_replies.get(key)
        if shared is not None and shared[0] is reply and shared[1] is rewards:  # the same grade, rewards, verdict
            return shared[2]
        handled = Handled(message=f"Answer recorded. Result: {verdict}.", reward=reward, terminated=True, judge=reply)
        if len(_commit_replies) < 256 and shared_reply(reply) is not None:  # a plain grade's reply is shared (frozen)
            _commit_replies[key] = (reply, rewards, handled)
        return handled

    def _entity(self, name: str) -> Entity:
        return self._by_name[name]

    def turn_notice(self, turn: int) -> str:
        """The paper's countdown ending every reply of the interactive mode (App. F); none otherwise."""
        left = self.config.max_turns - turn
        if not self.paper_protocol or left < 1:
            return ""
        if left == 1:
            return "\n[1 turn left: this is your last turn, give your final answer now.]"
        notice = _notices.get(left)
        if notice is None:
            notice = _notices[left] = f"\n[{left} turns left.]"
        return notice

    def final_reward(self) -> float:
        """The ``gold_inspection`` reward if the gold entity was inspected: paid at the end, since a bonus
        on the inspecting step would tell the player which entity is the gold."""
        return self.config.rewards.extra("gold_inspection") if self._gold_seen else 0.0

    def outcome(self, turns: int, invalid_actions: int) -> CreativityOutcome:
        task = self.item
        committed = self.committed
        return CreativityOutcome(
            **self.common(turns, invalid_actions, committed=committed is not None),
            **(question_counts(self.history) if self.history else _NO_QUESTIONS),
            first_commit_turn=self.first_commit_turn,
            answer=None
            if committed is None
            else Answer(entity=committed.entity, part=committed.part, how_to_use=committed.how_to_use),
            gold_correct=bool(self.result.get("gold_correct", False)),
            entity_correct=bool(self.result.get("entity_correct", False)),
            hallucinated=bool(self.result.get("hallucinated", False)),
            rules=dict(self.result.get("rules", {})),
            rubric=dict(self.result.get("rubric", {})),
            judgement=self.result.get("judgement"),
            inspections=len(self.inspected),
            inspected=list(self.inspected),
            gold_inspected=self._gold_seen,
            entity_count=len(task.entities),
            asks=self.asks,
            items_inspected=list(self.items_inspected),
            factors=_factors(task),
            scene=task.scene,
            scoring=self.options.scoring,
            unparsed=committed is None
            and turns > 0
            and (turns > self._handled_turn or turns == self._incomplete_commit_turn),
        )

    def public(self) -> dict[str, Any]:
        """The task, entity names, and the parts and attributes of every revealed entity."""
        texts = self._view.text_by_name
        revealed = self.names if self.config.reveal == "full" else self._revealed
        return {
            "task": self.item.task,
            "items": list(self._view.item_names),
            "inspectable_items": list(self._items),
            "entities": list(self.names),
            "revealed": {name: texts[name].parts.copy() for name in revealed},
        }

    def fields(self) -> dict[str, Any]:
        # Copies: an observation is the player's to keep (and change), the scene's masks live on.
        return {"entity_mask": self._entity_mask.copy(), "inspected_mask": self._inspected_mask.copy()}

    @classmethod
    def extra_spaces(cls, config: EpisodeConfig) -> dict[str, spaces.Space[Any]]:
        return {
            "entity_mask": spaces.MultiBinary(config.options_as(CreativityOptions).max_entities),
            "inspected_mask": spaces.MultiBinary(config.options_as(CreativityOptions).max_entities),
        }


_notices: dict[int, str] = {}
"""The countdown's texts by turns left."""

_commit_replies: dict[tuple[int, int, str], tuple[JudgeReply, RewardConfig, Handled]] = {}
"""The replies to commits graded with one of the shared plain replies (``shared_reply``), by that
reply's and the config's rewards' identities (both kept alive here) and the verdict: a few dozen."""

_inspect_replies: IdentityCache[Entity, Handled] = IdentityCache(8192)


def _inspected(entity: Entity) -> Handled:
    """The reply to inspecting ``entity``: its description (frozen, so one reply serves every episode),
    marked clean when it is, so the engine does not scan it again."""
    reply = _inspect_replies.get(entity)
    if reply is None:
        text = described(entity)
        reply = _inspect_replies.put(entity, Handled(message=text, clean=is_clean(text)))
    return reply


_entity_masks: dict[tuple[int, int], np.ndarray] = {}


def _entity_mask(size: int, used: int) -> np.ndarray:
    """``size`` slots, the first ``used`` set (one array per shape, never written: ``fields`` copies it)."""
    mask = _entity_masks.get((size, used))
    if mask is None:
        mask = _entity_masks[size, used] = np.zeros(size, dtype=np.int8)
        mask[:used] = 1
    return mask


_NO_QUESTIONS = question_counts(())
"""The question counts of an episode that asked none (static: every episode)."""

_factors_cache: IdentityCache[CreativityTask, Factors] = IdentityCache(4096)


def _factors(task: CreativityTask) -> Factors:
    """The task's sampling factors as the outcome records them (frozen: one object per task)."""
    hit = _factors_cache.get(task)
    if hit is not None:
        return hit
    f = task.factors
    factors = Factors(
        cluster_band=f.cluster_band,
        gold_level=f.gold_level,
        level_kind=f.level_kind,
        distractor_count=f.distractor_count,
        distractor_similarity=f.distractor_similarity,
    )
    return _factors_cache.put(task, factors)


def _judgement(assessment: dict[str, Any]) -> CreativityJudgement | None:
    """A judge's assessment as a typed judgement; None without one (or from a judge that sends
    something else: correctness never depends on it)."""
    if not assessment:
        return None
    try:
        return CreativityJudgement.model_validate(assessment)
    except ValidationError:
        return None


_clean_lines: dict[str, bool] = {}


def _clean_usage(config: EpisodeConfig) -> bool:
    """The usage line is already what ``sanitise`` makes of it (action forms are the package's own text)."""
    usage = usage_text(config)
    clean = _clean_lines.get(usage)
    if clean is None:
        clean = _clean_lines[usage] = sanitise(usage) == usage
    return clean
