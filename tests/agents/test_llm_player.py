"""``LLMPlayer`` plays real env episodes against the real OpenAI-compatible test server (no mocks)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _items import PAINT_TASK, PUZZLES, STORY
from llm_server import Fault, ScriptedLLMServer, count_words

import lateralgym
from lateralgym.agents import player_factory
from lateralgym.agents._llm_client import LLMCallError, LLMClient, LLMConfigError
from lateralgym.agents._llm_player import PLAYER_OPTIONS, LLMPlayer
from lateralgym.agents._llm_spec import ModelSpec
from lateralgym.agents._llm_usage import litellm_available
from lateralgym.agents._players import is_model_spec
from lateralgym.agents._prompts import PromptPlan, system_prompt
from lateralgym.envs import Action, Commit, EpisodeConfig, Invalid, LateralEnv
from lateralgym.envs._calls import ModelCall
from lateralgym.envs.benchmarks.brainteaser import BRAINTEASER_EXAMPLES
from lateralgym.episodes._log import LLMBlock

MODEL = "openai/test-model"
_clients: list[LLMClient] = []

OUR_LAYOUT = EpisodeConfig.named("brainteaser").with_options(layout="lateralgym")
"""BrainTeaser with LateralGym's own prompt layout, which these tests pin (the paper's, the config's
default, is pinned in tests/envs/test_brainteaser_paper_layout.py)."""


@pytest.fixture(autouse=True)
def fake_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-player-key")
    yield
    while _clients:  # release the connections complete_sync opened
        _clients.pop().close()


def make_player(server: ScriptedLLMServer, tmp_path: Path, max_retries: int = 1, **kwargs: Any) -> LLMPlayer:
    client = LLMClient(
        MODEL,
        base_url=server.base_url,
        cache_dir=tmp_path / "cache",
        backoff_base_s=0.01,
        timeout=5.0,
        max_retries=max_retries,
    )
    _clients.append(client)
    return LLMPlayer(client, **kwargs)


class Episode:
    """What an episode left behind: the final info, each step's action and LLM record."""

    def __init__(self) -> None:
        self.info: dict[str, Any] = {}
        self.actions: list[Action] = []
        self.records: list[ModelCall] = []
        self.observations: list[str] = []

    @property
    def outcome(self) -> dict[str, Any]:
        return dict(self.info["outcome"])


def play(env: LateralEnv[Any], player: LLMPlayer, item_id: str, *, sync: bool = False) -> Episode:
    """Run one episode to its end with ``act_async`` (on a fresh loop) or ``act``."""
    episode = Episode()
    obs, info = env.reset(seed=0, options={"item_id": item_id})
    player.reset(obs, info, seed=0)

    def record(action: Action) -> bool:
        nonlocal obs, info
        assert player.last_llm is not None
        episode.actions.append(action)
        episode.records.append(player.last_llm)
        obs, _, terminated, truncated, info = env.step(action)
        episode.observations.append(obs["text"])
        return terminated or truncated

    if sync:
        while not record(player.act(obs, info)):
            pass
    else:

        async def loop() -> None:
            try:
                while not record(await player.act_async(obs, info)):
                    pass
            finally:
                await player.client.aclose()

        asyncio.run(loop())
    episode.info = info
    return episode


def chat_bodies(server: ScriptedLLMServer) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.path.endswith("/chat/completions")]


def roles(body: dict[str, Any]) -> list[str]:
    return [m["role"] for m in body["messages"]]


# -- CreativityBench -----------------------------------------------------------------------------

STATIC_REPLY = (
    "The tin needs something thin and stiff to get under the rim. The spoon handle is flat steel.\n"
    "```json\n"
    '{"gold_entity": "Steel Soup Spon", "gold_part": "Handle", '
    '"how_to_use": "Slide the handle tip under the rim and lever the lid up."}\n'
    "```"
)


