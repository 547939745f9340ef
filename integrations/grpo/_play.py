"""Greedy episodes of held-out items, before and after training: with the LLM player's prompts (text
rollouts) or with tool calls (tool rollouts, as TRL plays ``environment_factory``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from lateralgym.integrations._chat_env import ChatEnv, EpisodeState
from lateralgym.integrations.grpo._settings import EpisodeFigures

__all__ = ["episode_figures", "episode_of", "generate", "play_greedy", "play_greedy_tools", "step_all"]


def episode_figures(chat: ChatEnv, state: EpisodeState) -> EpisodeFigures:
    """One finished episode's figures: reward, moves, accepted moves, questions, success, outcome flags."""
    outcome = state.env.outcome().model_dump(mode="json")
    return EpisodeFigures(
        item_id=state.item_id,
        problem=state.env.benchmark.data.problem_of(state.env.item),
        reward=chat.reward(state),
        moves=len(state.turns),
        valid_moves=sum(t.valid for t in state.turns),
        questions=sum(json.loads(t.action).get("kind") == "ask" for t in state.turns),
        success=chat.solved(state),
        outcome_flags={name: value for name, value in outcome.items() if isinstance(value, bool)},
        messages=state.messages[state.prompt_messages :],
    )


def step_all(chat: ChatEnv, states: Sequence[EpisodeState], replies: Sequence[str]) -> list[list[dict[str, str]]]:
    """Play each state's reply (``ChatEnv.step``), all in one event loop and at once: one loop a batch,
    not one a move, and an LLM judge's calls overlap. The env's answers come back in ``states``' order."""

    async def play() -> list[list[dict[str, str]]]:
        return list(await asyncio.gather(*(chat.step(s, r) for s, r in zip(states, replies, strict=True))))

    return asyncio.run(play())


def episode_of(row: dict[str, Any]) -> dict[str, Any]:
    """The episode a ``ChatEnv.dataset`` row names: its item, seed and repeat."""
    info = json.loads(row["info"])
    return {"item_id": info["item_id"], "seed": int(info["seed"]), "repeat": int(info.get("repeat", 0))}


def generate(
    model: Any, tokenizer: Any, histories: Sequence[list[dict[str, Any]]], max_new_tokens: int, **template: Any
) -> list[list[int]]:
    """Greedy replies to several chats at once, as token ids up to the end of turn (``template``: more
    arguments for the chat template, ``tools``)."""
    import torch

    texts = [
        tokenizer.apply_chat_template(history, tokenize=False, add_generation_prompt=True, **template)
        for history in histories
    ]
    batch = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.no_grad():
        out = model.generate(
            **batch,
            max_new_tokens=max_new_tokens,
            do_sample=False,
            temperature=None,
            top_p=None,
            top_k=None,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id,
        )
    replies = []
    for row in out[:, batch["input_ids"].shape[1] :].tolist():
        end = row.index(tokenizer.eos_token_id) + 1 if tokenizer.eos_token_id in row else len(row)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id != tokenizer.eos_token_id else None
        replies.append([t for t in row[:end] if t != pad])
    return replies


def play_greedy(
    model: Any, tokenizer: Any, chat: ChatEnv, rows: Sequence[dict[str, Any]], max_new_tokens: int, batch: int = 8
) -> list[EpisodeFigures]:
    """Greedy episodes of ``rows`` (``ChatEnv.dataset`` rows), a batch of chats a turn at a time; the
    batches are of prompts of about one length (less padding to compute), the records in ``rows``' order."""
    was_training = model.training
    model.eval()
    order = sorted(range(len(rows)), key=lambda k: sum(len(m["content"]) for m in rows[k]["prompt"]))
    records: dict[int, EpisodeFigures] = {}
    try:
        for start in range(0, len(order), batch):
            picked = order[start : start + batch]
            states = [chat.start(**episode_of(rows[k])) for k in picked]
            while active := [s for s in states if not s.done]:
                replies = generate(model, tokenizer, [s.messages for s in active], max_new_tokens)
                step_all(chat, active, [tokenizer.decode(reply, skip_special_tokens=True) for reply in replies])
            records.update({k: episode_figures(chat, s) for k, s in zip(picked, states, strict=True)})
    finally:
        if was_training:
            model.train()
    return [records[k] for k in range(len(rows))]


def play_greedy_tools(
    model: Any, tokenizer: Any, env_class: Any, rows: Sequence[dict[str, Any]], max_new_tokens: int
) -> list[EpisodeFigures]:
    """Greedy episodes of ``rows`` (``lateralgym.integrations.trl.dataset`` rows) played as TRL plays an
    ``environment_factory``: the opening appended to the prompt, each reply parsed by TRL's parser, each tool
    call run on the episode's environment and its result sent back, until a reply calls no tool or the
    episode ends. A move is a tool call; an accepted move one the env took as valid."""
    from trl.chat_template_utils import parse_response

    from lateralgym.integrations.trl import tool_names

    was_training = model.training
    model.eval()
    records: list[EpisodeFigures] = []
    try:
        for row in rows:
            env = env_class()
            opening = env.reset(**row)
            tools = [getattr(env, name) for name in tool_names(env_class)]
            messages: list[dict[str, Any]] = [dict(m) for m in row["prompt"]]
            messages[-1] = {**messages[-1], "content": messages[-1]["content"] + opening}
            prompt_length = len(messages)
            while not env.done:
                (reply,) = generate(model, tokenizer, [messages], max_new_tokens, tools=tools)
                parsed = parse_response(tokenizer, reply, tools=tools)
                calls = parsed.get("tool_calls") or []
                messages.append(parsed)
                if not calls:
                    break
                for call in calls:
                    function = call.get("function", {})
                    try:
                        result = str(getattr(env, function["name"])(**function.get("arguments", {})))
                    except Exception as exc:  # noqa: BLE001 - TRL hands the model the error, so do we
                        result = str({"error": str(exc)})
                    messages.append({"role": "tool", "name": function.get("name", ""), "content": result})
                    if env.done:
                        break
            records.append(_tool_figures(env, messages[prompt_length:]))
            env._leave("unfinished: the model stopped calling tools")
    finally:
        if was_training:
            model.train()
    return records


def _tool_figures(env: Any, messages: list[dict[str, Any]]) -> EpisodeFigures:
    session = env.session
    outcome = (session.end.outcome if session.end is not None else None) or session.env.outcome().model_dump(
        mode="json"
    )
    from lateralgym.episodes import outcome_succeeded

    return EpisodeFigures(
        item_id=session.spec.item_id,
        problem=session.env.benchmark.data.problem_of(session.env.item),
        reward=session.reward,
        moves=len(session.moves),
        valid_moves=sum(valid for _, valid in session.moves),
        questions=sum(kind == "ask" for kind, _ in session.moves),
        success=outcome_succeeded(session.env.config.benchmark, outcome),
        outcome_flags={name: value for name, value in outcome.items() if isinstance(value, bool)},
        messages=[{k: v for k, v in m.items() if k in ("role", "content", "name", "tool_calls")} for m in messages],
    )
