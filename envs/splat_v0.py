"""SPLAT situation puzzles as a two-agent PettingZoo AEC environment: ``player`` and ``judge``.

## Description
The SPLAT protocol with the judge as an agent of its own (an LLM, a person or a rule judge
driven from outside), alternating with the player: the player asks a yes/no question or
proposes an explanation, then the judge replies. It feeds the same metrics as
``lateralgym/Splat-v0`` (Acc, Rnd, O/A per band). Use ``env()`` for the wrapped env.

## Action Space
Both agents: ``Text``. The player writes ``ask: <question>`` or ``commit: <explanation>``. The
judge writes ``yes`` / ``no`` / ``irrelevant`` to a question and ``correct`` or ``not yet: <hint>``
to an explanation. The env normalises the judge's reply to that vocabulary (unclear answers
become ``irrelevant``; an unclear verdict is ``not yet``) and forwards to the player only the
label and a hint that passed the leak check: no judge can pass the hidden answer to the player.

## Observation Space
``Dict``: ``text``, ``turn`` (rounds used), ``last_reply`` (0 none, 1 yes, 2 no, 3 irrelevant,
4 not yet, 5 correct). The judge's text contains the hidden answer; the player's never does.

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

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from lateralgym.envs._actions import Ask, Commit, Invalid, explanation, parse_action
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._engine import item_key, sanitise, text_space, usage_text
from lateralgym.envs._errors import ConfigError
from lateralgym.envs._judging import QA, AnswerLabel, clean_hint, normalise_answer, question_counts
from lateralgym.envs._matching import words
from lateralgym.envs._schema import SituationPuzzle
from lateralgym.envs.splat import REPLY_CODES

PLAYER, JUDGE = "player", "judge"


def env(**kwargs: Any) -> AECEnv[str, dict[str, Any], str]:
    """The AEC env wrapped in PettingZoo's order check."""
    # No AssertOutOfBoundsWrapper: the env parses and sanitises any text itself, and a judge's reply
    # with a carriage return or an emoji must be answered, not crash the episode.
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