@pytest.mark.parametrize("sync", [False, True])
def test_static_episode_parses_fenced_json_and_resolves_a_near_miss(
    llm_server: ScriptedLLMServer, tmp_path: Path, sync: bool
) -> None:
    llm_server.enqueue(STATIC_REPLY)
    env = lateralgym.make("creativity-static", items=[PAINT_TASK])
    player = make_player(llm_server, tmp_path)
    episode = play(env, player, "t-paint-lid", sync=sync)

    assert episode.outcome["gold_correct"] is True
    assert episode.outcome["invalid_actions"] == 0
    record = episode.records[0]
    assert record.model == MODEL == player.name
    assert (record.role, record.served_by) == ("player", "test-model")
    assert record.text == STATIC_REPLY
    assert record.parsed_action == {
        "kind": "commit",
        "entity": "steel soup spoon",
        "part": "handle",
        "how_to_use": "Slide the handle tip under the rim and lever the lid up.",
        "fields": {"entity_as_written": "Steel Soup Spon", "part_as_written": "Handle"},  # for the official rule
    }
    assert record.completion_tokens == count_words(STATIC_REPLY)
    assert record.prompt_tokens > 100
    assert record.latency_s > 0
    assert (record.cache_hit, record.attempts, record.error) == (False, 1, None)

    (body,) = chat_bodies(llm_server)
    assert roles(body) == ["system", "user"]
    plan = PromptPlan(benchmark="creativity", mode="static", reasoning="direct", few_shot=False)
    assert body["messages"][0]["content"] == system_prompt(plan)
    assert '"gold_entity"' in body["messages"][0]["content"]
    assert body["messages"][1]["content"].startswith("TASK: The lid of a paint tin")
    assert "steel soup spoon:" in body["messages"][1]["content"]  # the full attribute listing


