"""A LateralGym config as TRL's ``environment_factory`` (``GRPOTrainer(environment_factory=...)``, TRL 1.16).

``environment(CONFIG)`` returns a class TRL instantiates once per rollout slot and reuses: ``reset(**row)``
starts an ``EpisodeSession`` on the row's item (``item_id``) under its seed and returns the opening
observation (TRL appends it to the prompt's last message); each of the config's move kinds is one
documented public method, which TRL turns into a tool through transformers' ``get_json_schema``:

* ``ask(question)`` and ``inspect(entity)`` where the config allows them;
* ``answer(option)`` for multiple choice (an option letter), else ``commit(answer)`` for a free answer, or
  ``commit(entity, part, how_to_use)`` where the answer names a part of an entity;

each returns the env's reply as the tool result. ``get_reward()`` is the episode's summed env reward,
the same number ``lateralgym run`` logs for the same moves. All instances share one set of sessions
(items loaded and the judge built once); with ``out`` every episode is logged as a run is.

``dataset(CONFIG)`` gives the config's train items as TRL rows: a short instruction prompt naming the
tools, and ``item_id`` / ``seed`` columns (the seeds ``lateralgym run`` would use).

Which models: TRL needs a chat template that renders tool calls and that it can parse (Qwen 2.5 / 3,
Llama 3.1 / 3.2, GPT-OSS, Gemma 4, ...). A template without tool calling (SmolLM2's) is refused by
TRL: there ``lateralgym train grpo`` keeps its text rollouts, or give the tokenizer TRL's Qwen 2.5
template when its special tokens are ChatML (SmolLM2's are).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lateralgym.envs import ConfigError, EpisodeConfig, EpisodeOverError, Judge, usage_text
from lateralgym.episodes import EpisodeSession, EpisodeSessions, RunOptions, episode_seed

__all__ = ["LateralToolEnvironment", "dataset", "environment", "tool_names"]


class LateralToolEnvironment:
    """The base of every class ``environment`` makes: one rollout's episode, moved by tool calls."""

    sessions: EpisodeSessions
    """The config's sessions, shared by every instance of the class."""

    def __init__(self) -> None:
        self.session: EpisodeSession | None = None

    def reset(self, **row: Any) -> str:
        """Start the episode of a dataset row (``item_id``, ``seed``; a row without them gets a drawn item)."""
        self._leave("unfinished: TRL reset the environment before the episode ended")
        seed = row.get("seed")
        session = self.sessions.open(seed=None if seed is None else int(seed), item_id=row.get("item_id"))
        obs, _ = session.start()
        session.log_start()
        self.session = session
        return "\n\n" + str(obs["text"])

    def get_reward(self) -> float:
        """The episode's env reward so far (its moves' rewards, summed)."""
        return self.session.reward if self.session is not None else 0.0

    @property
    def done(self) -> bool:
        """Whether the episode is over."""
        return self.session is not None and self.session.done

    def _move(self, text: str) -> str:
        session = self.session
        if session is None:
            raise EpisodeOverError("no episode yet: reset first")
        if session.done:
            raise EpisodeOverError("the episode is over: make no more moves")
        obs, *_ = session.step(text)
        if session.done:
            session.finish()
            self.sessions.release(session)
        return str(obs["text"])

    def _leave(self, why: str) -> None:
        session = self.session
        if session is not None and session.end is None:
            session.finish(why)
            self.sessions.release(session)


def _ask(self: LateralToolEnvironment, question: str) -> str:
    return self._move(f"ask: {question}")


def _inspect(self: LateralToolEnvironment, entity: str) -> str:
    return self._move(f"inspect: {entity}")


def _answer(self: LateralToolEnvironment, option: str) -> str:
    return self._move(f"commit: {option}")


def _commit(self: LateralToolEnvironment, answer: str) -> str:
    return self._move(f"commit: {answer}")


def _commit_part(self: LateralToolEnvironment, entity: str, part: str, how_to_use: str) -> str:
    return self._move(f"commit: {entity} | {part} | {how_to_use}")


def _tool(function: Any, name: str, summary: str, args: dict[str, str]) -> Any:
    """``function`` as a tool method: its name, and a Google-style docstring transformers reads."""

    def method(self: LateralToolEnvironment, *values: Any, **named: Any) -> str:
        result: str = function(self, *values, **named)
        return result

    lines = [summary, "", "Args:"] + [f"    {arg}: {text}" for arg, text in args.items()]
    lines += ["", "Returns:", "    The env's answer to the move."]
    method.__name__ = method.__qualname__ = name
    method.__doc__ = "\n".join(lines)
    method.__signature__ = inspect.signature(function)  # type: ignore[attr-defined]
    method.__annotations__ = {**dict.fromkeys(args, str), "return": str}
    return method


