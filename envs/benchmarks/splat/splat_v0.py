"""SPLAT situation puzzles as a two-agent PettingZoo AEC environment: ``player`` and ``judge``.

## Description
The SPLAT protocol with the judge as an agent of its own (an LLM, a person or a rule judge
driven from outside), alternating with the player: the player asks a yes/no question or
proposes an explanation, then the judge replies. It feeds the same metrics as
``lateralgym/Splat-v1`` (Acc, Rnd, O/A per band). Use ``env()`` for the wrapped env.

It is a thin adapter over the same SPLAT scene as ``lateralgym/Splat-v1``: one set of rules, one
opening text, one verdict parser. The adapter steps the Gymnasium env's ``astep`` coroutine, and
when the scene asks its judge, the coroutine pauses until the ``judge`` agent has spoken.

## Action Space
Both agents: ``UnicodeText``. The player writes ``ask: <question>`` or ``commit: <explanation>``. The
judge writes ``yes`` / ``no`` / ``irrelevant`` to a question and ``correct`` or ``not yet: <hint>``
to an explanation; under ``protocol: paper`` every player move is one ``message`` that the judge
answers ``correct`` (it solves the puzzle) or yes / no / irrelevant. The env normalises the
judge's reply to that vocabulary (an unreadable answer is recorded as ``unclear`` and the player
hears only that the judge could not answer; an unclear verdict is ``not yet``) and forwards to the
player only the label and a hint that passed the leak check: no judge can pass the hidden answer
to the player.

## Observation Space
``Dict``: ``text``, ``turn`` (rounds used), ``last_reply`` (0 none, 1 yes, 2 no, 3 irrelevant,
4 not yet, 5 correct, 6 unclear). The judge's text contains the hidden answer; the player's never does.

``infos["player"]`` holds public facts (``item`` key, ``benchmark``, ``mode``, ``turn``, and
``public``: title, story, question history); ``infos["judge"]`` holds the ``pending`` move to
answer and the history. ``lateralgym.judges.JudgeSeat`` plays the judge seat with any judge.

## Starting State
The player observes the title and story; the judge observes the title, story and answer.

## Rewards
The player gets ``rewards.correct`` when the judge accepts an explanation, plus ``rewards.step``
per round and ``rewards.invalid`` per invalid move; the judge gets 0.

## Episode End
Both agents terminate when solved; both truncate after ``max_turns`` player rounds (15).

## Arguments
``config`` (an ``EpisodeConfig``, default the shipped ``splat`` config), ``items``
(``SituationPuzzle`` list, default the sample data), ``render_mode`` (``"ansi"``).

## Version History
* v0: initial release.
"""

from __future__ import annotations

from collections.abc import Coroutine, Generator, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from lateralgym.envs._actions import Commit
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._engine import MAX_ACTION, StepResult
from lateralgym.envs._errors import ConfigError
from lateralgym.envs._judging import QA, UNCLEAR, JudgeReply, extract_answer_label, parse_grade, parse_message_label
from lateralgym.envs._text import sanitise, text_space
from lateralgym.envs.benchmarks.splat import SplatEnv
from lateralgym.envs.benchmarks.splat._scene import SituationPuzzle

PLAYER, JUDGE = "player", "judge"
WAITING = "Waiting for the player."


def env(**kwargs: Any) -> AECEnv[str, dict[str, Any], str]:
    """The AEC env wrapped in PettingZoo's order check."""
    # No AssertOutOfBoundsWrapper: the env parses and sanitises any text itself, and a judge's reply
    # with a carriage return or an emoji must be answered, not crash the episode.
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


def parse_verdict(text: str) -> tuple[str, str | None]:
    """``("correct", None)`` or ``("not_yet", hint)`` from a judge's free text (unclear: not yet)."""
    return parse_grade(text) or ("not_yet", None)


class _JudgeTurn:
    """What the scene awaits when it asks the judge agent; the agent's text is sent back in."""

    def __init__(self, kind: str, text: str) -> None:
        self.kind = kind
        self.text = text

    def __await__(self) -> Generator[_JudgeTurn, str, str]:
        reply = yield self
        return reply


class AgentJudge:
    """The judge seat of the AEC env: each call waits for the ``judge`` agent's reply text."""

    name = "agent"

    async def answer(self, item: Any, question: str, history: tuple[QA, ...]) -> JudgeReply:
        text = await _JudgeTurn("ask", question)
        return JudgeReply(label=extract_answer_label(text) or UNCLEAR, raw=text)

    async def respond(self, item: Any, message: str) -> JudgeReply:
        text = await _JudgeTurn("message", message)
        return JudgeReply(label=parse_message_label(text) or UNCLEAR, raw=text)

    async def grade(self, item: Any, commit: Commit, history: tuple[QA, ...]) -> JudgeReply:
        text = await _JudgeTurn("commit", commit.answer or "")
        verdict, hint = parse_verdict(text)
        return JudgeReply(label="correct" if verdict == "correct" else "not_yet", hint=hint, raw=text)


