"""Text rollouts: the LLM player's prompts, each reply read by its parser and played through an episode
session. A single-move config is GRPO's plain route (each completion one move of a fresh episode); a
multi-move config goes through TRL's ``rollout_func`` (each rollout a whole episode, the env's turns
masked out of the loss). Each prompt carries its episode's identity (``EPISODE_KEY`` on its first
message: item, seed, repeat), so no episode is found again by its text. The step's mean reward and
readable-move share go to TRL's log (``log_metric``) as ``lateralgym/reward`` and ``lateralgym/valid``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lateralgym.integrations._chat_env import ChatEnv
from lateralgym.integrations.grpo._play import episode_figures, episode_of, step_all
from lateralgym.integrations.grpo._settings import GRPOSettings

__all__ = ["EPISODE_KEY", "REWARD_METRIC", "VALID_METRIC", "reward_funcs", "rollout_func", "training_rows"]

EPISODE_KEY = "lateralgym_episode"
"""The key of a prompt's first message that names its episode (JSON: ``item_id``, ``seed``, ``repeat``);
chat templates ignore keys they do not know."""

REWARD_METRIC = "lateralgym/reward"
VALID_METRIC = "lateralgym/valid"


def training_rows(chat: ChatEnv) -> list[dict[str, Any]]:
    """The train rows: each episode's prompt, its first message naming the episode, and ``info``."""
    rows = []
    for row in chat.dataset():
        prompt = [dict(message) for message in row["prompt"]]
        prompt[0] = {**prompt[0], EPISODE_KEY: row["info"]}
        rows.append({"prompt": prompt, "info": row["info"]})
    return rows


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def reward_funcs(chat: ChatEnv, shaping: float) -> list[Callable[..., list[float]]]:
    """Single-turn: each completion is one move of a fresh episode of its item and seed."""

    def lateralgym_reward(
        prompts: Any,
        completions: Any,
        info: Sequence[str],
        log_metric: Callable[[str, float], None] | None = None,
        **_: Any,
    ) -> list[float]:
        texts = [c[-1]["content"] if isinstance(c, list) else str(c) for c in completions]
        states = [chat.start(**episode_of({"info": row_info})) for row_info in info]
        step_all(chat, states, texts)
        rewards = [chat.reward(state) for state in states]
        valid = [float(sum(t.valid for t in state.turns) / max(1, len(state.turns))) for state in states]
        if log_metric is not None:
            log_metric(REWARD_METRIC, _mean(rewards))
            log_metric(VALID_METRIC, _mean(valid))
        return [r + shaping * v for r, v in zip(rewards, valid, strict=True)]

    return [lateralgym_reward]


def rollout_func(chat: ChatEnv, tokenizer: Any, settings: GRPOSettings) -> Any:
    """Multi-turn: a whole episode per rollout, the env's turns masked out of the loss (``env_mask``)."""
    import torch

    end = tokenizer.eos_token_id

    def env_turn_ids(history: list[dict[str, str]], reply: str) -> list[int]:
        """The tokens the chat template puts after the model's turn: the env's reply as a user turn
        and the next assistant header (read off the template, not hard-coded)."""
        before = tokenizer.apply_chat_template(history, tokenize=False)
        after = tokenizer.apply_chat_template(
            [*history, {"role": "user", "content": reply}], tokenize=False, add_generation_prompt=True
        )
        cut = before.rindex(tokenizer.eos_token) + len(tokenizer.eos_token)
        return list(tokenizer(after[cut:], add_special_tokens=False)["input_ids"])

    def rollout(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        policy = trainer.accelerator.unwrap_model(trainer.model)
        states = [chat.start(**episode_of({"info": p[0][EPISODE_KEY]})) for p in prompts]
        prompt_ids = [
            list(
                tokenizer.apply_chat_template(s.messages, add_generation_prompt=True, tokenize=True, return_dict=False)
            )
            for s in states
        ]
        completion_ids: list[list[int]] = [[] for _ in states]
        env_mask: list[list[int]] = [[] for _ in states]
        was_training = policy.training
        policy.eval()
        while active := [i for i, s in enumerate(states) if not s.done]:
            rows = [prompt_ids[i] + completion_ids[i] for i in active]
            width = max(map(len, rows))
            ids = torch.full((len(rows), width), tokenizer.pad_token_id)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for r, row in enumerate(rows):
                ids[r, width - len(row) :] = torch.tensor(row)
                mask[r, width - len(row) :] = 1
            with torch.no_grad():
                out = policy.generate(
                    input_ids=ids,
                    attention_mask=mask,
                    do_sample=True,
                    temperature=settings.temperature,
                    top_k=0,
                    top_p=1.0,
                    max_new_tokens=settings.max_completion_length,
                    pad_token_id=tokenizer.pad_token_id,
                    eos_token_id=end,
                )
            texts, histories = [], []
            for r, i in enumerate(active):
                new = out[r, width:].tolist()
                sampled = new[: new.index(end) + 1] if end in new else [t for t in new if t != tokenizer.pad_token_id]
                completion_ids[i] += sampled
                env_mask[i] += [1] * len(sampled)
                if not sampled or sampled[-1] != end:  # cut at the cap: the turn is closed for the model
                    completion_ids[i].append(end)
                    env_mask[i].append(0)
                texts.append(tokenizer.decode(sampled, skip_special_tokens=True))
                histories.append(list(states[i].messages))
            answers = step_all(chat, [states[i] for i in active], texts)
            for i, history, text, answer in zip(active, histories, texts, answers, strict=True):
                if answer:
                    turn = env_turn_ids([*history, {"role": "assistant", "content": text}], answer[0]["content"])
                    completion_ids[i] += turn
                    env_mask[i] += [0] * len(turn)
        if was_training:
            policy.train()
        stats = [episode_figures(chat, s) for s in states]
        valid = [s.valid_moves / max(1, s.moves) for s in stats]
        return {
            "prompt_ids": prompt_ids,
            "completion_ids": completion_ids,
            "logprobs": None,
            "env_mask": env_mask,
            "episode_reward": [s.reward for s in stats],
            "valid_share": valid,
        }

    def episode_reward(
        prompts: Any,
        completions: Any,
        episode_reward: Sequence[float],
        log_metric: Callable[[str, float], None] | None = None,
        **_: Any,
    ) -> list[float]:
        if log_metric is not None:
            log_metric(REWARD_METRIC, _mean(episode_reward))
        return [float(r) for r in episode_reward]

    def valid_reward(
        prompts: Any,
        completions: Any,
        valid_share: Sequence[float],
        log_metric: Callable[[str, float], None] | None = None,
        **_: Any,
    ) -> list[float]:
        if log_metric is not None:
            log_metric(VALID_METRIC, _mean(valid_share))
        return [float(v) for v in valid_share]

    funcs: list[Callable[..., list[float]]] = [episode_reward, valid_reward]
    return rollout, funcs
