"""SFT examples: the oracle's moves on a config's train items, written as the LLM player writes them.

Each train item is played by the oracle (``lateralgym.agents.OracleAgent``) through a ``ChatEnv``: the
prompt is the LLM player's (the chat ``lateralgym run --player ...`` and ``train grpo`` send), each move is
written by the benchmark's ``PromptPart.reply_for`` (the reply format its prompt asks for) and played by
reading that text back with the player's parser, which must give the oracle's move again. One example a
move: ``prompt`` (the chat so far) and ``completion`` (the reply), TRL's conversational prompt-completion
columns, so SFT teaches exactly the replies the held-out evaluation and GRPO then read.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from lateralgym.agents import OracleAgent, read_model_reply
from lateralgym.envs import EpisodeConfig, get_benchmark, split_items
from lateralgym.integrations._chat_env import ChatEnv
from lateralgym.integrations.grpo._play import episode_of
from lateralgym.integrations.grpo._settings import GRPOError

__all__ = ["SFTDataError", "SFTExample", "oracle_examples", "read_examples", "write_examples"]


class SFTDataError(GRPOError):
    """An SFT examples file that does not fit the run (another config, held-out items, not examples)."""


class SFTExample(BaseModel):
    """One move of an oracle episode as a supervised example (a line of ``sft_examples.jsonl``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    config: str
    """The config whose prompts the example was written with."""
    benchmark: str
    mode: str | None
    item_id: str
    seed: int
    """The episode seed (the one ``lateralgym run`` gives the item)."""
    turn: int
    """The move's number in its episode (1 for the first)."""
    prompt: list[dict[str, str]]
    """The chat before the move: system prompt, worked examples, the observations and earlier moves."""
    completion: list[dict[str, str]]
    """The move as the player writes it: one assistant message."""


def _same(a: Any, b: Any) -> bool:
    def plain(action: Any) -> dict[str, Any]:
        return {k: v for k, v in action.model_dump(mode="json").items() if k != "fields"}

    return type(a) is type(b) and plain(a) == plain(b)


def oracle_examples(config: EpisodeConfig, items: Sequence[Any]) -> list[SFTExample]:
    """The oracle's solved episodes on ``items`` (the train split: nothing else is accepted), a move each.

    Raises:
        SFTDataError: an item is on the test side, or a reply the prompt's format writes does not read
            back as the oracle's move (the benchmark's ``reply_for`` and ``parse_reply`` disagree).
    """
    held = split_items(list(items), "test")
    if held:
        raise SFTDataError(f"{len(held)} of the items are held-out (test) items: SFT examples come from train items")
    benchmark = get_benchmark(config.benchmark)
    oracle = OracleAgent(items)
    chat = ChatEnv(config, items=items)
    examples: list[SFTExample] = []
    for row in chat.dataset():
        state = chat.start(**episode_of(row))
        moves: list[SFTExample] = []
        while not state.done:
            action = oracle.act({}, state.info)
            reply = benchmark.prompts.reply_for(action, state.info, state.plan.reasoning)
            read, _ = read_model_reply(reply, state.info, state.plan.reasoning)
            if not _same(read, action):
                raise SFTDataError(
                    f"{config.benchmark}: the reply written for the oracle's move {action.model_dump_json()} reads "
                    f"back as {read.model_dump_json()}: its prompts' reply_for and parse_reply must agree"
                )
            moves.append(
                SFTExample(
                    config=config.name,
                    benchmark=config.benchmark,
                    mode=config.mode,
                    item_id=state.item_id,
                    seed=state.seed,
                    turn=len(state.turns) + 1,
                    prompt=[dict(m) for m in state.messages],
                    completion=[{"role": "assistant", "content": reply}],
                )
            )
            asyncio.run(chat.step(state, reply))
        if chat.solved(state):  # an expert's trajectories: an episode the oracle did not solve teaches nothing
            examples += moves
    return examples


def write_examples(path: Path, examples: Sequence[SFTExample]) -> None:
    """One JSON line per example."""
    path.write_text("".join(e.model_dump_json() + "\n" for e in examples), encoding="utf-8")


def read_examples(path: Path, config: EpisodeConfig, train: Sequence[Any]) -> list[SFTExample]:
    """The examples of ``path``, checked against the run: every line an example of ``config`` on one of
    its ``train`` items (never a held-out one).

    Raises:
        SFTDataError: the file is missing or not examples, holds another config's examples, or items that
            are not the config's train items.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise SFTDataError(f"--examples {path}: cannot read it ({exc.strerror or exc})") from None
    examples: list[SFTExample] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            examples.append(SFTExample.model_validate_json(line))
        except ValidationError:
            first = json.dumps(line[:60])
            raise SFTDataError(
                f"--examples {path}: line {number} is no SFT example ({first}...): give a sft_examples.jsonl "
                "that lateralgym train sft wrote"
            ) from None
    if not examples:
        raise SFTDataError(f"--examples {path}: the file holds no example")
    other = next(
        (e for e in examples if (e.config, e.benchmark, e.mode) != (config.name, config.benchmark, config.mode)), None
    )
    if other is not None:
        raise SFTDataError(
            f"--examples {path} holds examples of config {other.config!r} ({other.benchmark}, {other.mode}), not "
            f"{config.name!r}: leave --examples out to build them for {config.name} from its oracle"
        )
    known = {get_benchmark(config.benchmark).item_id(item) for item in train}
    foreign = sorted({e.item_id for e in examples} - known)
    if foreign:
        raise SFTDataError(
            f"--examples {path} names {len(foreign)} items that are not train items of this dataset "
            f"(first {foreign[0]!r}): SFT trains on the train split only; give the dataset they came from (--data)"
        )
    return examples