def _tools(config: EpisodeConfig) -> dict[str, Any]:
    """The tool methods of a config's allowed moves (see the module docstring)."""
    forms = dict(part.split(": ", 1) for part in usage_text(config).removeprefix("Allowed actions: ").split("; "))
    tools: dict[str, Any] = {}
    if "ask" in config.allowed_actions:
        tools["ask"] = _tool(
            _ask, "ask", "Ask the judge one yes/no question (one move).", {"question": forms.get("ask", "")}
        )
    if "inspect" in config.allowed_actions:
        tools["inspect"] = _tool(
            _inspect,
            "inspect",
            "Look closely at one thing in the scene: its parts and what they are like (one move).",
            {"entity": "The thing to inspect, " + forms.get("inspect", "")},
        )
    if "commit" in config.allowed_actions:
        placeholders = re.findall(r"<([^>]+)>", forms.get("commit", ""))
        if len(placeholders) == 3:
            tools["commit"] = _tool(
                _commit_part,
                "commit",
                "Give your final answer: which part of which thing you would use, and how (ends the episode).",
                {"entity": "The thing you choose.", "part": "Its part you would use.", "how_to_use": "How you use it."},
            )
        elif len(placeholders) == 1 and "letter" in placeholders[0]:
            tools["answer"] = _tool(
                _answer, "answer", "Choose one option as your answer (ends the episode).", {"option": placeholders[0]}
            )
        else:
            tools["commit"] = _tool(
                _commit,
                "commit",
                "Give your final answer.",
                {"answer": placeholders[0] if placeholders else "Your answer."},
            )
    return tools


def environment(
    config: EpisodeConfig | str,
    *,
    items: Sequence[Any] | None = None,
    judge: Judge | None = None,
    options: RunOptions | None = None,
    out: Path | None = None,
) -> type[LateralToolEnvironment]:
    """A class for ``GRPOTrainer(environment_factory=...)`` playing ``config`` (see the module docstring).

    Args:
        config: an ``EpisodeConfig`` or a shipped config's name.
        items: the items (default: the config's dataset or the sample data).
        judge: the judge (default: ``options.judge`` or the config's).
        options: the judge's settings, as ``lateralgym run`` takes them.
        out: log every episode into a run directory here (``replay``, ``view``, ``report`` read it).

    Raises:
        ConfigError: a bad config, dataset or judge.
    """
    sessions = EpisodeSessions(config, items=items, judge=judge, options=options, out=out)
    tools = _tools(sessions.config)
    if not tools:
        raise ConfigError(f"config {sessions.config.name!r} allows no move a tool can make")
    name = "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", sessions.config.name) if part) + "Env"
    namespace: dict[str, Any] = {"sessions": sessions, "__doc__": f"LateralGym {sessions.config.name}, as tools."}
    return type(name, (LateralToolEnvironment,), {**namespace, **tools})


def tool_names(env_class: type[LateralToolEnvironment]) -> list[str]:
    """The methods TRL makes tools of: public functions other than ``reset`` and ``get_reward``."""
    return [
        name
        for name, _ in inspect.getmembers(env_class, predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]


def dataset(
    env_class: type[LateralToolEnvironment], split: str | None = "train", repeats: int = 1
) -> list[dict[str, Any]]:
    """The rows TRL trains on: the config's items of ``split`` (None: all), each ``repeats`` times, with
    ``item_id`` and ``seed`` (as ``lateralgym run`` seeds them) and an instruction prompt naming the tools.

    Raises:
        ConfigError: the split holds no item.
    """
    sessions = env_class.sessions
    config = sessions.config
    names = ", ".join(tool_names(env_class))
    instruction = (
        f"Solve this {config.benchmark} task by calling the tools ({names}); each call is one move and its result is "
        f"what happens. You have at most {config.max_turns} moves. The task:"
    )
    rows = []
    for item_id in sessions.item_ids(split):
        for repeat in range(repeats):
            rows.append(
                {
                    "prompt": [{"role": "user", "content": instruction}],
                    "item_id": item_id,
                    "seed": episode_seed(config.seed, item_id, repeat),
                }
            )
    return rows
