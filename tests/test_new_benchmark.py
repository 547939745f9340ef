"""A benchmark defined in this file alone — no edit in the package — runs through every layer.

It is a small twenty-questions game: the player asks yes/no questions about a hidden animal and
then names it. The test registers it, then plays it through ``lateralgym.make``, the runner,
metrics, the report, replay, the viewer and the conformance checks, as a user adding RiddleSense,
MacGyver or their own game would.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from pydantic import BaseModel, ConfigDict

import lateralgym
from lateralgym.envs import (
    BENCHMARKS,
    Action,
    Ask,
    Benchmark,
    Commit,
    DataPart,
    EpisodeConfig,
    Handled,
    Inspect,
    JudgeReply,
    JudgingPart,
    LateralEnv,
    LeakPart,
    MetricsPart,
    Outcome,
    PolicyPart,
    Scene,
    register_benchmark,
)
from lateralgym.envs.testing import check_scene
from lateralgym.episodes import (
    compute_metrics,
    metrics_from_log,
    read_log,
    replay,
    run,
    transcript,
    write_report,
    write_viewer,
)


class Animal(BaseModel):
    """The hidden animal and what is true of it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    secret_word: str
    facts: tuple[str, ...]
    """Words a question may contain to be answered yes."""


class GuessOutcome(Outcome):
    guessed: bool
    questions: int

    def succeeded(self) -> bool:
        return self.guessed


class FactsJudge:
    """Answers yes when the question names one of the animal's facts; grades the name exactly."""

    name = "facts"
    synchronous = True

    async def answer(self, item: Any, question: str, history: tuple[Any, ...]) -> JudgeReply:
        return JudgeReply(label="yes" if any(f in question.lower() for f in item.facts) else "no")

    async def grade(self, item: Any, commit: Commit, history: tuple[Any, ...]) -> JudgeReply:
        guess = (commit.answer or "").strip().lower()
        return JudgeReply(label="correct" if guess == item.secret_word else "incorrect")


class GuessScene(Scene[Animal, GuessOutcome]):
    def __init__(self, item: Animal, config: EpisodeConfig, judge: Any, rng: np.random.Generator) -> None:
        super().__init__(item, config, judge, rng)
        self.guessed = False
        self.committed = False

    def brief(self) -> str:
        return (
            f"I am thinking of an animal. You have {self.config.max_turns} turns. Ask yes/no questions, then name it."
        )

    async def handle(self, action: Inspect | Ask | Commit) -> Handled:
        if isinstance(action, Ask):
            reply = await self.ask_judge(action.question)
            return Handled(message=reply.label.capitalize() + ".", judge=reply)
        assert isinstance(action, Commit)
        reply = await self.grade(action)
        self.committed, self.guessed = True, reply.label == "correct"
        reward = self.config.rewards.correct if self.guessed else 0.0
        return Handled(message="Right!" if self.guessed else "No.", reward=reward, terminated=True, judge=reply)

    def outcome(self, turns: int, invalid_actions: int) -> GuessOutcome:
        return GuessOutcome(
            **self.common(turns, invalid_actions, committed=self.committed),
            guessed=self.guessed,
            questions=len(self.history),
        )

    def public(self) -> dict[str, Any]:
        return {"history": [[qa.question, qa.label] for qa in self.history]}


class GuessPolicies(PolicyPart[Animal]):
    def random_action(self, info: Mapping[str, Any], rng: np.random.Generator) -> Action:
        return Commit(answer=str(rng.choice(["cat", "owl", "trout"])))

    def oracle_action(self, item: Animal, info: Mapping[str, Any]) -> Action:
        if not info["public"]["history"]:
            return Ask(question=f"Does it have {item.facts[0]}?")
        return Commit(answer=item.secret_word)


class GuessLeaks(LeakPart[Animal]):
    def probe_actions(self, item: Animal, config: EpisodeConfig) -> Iterable[Any]:
        yield Ask(question="What is the animal?")
        yield Commit(answer="unicorn")


class TwentyQuestions(Benchmark[Animal, GuessOutcome]):
    name = "twenty-questions"
    item_type = Animal
    outcome_type = GuessOutcome
    scene_type = GuessScene
    modes = ("multiturn",)
    action_forms: ClassVar[dict[str, str]] = {"ask": "ask: <yes/no question>", "commit": "commit: <the animal>"}
    data = DataPart.having(jsonl_keys=frozenset({"secret_word"}))
    judging = JudgingPart.having(offline_judges={"facts": FactsJudge}, default_judge="facts")
    metrics = MetricsPart.having(headline=("success_rate",))
    policies = GuessPolicies()
    leaks = GuessLeaks()

    def secret_texts(self, item: Animal) -> list[str]:
        return [f"the hidden animal is the {item.secret_word}"]


ANIMALS = [
    Animal(id="tq-1", secret_word="owl", facts=("feathers", "night")),
    Animal(id="tq-2", secret_word="trout", facts=("fins", "river")),
    Animal(id="tq-3", secret_word="cat", facts=("fur", "whiskers")),
]