class raw_env(AECEnv[str, dict[str, Any], str]):  # type: ignore[misc]  # noqa: N801 - PettingZoo naming
    """SPLAT player/judge AEC env; see the module docstring (the env card)."""

    metadata = {"name": "splat_v0", "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(
        self,
        config: EpisodeConfig | None = None,
        items: Sequence[SituationPuzzle] | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.config = config or EpisodeConfig.named("splat")
        if self.config.benchmark != "splat":
            raise ConfigError(f"splat_v0 needs a splat config, got {self.config.name!r}")
        self.game = SplatEnv(self.config, items=items, judge=AgentJudge())
        self.items = self.game.items
        self.render_mode = render_mode
        self.possible_agents = [PLAYER, JUDGE]
        self.agents: list[str] = []
        self.observation_spaces = {a: self.game.observation_space for a in self.possible_agents}
        self.action_spaces = {a: text_space(MAX_ACTION) for a in self.possible_agents}
        self.transcript: list[str] = []
        self._pending: Coroutine[Any, Any, StepResult] | None = None
        self._turn: _JudgeTurn | None = None

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        observation, info = self.game.reset(seed=seed, options=options)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        if self._pending is not None:
            self._pending.close()
        self._pending, self._turn = None, None
        self._text = {PLAYER: str(observation["text"]), JUDGE: WAITING}
        self._player_info = info
        self.transcript = [self._text[PLAYER]]
        self.agent_selection = PLAYER
        self._refresh_infos()

    @property
    def puzzle(self) -> SituationPuzzle:
        """The current puzzle (privileged)."""
        puzzle: SituationPuzzle = self.game.item
        return puzzle

    def _refresh_infos(self) -> None:
        """The player's info holds only public facts; the judge's also the move it must answer."""
        history = self._player_info["public"]["history"]
        pending = None
        if self._turn is not None:
            field = {"ask": "question", "commit": "answer", "message": "message"}[self._turn.kind]
            pending = {"kind": self._turn.kind, field: self._turn.text}
        judge_info: dict[str, Any] = {"item": self._player_info["item"], "pending": pending, "history": history}
        if "outcome" in self._player_info:
            judge_info["outcome"] = self._player_info["outcome"]
        self.infos = {PLAYER: dict(self._player_info), JUDGE: judge_info}

    def observe(self, agent: str) -> dict[str, Any]:
        scene = self.game.scene
        last = scene.last_reply if scene is not None else 0  # type: ignore[attr-defined]
        return {"text": sanitise(self._text[agent]), "turn": np.int64(self.game.turn), "last_reply": np.int64(last)}

    def _judge_text(self, turn: _JudgeTurn) -> str:
        p = self.puzzle
        brief = f"You are the judge. TITLE: {p.title}\nSTORY: {p.story}\nHIDDEN ANSWER: {p.answer}\n"
        if turn.kind == "ask":
            return brief + f"QUESTION: {turn.text}\nReply with yes, no or irrelevant."
        if turn.kind == "message":
            return (
                brief
                + f"PLAYER'S MESSAGE: {turn.text}\n"
                + "Reply 'correct' if it states what really happened, else yes, no or irrelevant."
            )
        return (
            brief
            + f"PROPOSED EXPLANATION: {turn.text}\n"
            + "Reply 'correct' or 'not yet: <a hint that does not give the answer away>'."
        )

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        if agent == PLAYER:
            self._pending = self.game.astep(action)
            self._advance(None)
        else:
            text = action if isinstance(action, str) else str(action)
            self._advance(text)
        self._accumulate_rewards()

    def _advance(self, reply: str | None) -> None:
        """Run the scene until it finishes the round or waits for the judge agent."""
        assert self._pending is not None
        try:
            waiting = self._pending.send(reply)
        except StopIteration as done:
            self._finish(done.value)
            return
        assert isinstance(waiting, _JudgeTurn), "the SPLAT scene awaits only its judge"
        self._turn = waiting
        self._text[JUDGE] = self._judge_text(waiting)
        move = f"explanation: {waiting.text}" if waiting.kind == "commit" else waiting.text
        self.transcript.append(f"player: {move}")
        self.agent_selection = JUDGE
        self._refresh_infos()

    def _finish(self, result: StepResult) -> None:
        observation, reward, terminated, truncated, info = result
        if self._turn is not None:
            self.transcript.append(f"judge: {observation['text']}")
        self._pending, self._turn = None, None
        self._text = {PLAYER: str(observation["text"]), JUDGE: WAITING}
        self._player_info = info
        self.rewards[PLAYER] += reward
        self.agent_selection = PLAYER
        if terminated:
            self.terminations = {a: True for a in self.agents}
        elif truncated:
            self.truncations = {a: True for a in self.agents}
        self._refresh_infos()

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return "\n".join(self.transcript)

    def close(self) -> None:
        if self._pending is not None:
            self._pending.close()
            self._pending = None