def test_cot_config_prompts_for_reasoning(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue(STATIC_REPLY, STATIC_REPLY)
    static_player = make_player(llm_server, tmp_path / "a")
    play(lateralgym.make("creativity-static", items=[PAINT_TASK]), static_player, "t-paint-lid")
    cot_player = make_player(llm_server, tmp_path / "b")
    episode = play(lateralgym.make("creativity-cot", items=[PAINT_TASK]), cot_player, "t-paint-lid")

    assert episode.outcome["gold_correct"] is True
    assert cot_player.plan is not None and cot_player.plan.reasoning == "cot"
    static_system, cot_system = (body["messages"][0]["content"] for body in chat_bodies(llm_server))
    assert static_system != cot_system
    # CreativityBench §5's procedure: task analysis, attribute grounding, affordance reasoning, answer.
    assert "Attribute grounding" in cot_system and "Attribute grounding" not in static_system
    assert "First write your reasoning" in static_system
    # The brief (user message) is the same: only the protocol differs.
    assert chat_bodies(llm_server)[0]["messages"][1] == chat_bodies(llm_server)[1]["messages"][1]


def test_reasoning_argument_overrides_the_config(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue(STATIC_REPLY)
    player = make_player(llm_server, tmp_path, reasoning="cot")
    play(lateralgym.make("creativity-static", items=[PAINT_TASK]), player, "t-paint-lid")
    assert "Affordance reasoning" in chat_bodies(llm_server)[0]["messages"][0]["content"]


def test_explore_episode_keeps_the_history(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    replies = [
        'I should look at the spoon first. {"action": "inspect", "entity": "steel soup spon"}',
        '{"action": "ask", "question": "Is the spoon handle made of metal?"}',
        'Confident now.\n```json\n{"action": "commit", "gold_entity": "steel soup spoon", "gold_part": "handle", '
        '"how_to_use": "Lever the lid up with the handle tip."}\n```',
    ]
    llm_server.enqueue(*replies)
    env = lateralgym.make("creativity-explore", items=[PAINT_TASK])
    player = make_player(llm_server, tmp_path)
    episode = play(env, player, "t-paint-lid")

    outcome = episode.outcome
    assert outcome["gold_correct"] is True
    assert (outcome["turns"], outcome["inspections"], outcome["asks"]) == (3, 1, 1)
    assert outcome["gold_inspected"] is True
    assert [r.parsed_action["kind"] for r in episode.records if r.parsed_action] == ["inspect", "ask", "commit"]
    assert episode.records[0].parsed_action == {"kind": "inspect", "entity": "steel soup spoon"}

    first, second, third = chat_bodies(llm_server)
    assert roles(first) == ["system", "user"]
    assert '"action": "inspect"' in first["messages"][0]["content"]
    assert "ENTITIES AROUND YOU" in first["messages"][1]["content"]
    # Each request repeats the chat so far: my reply, then the env's answer as a user message.
    assert roles(second) == ["system", "user", "assistant", "user"]
    assert second["messages"][2]["content"] == replies[0]
    assert second["messages"][3]["content"] == episode.observations[0]
    assert second["messages"][3]["content"].startswith("steel soup spoon:\n  - bowl")
    assert roles(third) == ["system", "user", "assistant", "user", "assistant", "user"]
    assert third["messages"][:4] == second["messages"]
    assert third["messages"][5]["content"] == episode.observations[1]
    assert player.messages[-1] == {"role": "assistant", "content": replies[2]}


# -- BrainTeaser ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("item_id", "reply", "correct"),
    [
        ("SP-1_SR", "(B)", True),
        ("SP-1", "Tricky. I think the answer is c) because planes break.", False),
        ("SP-1", "He flew a simulator.", True),
        ("SP-1_CR", "Answer: D", True),
    ],
)
def test_brainteaser_zero_shot(
    llm_server: ScriptedLLMServer, tmp_path: Path, item_id: str, reply: str, correct: bool
) -> None:
    llm_server.enqueue(reply)
    env = lateralgym.make(OUR_LAYOUT, items=list(PUZZLES))
    episode = play(env, make_player(llm_server, tmp_path), item_id)
    assert episode.outcome["correct"] is correct
    assert episode.outcome["committed"] is True
    (body,) = chat_bodies(llm_server)
    assert roles(body) == ["system", "user"]
    assert "Answer: <letter>" in body["messages"][0]["content"]
    assert not any(example["question"] in str(body) for example in BRAINTEASER_EXAMPLES)


@pytest.mark.parametrize("reasoning", ["direct", "cot"])
def test_brainteaser_few_shot_shows_worked_examples(
    llm_server: ScriptedLLMServer, tmp_path: Path, reasoning: str
) -> None:
    llm_server.enqueue("Answer: B")
    env = lateralgym.make(OUR_LAYOUT, items=list(PUZZLES))
    episode = play(env, make_player(llm_server, tmp_path, few_shot=True, reasoning=reasoning), "SP-1_SR")
    assert episode.outcome["correct"] is True

    (body,) = chat_bodies(llm_server)
    n = len(BRAINTEASER_EXAMPLES)
    assert n >= 2
    assert roles(body) == ["system", *(["user", "assistant"] * n), "user"]
    for k, example in enumerate(BRAINTEASER_EXAMPLES):
        shown, answered = body["messages"][1 + 2 * k], body["messages"][2 + 2 * k]
        assert example["question"] in shown["content"] and "CHOICES:\nA. " in shown["content"]
        assert answered["content"].endswith(f"Answer: {'ABCD'[example['answer']]}")
        assert (example["reasoning"] in answered["content"]) is (reasoning == "cot")
    assert body["messages"][-1]["content"].startswith("QUESTION: Without ever leaving the ground")


def test_few_shot_does_not_change_other_benchmarks(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue(STATIC_REPLY)
    player = make_player(llm_server, tmp_path, few_shot=True)
    play(lateralgym.make("creativity-static", items=[PAINT_TASK]), player, "t-paint-lid")
    assert roles(chat_bodies(llm_server)[0]) == ["system", "user"]


def test_garbage_reply_becomes_an_invalid_action(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue("I like turtles.")
    env = lateralgym.make(OUR_LAYOUT, items=list(PUZZLES))
    episode = play(env, make_player(llm_server, tmp_path), "SP-1")

    action = episode.actions[0]
    assert isinstance(action, Invalid) and action.raw == "I like turtles."
    assert episode.outcome["invalid_actions"] == 1
    assert episode.outcome["committed"] is False
    record = episode.records[0]
    assert record.text == "I like turtles."
    assert record.parsed_action is not None and record.parsed_action["kind"] == "invalid"
    assert record.error is not None and record.error.startswith("unparsable reply")
    assert record.completion_tokens == 3


@pytest.mark.parametrize("fault", [Fault.null(), Fault.empty(), Fault.non_utf8()], ids=["null", "empty", "non-utf8"])
def test_a_reply_without_text_is_retried_not_charged_as_a_turn(
    llm_server: ScriptedLLMServer, tmp_path: Path, fault: Fault
) -> None:
    llm_server.enqueue(fault, "Answer: (A)")
    env = lateralgym.make(OUR_LAYOUT, items=list(PUZZLES))
    episode = play(env, make_player(llm_server, tmp_path), "SP-1")

    assert not isinstance(episode.actions[0], Invalid) and episode.outcome["invalid_actions"] == 0
    assert (episode.records[0].text, episode.records[0].attempts) == ("Answer: (A)", 2)


# -- SPLAT ---------------------------------------------------------------------------------------


def test_splat_questions_then_answer(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    replies = [
        "Question: Was the audience watching a film?",
        "Hmm, no idea what is going on.",  # unparsable, neither re-asked nor read by the fallback: invalid
        "Answer: It was a silent film screening.\nThe violinist was an actor on the cinema screen.",
    ]
    llm_server.enqueue(*replies)
    env = lateralgym.make("splat", items=[STORY])
    player = make_player(llm_server, tmp_path, reasks=0, fallback=False)
    episode = play(env, player, "sp-test-1")

    outcome = episode.outcome
    assert outcome["solved"] is True
    assert (outcome["turns"], outcome["questions"], outcome["invalid_actions"]) == (3, 1, 1)
    assert [type(a).__name__ for a in episode.actions] == ["Ask", "Invalid", "Commit"]
    assert episode.records[2].parsed_action == {
        "kind": "commit",
        "answer": "It was a silent film screening. The violinist was an actor on the cinema screen.",
    }

    first, second, third = chat_bodies(llm_server)
    system = first["messages"][0]["content"]
    assert "Question: <your yes/no question>" in system and "Answer: <your full explanation>" in system
    assert first["messages"][1]["content"].startswith("TITLE: The Quiet Concert")
    assert second["messages"][2:] == [
        {"role": "assistant", "content": replies[0]},
        {"role": "user", "content": "Yes."},
    ]
    assert third["messages"][4]["content"] == replies[1]
    assert third["messages"][5]["content"].startswith("Invalid action: no move found")


# -- request parameters, system prompt, cache ----------------------------------------------------


def test_sampling_parameters_reach_the_server(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue("(B)", "(B)")
    env = lateralgym.make(OUR_LAYOUT, items=list(PUZZLES))
    play(env, make_player(llm_server, tmp_path / "a", temperature=0.3, max_tokens=64, seed=7), "SP-1_SR")
    play(env, make_player(llm_server, tmp_path / "b"), "SP-1_SR")
    tuned, plain = chat_bodies(llm_server)
    assert (tuned["temperature"], tuned["max_tokens"], tuned["seed"]) == (0.3, 64, 7)
    assert tuned["model"] == "test-model"
    assert not {"temperature", "max_tokens", "seed"} & set(plain)


def test_custom_system_prompt_replaces_the_protocol(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue("Question: Is it a film?", "Answer: A silent film; the violinist was an actor on screen.")
    player = make_player(llm_server, tmp_path, system_prompt="You are a terse detective.")
    play(lateralgym.make("splat", items=[STORY]), player, "sp-test-1")
    for body in chat_bodies(llm_server):
        assert body["messages"][0] == {"role": "system", "content": "You are a terse detective."}


def test_reset_clears_the_history_and_repeats_hit_the_cache(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue("Question: Is it a film?", "Answer: wrong guess")
    config = EpisodeConfig.named("splat").model_copy(update={"max_turns": 2})
    env = lateralgym.make(config, items=[STORY])
    player = make_player(llm_server, tmp_path)
    first = play(env, player, "sp-test-1")
    assert first.info["outcome"]["solved"] is False
    assert roles({"messages": player.messages}) == ["system", "user", "assistant", "user", "assistant"]
    assert llm_server.chat_calls == 2

    again = play(env, player, "sp-test-1")
    assert llm_server.chat_calls == 2  # the same chat, answered from the cache
    assert [(r.cache_hit, r.attempts) for r in again.records] == [(True, 0), (True, 0)]
    assert again.records[0].text == "Question: Is it a film?"
    assert again.records[0].prompt_tokens > 0
    assert player.messages[1]["content"].startswith("TITLE: The Quiet Concert")


# -- failures ------------------------------------------------------------------------------------


@pytest.mark.parametrize("sync", [False, True])
def test_api_error_after_retries_raises_and_is_recorded(
    llm_server: ScriptedLLMServer, tmp_path: Path, sync: bool
) -> None:
    llm_server.enqueue(Fault.status(500), Fault.status(500), Fault.status(500))
    env = lateralgym.make(OUR_LAYOUT, items=list(PUZZLES))
    player = make_player(llm_server, tmp_path, max_retries=1)
    obs, info = env.reset(options={"item_id": "SP-1"})
    player.reset(obs, info)

    with pytest.raises(LLMCallError) as caught:
        if sync:
            player.act(obs, info)
        else:
            asyncio.run(player.act_async(obs, info))
    assert caught.value.attempts == 2 and caught.value.status == 500
    assert llm_server.chat_calls == 2
    record = player.last_llm
    assert record is not None
    assert record.error is not None and "HTTP 500" in record.error
    assert (record.attempts, record.text, record.parsed_action) == (2, "", None)
    assert (record.model, record.role) == (MODEL, "player")
    assert caught.value.calls == (record,)
    assert "sk-test-player-key" not in record.error

    # The failed turn left no trace in the chat: trying again sends the same opening messages
    # (the third 500 is retried once more, then the reply comes).
    llm_server.enqueue("(A)")
    action = player.act(obs, info)
    assert action.kind == "commit" and player.last_llm.error is None
    bodies = chat_bodies(llm_server)
    assert len(bodies) == 4
    assert all(body["messages"] == bodies[0]["messages"] for body in bodies)
    assert roles(bodies[0]) == ["system", "user"]


def test_client_returning_errors_as_values_still_raises(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue(Fault.status(400))
    client = LLMClient(MODEL, base_url=llm_server.base_url, cache_dir=tmp_path, raise_on_error=False, max_retries=0)
    _clients.append(client)
    player = LLMPlayer(client)
    env = lateralgym.make(OUR_LAYOUT, items=list(PUZZLES))
    obs, info = env.reset(options={"item_id": "SP-1"})
    player.reset(obs, info)
    with pytest.raises(LLMCallError):
        player.act(obs, info)
    assert player.last_llm is not None and player.last_llm.error is not None and "400" in player.last_llm.error


# -- the log contract and spec strings -----------------------------------------------------------


def test_the_player_record_is_the_step_log_llm_block(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    assert LLMBlock is ModelCall  # one record of a model call, from the client to the log
    llm_server.enqueue("(B)")
    episode = play(lateralgym.make(OUR_LAYOUT, items=list(PUZZLES)), make_player(llm_server, tmp_path), "SP-1_SR")
    dumped = episode.records[0].model_dump(mode="json")
    assert LLMBlock.model_validate(dumped).model_dump(mode="json") == dumped
    assert (dumped["role"], dumped["parsed_action"], dumped["text"]) == (
        "player",
        {"kind": "commit", "choice": 1},
        "(B)",
    )


def test_player_from_spec_string(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    spec = f"openai/test-model?base_url={llm_server.base_url}&reasoning=cot&few_shot=true&temperature=0&seed=3"
    player = LLMPlayer.from_spec(spec, cache_dir=tmp_path, max_tokens=32)
    _clients.append(player.client)
    assert player.name == "openai/test-model"
    assert (player.reasoning, player.few_shot) == ("cot", True)
    settings = player.client.spec
    assert (settings.temperature, settings.seed, settings.max_tokens, settings.options) == (
        0.0,
        3,
        32,
        {"reasoning": "cot", "few_shot": "true"},
    )
    llm_server.enqueue("The pilot never leaves the ground in a simulator.\nAnswer: B")
    episode = play(lateralgym.make(OUR_LAYOUT, items=list(PUZZLES)), player, "SP-1_SR")
    assert episode.outcome["correct"] is True
    (body,) = chat_bodies(llm_server)
    assert (body["temperature"], body["seed"], body["max_tokens"]) == (0, 3, 32)
    assert len(body["messages"]) == 2 + 2 * len(BRAINTEASER_EXAMPLES)


def test_player_spec_strings() -> None:
    plain = ModelSpec.parse("anthropic/claude-3-5-haiku-latest")
    assert (plain.name, plain.options, plain.role_options(PLAYER_OPTIONS, role="player")) == (
        "anthropic/claude-3-5-haiku-latest",
        {},
        {},
    )
    spec = ModelSpec.parse(
        "openai/qwen?base_url=http://127.0.0.1:8000/v1&max_tokens=256&few_shot=0&timeout=30&max_retries=2"
    )
    assert spec.name == "openai/qwen"
    assert (spec.base_url, spec.max_tokens, spec.timeout, spec.max_retries) == (
        "http://127.0.0.1:8000/v1",
        256,
        30.0,
        2,
    )
    assert spec.role_options(PLAYER_OPTIONS, role="player") == {"few_shot": False}
    assert is_model_spec("openai/gpt-4o-mini?temperature=0")
    assert not any(is_model_spec(s) for s in ("heuristic", "random", "oracle", "human", "/x", "openai/"))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("heuristic", "must be 'provider/model'"),
        ("openai/x?colour=blue", "unknown player option(s) colour; player options are few_shot, reasoning"),
        ("openai/x?samples=3", "unknown player option(s) samples"),
        ("openai/x?reasoning=deep", "expected 'direct' or 'cot'"),
        ("openai/x?few_shot=maybe", "expected true/false"),
        ("openai/x?temperature=hot", "temperature: Input should be a valid number"),
        ("openai/x?seed=1&seed=2", "given twice"),
        ("openai/x?api_key=sk-secret-value", "api_key_env"),
        ("openai/x?novalue", "name=value"),
    ],
)
def test_bad_player_specs_are_config_errors(spec: str, message: str) -> None:
    with pytest.raises(LLMConfigError) as caught:
        LLMPlayer.from_spec(spec)
    assert message in str(caught.value)
    assert "sk-secret-value" not in str(caught.value)


def test_unknown_override_is_a_config_error() -> None:
    with pytest.raises(LLMConfigError, match="unknown player option"):
        LLMPlayer.from_spec("openai/x?base_url=http://127.0.0.1:1/v1", colour="blue")


def test_bad_reasoning_value_is_rejected(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    with pytest.raises(LLMConfigError, match="reasoning"):
        make_player(llm_server, tmp_path, reasoning="deep")


# -- repeats, reruns and episodes without reset --------------------------------------------------


def _repeat_episodes(factory: Any, env: LateralEnv[Any], seeds: range) -> list[ModelCall]:
    """Play SP-1 and SP-1_SR once per seed the way the runner does: a fresh player per episode."""
    records = []
    for item_id in ("SP-1", "SP-1_SR"):
        for seed in seeds:
            obs, info = env.reset(seed=seed, options={"item_id": item_id})
            player = factory(seed)
            player.reset(obs, info, seed=seed)
            env.step(player.act(obs, info))
            records.append(player.last_llm)
    return records


@pytest.mark.filterwarnings("ignore:.*ReadOnly. qualifier:UserWarning")  # litellm 1.106.2 with pydantic 2.14
@pytest.mark.parametrize("spec", ["openai/test-model?seed=7", "hosted_vllm/test-model"])
def test_repeats_are_distinct_requests_and_reruns_replay(
    llm_server: ScriptedLLMServer, tmp_path: Path, spec: str
) -> None:
    if spec.startswith("hosted_vllm"):
        if not litellm_available():
            pytest.skip("litellm is not installed")
    llm_server.responder = lambda body: "Answer: B"
    env = lateralgym.make(OUR_LAYOUT, items=list(PUZZLES))

    def run() -> list[ModelCall]:
        factory = player_factory(spec, base_url=llm_server.base_url, cache_dir=tmp_path / "cache")
        _clients.append(factory.client)  # type: ignore[attr-defined]
        return _repeat_episodes(factory, env, range(3))

    first = run()
    assert llm_server.chat_calls == 6 and not any(r.cache_hit for r in first)
    bodies = chat_bodies(llm_server)
    # The three repeats of an item send the same request (a fixed seed, or none): only the cache
    # tag, which never leaves the process, tells them apart.
    assert bodies[0] == bodies[1] == bodies[2] and bodies[3] == bodies[4] == bodies[5]
    assert all(body.get("seed") == (7 if "seed=7" in spec else None) for body in bodies)

    again = run()
    assert llm_server.chat_calls == 6 and all(r.cache_hit for r in again)
    assert [r.text for r in again] == [r.text for r in first]


def test_a_run_with_repeats_asks_once_per_episode_and_a_rerun_asks_nothing(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    from lateralgym.episodes import run

    llm_server.responder = lambda body: "Answer: A"
    kwargs: dict[str, Any] = {
        "player": "openai/test-model?seed=7",
        "base_url": llm_server.base_url,
        "limit": 2,
        "repeats": 3,
        "cache_dir": tmp_path / "cache",
        "progress": False,
    }
    first = run("brainteaser", out=tmp_path / "a", **kwargs)
    # --limit 2 plays whole groups: the first group's three puzzles, three times each
    assert llm_server.chat_calls == 9 and first.usage["player"].calls == 9
    second = run("brainteaser", out=tmp_path / "b", **kwargs)
    assert llm_server.chat_calls == 9 and second.usage["player"].cache_hits == 9


def test_a_new_episode_without_reset_starts_a_fresh_chat(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue("Question: Is it a film?", "Question: Is it night?")
    env = lateralgym.make("splat", items=[STORY])
    player = make_player(llm_server, tmp_path)
    obs, info = env.reset(seed=0, options={"item_id": "sp-test-1"})
    player.reset(obs, info)
    env.step(player.act(obs, info))

    obs, info = env.reset(seed=1, options={"item_id": "sp-test-1"})  # the player is not told
    player.act(obs, info)

    assert roles({"messages": player.messages}) == ["system", "user", "assistant"]
    assert player.last_llm is not None and player.last_llm.cache_hit  # the same opening as before


def test_an_item_change_starts_a_fresh_chat(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue("(A)", "(B)")
    env = lateralgym.make(OUR_LAYOUT, items=list(PUZZLES))
    player = make_player(llm_server, tmp_path)
    obs, info = env.reset(options={"item_id": "SP-1"})
    player.reset(obs, info)
    player.act(obs, info)

    other_obs, other_info = env.reset(options={"item_id": "SP-1_SR"})
    player.act(other_obs, {**other_info, "turn": 1})  # mid-episode by its turn, but another item

    last = chat_bodies(llm_server)[-1]
    assert roles(last) == ["system", "user"]
    assert last["messages"][1]["content"] == other_obs["text"]


def test_cot_splat_reply_is_read_from_its_last_line(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue(
        "Let me think.\nQ: Were they deaf? A: no, they clapped.\n"
        "Answer: It was a silent film; the violinist was on screen."
    )
    player = make_player(llm_server, tmp_path, reasoning="cot")
    episode = play(lateralgym.make("splat", items=[STORY]), player, "sp-test-1")
    assert episode.actions[0] == Commit(answer="It was a silent film; the violinist was on screen.")


def test_overrides_win_and_none_is_ignored() -> None:
    spec = ModelSpec.parse(
        "openai/qwen?base_url=http://127.0.0.1:8000/v1&temperature=0&timeout=5&seed=2&reasoning=direct",
        max_tokens=9,
        seed=None,
        reasoning="cot",
        system_prompt="Be brief.",
    )
    assert (spec.base_url, spec.temperature, spec.timeout, spec.seed, spec.max_tokens) == (
        "http://127.0.0.1:8000/v1",
        0.0,
        5.0,
        2,
        9,
    )
    options = spec.role_options(PLAYER_OPTIONS, role="player")
    assert options == {"reasoning": "cot", "system_prompt": "Be brief."}
    with pytest.raises(LLMConfigError, match="unknown player option"):
        LLMPlayer.from_spec("openai/qwen", colour="blue")


def test_player_factory_takes_the_runs_base_url_when_the_spec_names_none(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    factory = player_factory("openai/test-model?few_shot=true", base_url=llm_server.base_url, cache_dir=tmp_path)
    _clients.append(factory.client)  # type: ignore[attr-defined]
    player = factory(5)
    assert isinstance(player, LLMPlayer) and player.few_shot and player.seed == 5 and player.episode_seed == 5
    assert player.client.spec.base_url == llm_server.base_url
    own = player_factory("openai/test-model?base_url=http://127.0.0.1:1/v1", base_url=llm_server.base_url)
    _clients.append(own.client)  # type: ignore[attr-defined]
    assert own.client.spec.base_url == "http://127.0.0.1:1/v1"  # type: ignore[attr-defined]
    with pytest.raises(LLMConfigError, match="unknown player option"):
        player_factory("openai/test-model?samples=3", base_url=llm_server.base_url)