@pytest.fixture
def twenty_questions(tmp_path: Path) -> Iterator[EpisodeConfig]:
    """The benchmark registered for one test (and unregistered after), with its items in a JSONL file."""
    register_benchmark(TwentyQuestions)
    data = tmp_path / "animals.jsonl"
    data.write_text("".join(a.model_dump_json() + "\n" for a in ANIMALS), encoding="utf-8")
    try:
        yield EpisodeConfig(
            name="twenty-questions",
            benchmark="twenty-questions",
            mode="multiturn",
            allowed_actions=("ask", "commit"),
            max_turns=4,
            judge="facts",
            player="oracle",
            dataset=str(data),
        )
    finally:
        BENCHMARKS.pop("twenty-questions", None)


def test_a_benchmark_defined_outside_the_package_runs_through_every_layer(
    twenty_questions: EpisodeConfig, tmp_path: Path
) -> None:
    config = twenty_questions
    # lateralgym.make: a Gymnasium env for it, stepped by hand.
    env = lateralgym.make(config)
    obs, info = env.reset(seed=0, options={"item_id": "tq-2"})
    assert "animal" in obs["text"] and info["benchmark"] == "twenty-questions"
    obs, _, _, _, info = env.step("ask: does it have fins?")
    assert obs["text"] == "Yes."
    obs, reward, terminated, _, info = env.step("commit: trout")
    assert terminated and reward == 1.0 and info["outcome"]["guessed"] is True

    # The conformance suite: check_env, determinism, the no-leak walk.
    assert check_scene(lambda: LateralEnv(config, items=ANIMALS)) > 0

    # The runner, with the offline oracle and random players (their policies are the benchmark's).
    result = run(config, out=tmp_path / "runs", progress=False)
    assert result.metrics.headline["success_rate"] == 100.0 and result.metrics.episodes == 3
    random_run = run(config, player="random", repeats=4, out=tmp_path / "runs", progress=False)
    assert random_run.metrics.episodes == 12

    # Metrics read the typed outcome from the log; the report, replay and viewer work on the run.
    assert metrics_from_log(result.run_dir).headline == result.metrics.headline
    ends = [r for r in read_log(result.run_dir / "steps.jsonl") if r.type == "episode_end"]
    assert all(GuessOutcome.model_validate(e.outcome).questions == 1 for e in ends)
    report = write_report(result.run_dir, result.metrics)
    assert "success_rate" in report.read_text(encoding="utf-8")
    replays = replay(result.run_dir)
    assert len(replays) == 3 and all(r.divergence is None and r.complete for r in replays)
    assert "commit" in transcript(result.run_dir)
    page = write_viewer(result.run_dir).read_text(encoding="utf-8")
    assert "tq-1" in page and "success_rate" in page


def test_a_renamed_outcome_field_fails_loudly_instead_of_scoring_zero(
    twenty_questions: EpisodeConfig, tmp_path: Path
) -> None:
    from lateralgym.episodes import MetricsError

    result = run(twenty_questions, out=tmp_path, progress=False)
    log = result.run_dir / "steps.jsonl"
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    for record in records:
        if record["type"] == "episode_end":
            record["outcome"]["was_guessed"] = record["outcome"].pop("guessed")  # a scene renamed its field
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with pytest.raises(MetricsError, match="guessed"):
        compute_metrics(read_log(log))


def test_an_installed_plugin_registers_its_benchmark_for_the_cli(tmp_path: Path) -> None:
    """A package declaring a ``lateralgym.benchmarks`` entry point is run by ``lateralgym run`` as is."""
    import subprocess
    import sys

    site = tmp_path / "site"
    (site / "tq_plugin-0.1.dist-info").mkdir(parents=True)
    (site / "tq_plugin-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: tq-plugin\nVersion: 0.1\n")
    (site / "tq_plugin-0.1.dist-info" / "entry_points.txt").write_text(
        "[lateralgym.benchmarks]\ntwenty-questions = tq_plugin\n"
    )
    (site / "tq_plugin.py").write_text(
        "from test_new_benchmark import TwentyQuestions\n"
        "from lateralgym.envs import register_benchmark\n"
        "register_benchmark(TwentyQuestions)\n"
    )
    data = tmp_path / "animals.jsonl"
    data.write_text("".join(a.model_dump_json() + "\n" for a in ANIMALS), encoding="utf-8")
    config = tmp_path / "tq.yaml"
    config.write_text(
        "name: tq\nbenchmark: twenty-questions\nmode: multiturn\nallowed_actions: [ask, commit]\n"
        f"max_turns: 4\njudge: facts\nplayer: oracle\ndataset: {data}\n"
    )
    tests = Path(__file__).resolve().parent
    env = {**__import__("os").environ, "PYTHONPATH": f"{site}:{tests}"}
    done = subprocess.run(
        [sys.executable, "-m", "lateralgym.cli", "run", str(config), "--out", str(tmp_path / "runs"), "--no-progress"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "success_rate" in done.stdout and "3 episodes run" in done.stdout
