"""TRL's ``environment_factory``: every config's moves become tools TRL can describe (transformers'
``get_json_schema``, what TRL calls), rewards are the env's own, and (with the grpo extra) TRL's
``GRPOTrainer`` trains 2 steps on CPU against ``creativity-interactive`` and ``splat``."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from lateralgym.agents import make_agent
from lateralgym.envs import SHIPPED_CONFIGS, EpisodeConfig, LateralEnv, action_to_text, load_config_items
from lateralgym.episodes import read_log, replay
from lateralgym.integrations.trl import dataset, environment, tool_names

chat_template_utils = pytest.importorskip(
    "transformers.utils.chat_template_utils", reason="transformers is not installed: pip install 'lateralgym[grpo]'"
)


@pytest.mark.parametrize("name", SHIPPED_CONFIGS)
def test_every_move_kind_is_a_tool_trl_can_describe(name: str) -> None:
    env_class = environment(name)
    config = EpisodeConfig.named(name)
    names = tool_names(env_class)
    expected = {"ask", "inspect"} & set(config.allowed_actions)
    assert expected <= set(names) and ("answer" in names or "commit" in names)
    instance = env_class()
    for tool in names:
        schema = chat_template_utils.get_json_schema(getattr(instance, tool))["function"]
        assert schema["name"] == tool and schema["description"]
        parameters = schema["parameters"]
        assert parameters["required"] == list(parameters["properties"])
        assert all(p["type"] == "string" and p["description"] for p in parameters["properties"].values())


def test_rows_reset_and_rewards_are_the_envs_own(tmp_path: Path) -> None:
    config = EpisodeConfig.named("creativity-interactive")
    items = load_config_items(config)
    env_class = environment(config, items=items, out=tmp_path)
    rows = dataset(env_class)
    assert rows and all(set(row) == {"prompt", "item_id", "seed"} for row in rows)
    assert "(commit, inspect)" in rows[0]["prompt"][0]["content"]
    local = LateralEnv(config, items=items)
    played = []
    for row in rows[:6]:
        tools = env_class()
        opening = tools.reset(**row)
        obs, info = local.reset(seed=row["seed"], options={"item_id": row["item_id"]})
        assert opening.strip() == obs["text"]
        agent = make_agent("oracle" if len(played) % 2 else "random", items, seed=row["seed"])
        agent.reset(obs, info, seed=row["seed"])
        total, done = 0.0, False
        while not done:
            action = agent.act(obs, info)
            obs, reward, terminated, truncated, info = local.step(action_to_text(action))
            total, done = total + reward, terminated or truncated
            data = action.model_dump()
            if data["kind"] == "inspect":
                reply = tools.inspect(entity=data["entity"])
            elif data["kind"] == "commit" and data.get("entity") is not None:
                reply = tools.commit(entity=data["entity"], part=data["part"], how_to_use=data.get("how_to_use") or "")
            else:  # an invalid move a tool cannot make: send the same text through the engine's parser
                reply = tools._move(action_to_text(action))
            assert reply == obs["text"]
        assert tools.done and tools.get_reward() == pytest.approx(total)
        played.append(total)
    assert len(set(played)) > 1  # the moves decide the reward
    with pytest.raises(Exception, match="the episode is over"):
        tools.inspect(entity="anything")
    env_class.sessions.close()
    (run_dir,) = list(tmp_path.iterdir())
    ends = [r for r in read_log(run_dir / "steps.jsonl") if r.type == "episode_end"]
    assert [end.reward for end in ends] == pytest.approx(played)
    assert all(r.divergence is None for r in replay(run_dir))


def test_a_pooled_instance_reset_mid_episode_logs_that_episode_as_unfinished(tmp_path: Path) -> None:
    env_class = environment("splat", out=tmp_path)
    tools = env_class()
    first, second = dataset(env_class)[:2]
    tools.reset(**first)
    assert tools.ask(question="Was anyone hurt?")
    tools.reset(**second)  # TRL reuses instances across batches
    assert tools.get_reward() == 0.0 and not tools.done
    env_class.sessions.close()
    (run_dir,) = list(tmp_path.iterdir())
    end, last = [r for r in read_log(run_dir / "steps.jsonl") if r.type == "episode_end"]
    assert end.item_id == first["item_id"]
    assert end.error == "unfinished: TRL reset the environment before the episode ended"
    assert last.item_id == second["item_id"]
    assert last.error == "unfinished: stopped mid-episode (the server or trainer closed)"


needs_trl = pytest.mark.skipif(
    importlib.util.find_spec("trl") is None or importlib.util.find_spec("torch") is None,
    reason="TRL is not installed: pip install 'lateralgym[grpo]'",
)


@needs_trl
@pytest.mark.slow
@pytest.mark.parametrize("name", ["creativity-interactive", "splat"])
def test_trl_grpo_trainer_trains_two_steps_with_the_environment(name: str, tmp_path: Path) -> None:
    from trl_stand_in import scripted_trainer, tiny_chat_model

    env_class = environment(name, out=tmp_path / "runs")
    rows = dataset(env_class)[:2]
    model, tokenizer = tiny_chat_model()
    first_move = {"creativity-interactive": ("inspect", "entity"), "splat": ("ask", "question")}[name]
    trainer = scripted_trainer(model, tokenizer, env_class, rows, first_move, tmp_path / "out")
    trainer.train()
    assert trainer.state.global_step == 2
    env_class.sessions.close()
    (run_dir,) = list((tmp_path / "runs").iterdir())
    steps = [r for r in read_log(run_dir / "steps.jsonl") if r.type == "step"]
    assert steps and {s.action["kind"] for s in steps} >= {first_move[0]}  # tool calls reached the env
    history: list[dict[str, Any]] = trainer.state.log_history
    assert any("rewards/" + env_class.__name__ + "/mean" in entry for entry in history)


@needs_trl
@pytest.mark.slow
def test_train_grpo_with_tool_rollouts_trains_and_evaluates_through_tools(tmp_path: Path) -> None:
    from trl_stand_in import tiny_chat_model

    from lateralgym.integrations import GRPOSettings, train_grpo

    model, tokenizer = tiny_chat_model()
    folder = tmp_path / "tiny"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    settings = GRPOSettings(
        steps=2, num_generations=2, max_completion_length=16, eval_items=2, eval_max_new_tokens=16, rollout="tools"
    )
    summary = train_grpo(EpisodeConfig.named("riddlesense"), str(folder), tmp_path / "run", settings)
    assert summary.steps == 2 and len(summary.train_reward) == 2 and summary.eval_after.n == 2
    assert summary.settings.rollout == "tools" and (tmp_path / "run" / "train_curve.jsonl").is_file()
    assert "correct" in summary.eval_before.outcome_rates  # the benchmark's own true/false outcome fields