def parse_verdict(text: str) -> tuple[str, str | None]:
    """``("correct", None)`` or ``("not_yet", hint)`` from a judge's free text."""
    tokens = words(text)
    if tokens[:1] in (["correct"], ["yes"], ["solved"]):
        return "correct", None
    rest = text.split(":", 1)[1] if ":" in text else ""
    return "not_yet", rest.strip() or None


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
        if items is None:
            from lateralgym.envs._datasets import load_config_items

            items = load_config_items(self.config)  # type: ignore[assignment]
        assert items is not None
        self.items = tuple(items)
        self.render_mode = render_mode
        self.possible_agents = [PLAYER, JUDGE]
        self.agents: list[str] = []
        obs_space = spaces.Dict(
            {"text": text_space(), "turn": spaces.Discrete(self.config.max_turns + 1), "last_reply": spaces.Discrete(6)}
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: text_space(4096) for a in self.possible_agents}
        self._np_random, _ = seeding.np_random(None)
        self.transcript: list[str] = []

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)
        options = options or {}
        if "item_id" in options:
            found = [i for i in self.items if i.id == options["item_id"]]
            if not found:
                raise ConfigError(f"no puzzle with id {options['item_id']!r}")
            self.puzzle = found[0]
        else:
            self.puzzle = self.items[int(self._np_random.integers(len(self.items)))]
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {}
        self.rounds = 0
        self.last_reply = 0
        self.history: list[QA] = []
        self.pending: Ask | Commit | None = None
        self.solved = False
        self.attempts = 0
        self.first_commit_turn: int | None = None
        self.invalid_actions = 0
        title = f"TITLE: {self.puzzle.title}\n" if self.puzzle.title else ""
        self._text = {
            PLAYER: f"{title}STORY: {self.puzzle.story}\nAsk yes/no questions or explain what happened. "
            f"You have {self.config.max_turns} rounds.\n{usage_text(self.config)}",
            JUDGE: "Waiting for the player.",
        }
        self.transcript = [self._text[PLAYER]]
        self.agent_selection = PLAYER
        self._refresh_infos()

    def _refresh_infos(self, outcome: dict[str, Any] | None = None) -> None:
        """The player's info holds only public facts; the judge's also the move it must answer."""
        key = item_key(self.puzzle.id)
        history = [[qa.question, qa.label] for qa in self.history]
        extra = {"outcome": outcome} if outcome is not None else {}
        self.infos = {
            PLAYER: {
                "item": key,
                "benchmark": "splat",
                "mode": self.config.mode,
                "turn": self.rounds,
                "public": {"title": self.puzzle.title, "story": self.puzzle.story, "history": history},
                **extra,
            },
            JUDGE: {
                "item": key,
                "pending": self.pending.model_dump() if self.pending is not None else None,
                "history": history,
                **extra,
            },
        }

    def observe(self, agent: str) -> dict[str, Any]:
        return {
            "text": sanitise(self._text[agent]),
            "turn": np.int64(self.rounds),
            "last_reply": np.int64(self.last_reply),
        }

    def _judge_brief(self) -> str:
        p = self.puzzle
        return f"You are the judge. TITLE: {p.title}\nSTORY: {p.story}\nHIDDEN ANSWER: {p.answer}\n"

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        if agent == PLAYER:
            self._player_step(action)
        else:
            self._judge_step(action)
        self._accumulate_rewards()

    def _player_step(self, action: Any) -> None:
        self.rounds += 1
        parsed = parse_action(action)
        self.rewards[PLAYER] += self.config.rewards.step
        if isinstance(parsed, Invalid) or parsed.kind not in self.config.allowed_actions:
            reason = parsed.reason if isinstance(parsed, Invalid) else f"'{parsed.kind}' is not allowed"
            self._invalid_round(f"Invalid action: {reason}.\n{usage_text(self.config)}")
            return
        assert isinstance(parsed, Ask | Commit)  # allowed_actions of a splat config excludes inspect
        if isinstance(parsed, Commit):
            parsed = Commit(answer=explanation(parsed))
            if not (parsed.answer or "").strip():
                self._invalid_round("Give your explanation: commit: <what really happened>.")
                return
            self.attempts += 1
            if self.first_commit_turn is None:
                self.first_commit_turn = self.rounds
        self.pending = parsed
        if isinstance(parsed, Ask):
            self._text[JUDGE] = self._judge_brief() + f"QUESTION: {parsed.question}\nReply with yes, no or irrelevant."
        else:
            assert isinstance(parsed, Commit)
            self._text[JUDGE] = (
                self._judge_brief()
                + f"PROPOSED EXPLANATION: {parsed.answer}\n"
                + "Reply 'correct' or 'not yet: <a hint that does not give the answer away>'."
            )
        move = parsed.question if isinstance(parsed, Ask) else f"explanation: {parsed.answer}"
        self.transcript.append(f"player: {move}")
        self.agent_selection = JUDGE
        self._refresh_infos()

    def _invalid_round(self, message: str) -> None:
        self.invalid_actions += 1
        self.rewards[PLAYER] += self.config.rewards.invalid
        self._text[PLAYER] = message
        self._end_round_if_out_of_turns()

    def _judge_step(self, action: Any) -> None:
        text = action if isinstance(action, str) else str(action)
        if isinstance(self.pending, Ask):
            label: AnswerLabel = normalise_answer(text) or "irrelevant"
            self.history.append(QA(question=self.pending.question, label=label))
            self.last_reply = REPLY_CODES[label]
            self._text[PLAYER] = f"{label.capitalize()}."
        else:
            verdict, hint = parse_verdict(text)
            self.last_reply = REPLY_CODES[verdict]
            if verdict == "correct":
                self.solved = True
                self._text[PLAYER] = "Correct! That is what happened."
                self.rewards[PLAYER] += self.config.rewards.correct
            else:
                safe = clean_hint(hint, self.puzzle)
                self._text[PLAYER] = "Not yet." + (f" Hint: {safe}" if safe else "")
        self.transcript.append(f"judge: {self._text[PLAYER]}")
        self._text[JUDGE] = "Waiting for the player."
        self.pending = None
        self.agent_selection = PLAYER
        if self.solved:
            self.terminations = {a: True for a in self.agents}
            self._set_outcome()
        else:
            self._end_round_if_out_of_turns()

    def _end_round_if_out_of_turns(self) -> None:
        if self.rounds >= self.config.max_turns and not self.solved:
            self.truncations = {a: True for a in self.agents}
            self._text[PLAYER] += f"\nNo rounds left ({self.config.max_turns} used)."
            self.agent_selection = PLAYER
            self._set_outcome()
        else:
            self._refresh_infos()

    def _set_outcome(self) -> None:
        outcome = {
            "solved": self.solved,
            "turns": self.rounds,
            "max_turns": self.config.max_turns,
            **question_counts(self.history),
            "attempts": self.attempts,
            "first_commit_turn": self.first_commit_turn,
            "invalid_actions": self.invalid_actions,
            "difficulty": self.puzzle.difficulty,
            "band": self.puzzle.band,
        }
        self._refresh_infos(outcome)

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return "\n".join(self.transcript)

    def close(self) -> None:
        pass
