"""The trainer adapter end to end: ``rollout`` and ``ChatEnv`` against the loopback OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import openai
import pytest
from llm_server import Fault, ScriptedLLMServer, reply_tokens, token_logprob

from lateralgym.agents import LLMClient
from lateralgym.agents._prompts import conversation_start, prompt_plan
from lateralgym.envs import EpisodeConfig, LateralEnv, load_sample_items
from lateralgym.episodes import episode_seed, rollouts_from_log, run
from lateralgym.integrations import ChatEnv, rollout

PUZZLE = load_sample_items("splat")[0]
TASK = load_sample_items("creativity")[0]


def _opening(config: str, item_id: str, seed: int) -> list[dict[str, str]]:
    """The LLM player's opening chat for an episode, built the way the player builds it."""
    env = LateralEnv(EpisodeConfig.named(config))
    obs, info = env.reset(seed=seed, options={"item_id": item_id})
    return conversation_start(prompt_plan(info), str(obs["text"]))


def test_splat_rollout_with_an_openai_client_keeps_the_chat_rewards_outcome_and_logprobs(
    llm_server: ScriptedLLMServer,
) -> None:
    question = "Question: Was most of the audience deaf?"
    explanation = f"Answer: {PUZZLE.answer}"  # type: ignore[attr-defined]
    llm_server.enqueue(question, explanation)
    client = openai.AsyncOpenAI(base_url=llm_server.base_url, api_key="not-needed", max_retries=0)

    result = asyncio.run(
        rollout(client, PUZZLE.id, seed=7, config="splat", model="scripted", sampling={"logprobs": True})
    )

    opening = _opening("splat", PUZZLE.id, 7)
    assert result.messages[: len(opening)] == opening and result.prompt_messages == len(opening)
    assert [m["role"] for m in result.completion] == ["assistant", "user", "assistant"]
    assert result.completion[0]["content"] == question and result.completion[2]["content"] == explanation
    # what the server was sent is exactly the chat: the env's answer came back as the next user turn
    sent = [r.body for r in llm_server.requests if r.body]
    assert sent[0]["messages"] == opening and sent[1]["messages"] == result.messages[:-1]
    assert sent[1]["messages"][-1]["content"] == result.turns[0].reply
    assert result.turns[0].judge_label in ("yes", "no", "irrelevant")
    # reward and outcome from the env
    assert result.solved and json.loads(result.outcome)["solved"] is True
    assert json.loads(result.outcome)["turns"] == 2 and result.terminated
    assert result.rewards == [t.reward for t in result.turns] and result.reward == pytest.approx(sum(result.rewards))
    assert result.rewards[-1] > result.rewards[0]
    assert result.final_reply and result.final_reply not in [m["content"] for m in result.messages]
    # token data as the server sent it
    assert result.turns[1].tokens == reply_tokens(explanation)
    assert result.turns[1].logprobs == [token_logprob(t) for t in reply_tokens(explanation)]
    assert result.group_id == PUZZLE.id and result.episode_id == f"{PUZZLE.id}#0" and result.seed == 7


def test_creativity_rollout_with_our_client_inspects_then_commits_the_gold_part(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    gold = TASK.gold  # type: ignore[attr-defined]
    llm_server.enqueue(f"inspect: {gold.entity}", f"commit: {gold.entity} | {gold.part} | press it into place")
    env = ChatEnv("creativity-interactive")
    client = LLMClient("openai/scripted", base_url=llm_server.base_url, cache_dir=tmp_path)

    result = asyncio.run(rollout(client, TASK.id, seed=3, config=env))  # type: ignore[attr-defined]

    assert result.messages[: result.prompt_messages] == _opening("creativity-interactive", TASK.id, 3)  # type: ignore[attr-defined]
    inspect_reply = result.messages[result.prompt_messages + 1]
    assert inspect_reply["role"] == "user" and gold.part in inspect_reply["content"]  # the env showed the parts
    outcome = json.loads(result.outcome)
    assert outcome["gold_correct"] and outcome["gold_inspected"] and outcome["inspected"] == [gold.entity]
    assert result.solved and result.player == "openai/scripted" and result.error is None
    assert result.reward == pytest.approx(sum(result.rewards)) and len(result.turns) == 2
    assert json.loads(result.turns[0].action) == {"kind": "inspect", "entity": gold.entity}
    assert result.turns[0].logprobs is None  # not asked for


def test_a_failing_model_ends_the_rollout_with_an_error_not_an_exception(llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue("Question: Is it a concert?", Fault.status(400))
    client = openai.AsyncOpenAI(base_url=llm_server.base_url, api_key="not-needed", max_retries=0)
    result = asyncio.run(rollout(client, PUZZLE.id, seed=1, config="splat", model="scripted"))
    assert result.error is not None and "400" in result.error
    assert len(result.turns) == 1 and not result.solved and result.messages[-1]["role"] == "user"


def test_rollout_plays_exactly_the_chat_a_run_logs_for_the_same_episode(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    replies = ["Question: Did the audience hear the music?", "Question: Were they deaf?", f"Answer: {PUZZLE.answer}"]  # type: ignore[attr-defined]
    llm_server.enqueue(*replies)
    run_result = run(
        "splat",
        player="openai/scripted",
        base_url=llm_server.base_url,
        limit=1,
        out=tmp_path,
        progress=False,
        cache_dir=tmp_path / "cache",
    )
    logged = next(rollouts_from_log(run_result.run_dir))
    llm_server.enqueue(*replies)
    client = openai.AsyncOpenAI(base_url=llm_server.base_url, api_key="not-needed", max_retries=0)
    live = asyncio.run(rollout(client, PUZZLE.id, seed=logged.seed, config="splat", model="scripted"))
    assert logged.seed == episode_seed(0, PUZZLE.id, 0)
    assert live.messages == logged.messages and live.prompt_messages == logged.prompt_messages
    assert live.rewards == logged.rewards and live.outcome == logged.outcome and live.solved == logged.solved
    assert logged.prompt_source == "logged" and live.prompt_source == "live"


def test_chat_env_speaks_the_verifiers_multi_turn_protocol() -> None:
    env = ChatEnv("splat")
    rows = env.dataset(limit=2, repeats=2)
    assert [json.loads(r["info"])["repeat"] for r in rows] == [0, 1, 0, 1]
    assert [r["example_id"] for r in rows] == [0, 0, 1, 1] and {r["task"] for r in rows} == {"splat"}
    info = json.loads(rows[1]["info"])
    assert info["seed"] == episode_seed(0, info["item_id"], 1)
    state = env.start(info["item_id"], info["seed"], repeat=1)
    assert state.messages == rows[1]["prompt"]
    messages = [*state.messages, {"role": "assistant", "content": "Question: Is it about music?"}]
    answer = asyncio.run(env.env_response(messages, state))
    assert answer[0]["role"] == "user" and not env.is_completed(messages, state)
    for _ in range(14):  # out of rounds
        asyncio.run(env.env_response([{"role": "assistant", "content": "Question: Is it about music?"}], state))
    assert env.is_completed(messages, state) and state.truncated and not env.solved(state)
    assert env.reward(state) == pytest.approx(sum(t.reward for t in state.turns))
    datasets = pytest.importorskip("datasets", reason="the export extra (datasets) is not installed")
    assert datasets.Dataset.from_list(rows).to_list() == rows
