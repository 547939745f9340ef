"""Replay: re-step the env from a run's logged actions and check every observation and reward.

The env is rebuilt from the run's ``config.yaml`` and dataset. Offline judges are deterministic
and run live; for any other judge (an LLM) the judge's logged labels are replayed, so a replay
costs no API call and still verifies the env's own logic step by step.

An episode the log records more than once (two processes wrote it at once) cannot be told apart
into its copies: it is reported (``EpisodeReplay.duplicated``) and not re-stepped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from lateralgym.envs import (
    QA,
    Commit,
    ConfigError,
    JudgeReply,
    LateralEnv,
    benchmark_of,
    get_benchmark,
    load_config_items,
)
from lateralgym.episodes._log import STEP_LOG, EpisodeEnd, EpisodeStart, StepLine, observation_text, read_log
from lateralgym.episodes._manifest import read_run
from lateralgym.episodes._metrics import DuplicateEpisodes
from lateralgym.episodes._options import EpisodeSpec
from lateralgym.episodes._session import EpisodeSession


class Divergence(BaseModel):
    """The first place a replay differs from the log."""

    episode_id: str
    step: int
    """0 for the first observation."""
    field: str
    expected: str
    got: str

    def describe(self) -> str:
        return (
            f"episode {self.episode_id}, step {self.step}: {self.field} differs\n"
            f"  logged:   {self.expected[:300]!r}\n  replayed: {self.got[:300]!r}"
        )


class EpisodeReplay(BaseModel):
    """One replayed episode."""

    episode_id: str
    item_id: str
    steps: int
    complete: bool
    """False when the log has no end record for it (a killed run)."""
    divergence: Divergence | None = None
    duplicated: bool = False
    """The log records this episode more than once (two processes wrote it at once); its copies'
    lines cannot be told apart, so it was not re-stepped."""


class LoggedJudge:
    """Replays a run's logged judge labels in order (for LLM judges)."""

    synchronous = True
    """Its coroutines never suspend (it reads the log)."""

    def __init__(self, name: str, replies: list[tuple[str, str | None]]) -> None:
        self.name = name
        self._replies: Iterator[tuple[str, str | None]] = iter(replies)

    def _next(self) -> JudgeReply:
        label, hint = next(self._replies, ("irrelevant", None))
        return JudgeReply.model_validate({"label": label, "hint": hint})

    async def answer(self, item: Any, question: str, history: tuple[QA, ...]) -> JudgeReply:
        return self._next()

    async def respond(self, item: Any, message: str) -> JudgeReply:
        """A protocol where a judge replies to a whole message: the logged reply (one call, as logged)."""
        return self._next()

    async def grade(self, item: Any, commit: Commit, history: tuple[QA, ...]) -> JudgeReply:
        reply = self._next()
        exact = benchmark_of(item).judging.offline_judges.get("exact")
        if exact is not None:  # correctness is exact match where the benchmark has it, whatever the rubric said
            graded: JudgeReply = await exact().grade(item, commit, history)
            return graded
        return reply


def _logged_hint(line: StepLine, run_dir: Path) -> str | None:
    """The hint the env forwarded in a logged reply (``Not yet. Hint: ...``), if any."""
    text = observation_text(line.reply, run_dir).split("\n")[0]
    return text.split("Hint: ", 1)[1] if text.startswith("Not yet. Hint: ") else None


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_episodes(run_dir: Path, episode: str | None = None) -> dict[str, list[EpisodeStart | StepLine | EpisodeEnd]]:
    """The log's records grouped by episode id, in log order."""
    log = run_dir / STEP_LOG
    if not log.exists():
        raise ConfigError(f"{run_dir} has no {STEP_LOG}: is it a run directory?")
    grouped: dict[str, list[EpisodeStart | StepLine | EpisodeEnd]] = {}
    for record in read_log(log):
        if episode is None or record.episode_id == episode or record.item_id == episode:
            grouped.setdefault(record.episode_id, []).append(record)
    if episode is not None and not grouped:
        raise ConfigError(f"no episode or item {episode!r} in {log}")
    return grouped


def replay(run_dir: str | Path, episode: str | None = None) -> list[EpisodeReplay]:
    """Re-step every (or one) episode of a run and compare with the log.

    Returns:
        One ``EpisodeReplay`` per episode, with the first divergence when there is one;
        ``duplicated`` (and not re-stepped) for an episode the log records more than once.

    Raises:
        ConfigError: the run's ``config.yaml`` or ``manifest.json`` is unreadable (named).
    """
    run_dir = Path(run_dir)
    run = read_run(run_dir)
    config = run.config
    if config is None:
        raise ConfigError(f"{run_dir} has no {run.config_path.name}: replay rebuilds the env from the run's config")
    items = load_config_items(config)
    judge_spec = (run.manifest.options.judge if run.manifest else None) or config.judge
    offline = get_benchmark(config.benchmark).judging.offline_judges
    results = []
    for episode_id, records in load_episodes(run_dir, episode).items():
        start = next((r for r in records if isinstance(r, EpisodeStart)), None)
        steps = [r for r in records if isinstance(r, StepLine) and r.agent == "player"]
        complete = any(isinstance(r, EpisodeEnd) for r in records)
        if start is None:
            continue
        duplicates = DuplicateEpisodes()
        for record in records:
            duplicates.add(record)
        if duplicates.episodes:
            results.append(
                EpisodeReplay(
                    episode_id=episode_id, item_id=start.item_id, steps=len(steps), complete=complete, duplicated=True
                )
            )
            continue
        judge = (
            offline[judge_spec]()
            if judge_spec in offline
            else LoggedJudge(judge_spec, [(s.judge_label, _logged_hint(s, run_dir)) for s in steps if s.judge_label])
        )
        spec = EpisodeSpec(episode_id=episode_id, item_id=start.item_id, repeat=start.repeat, seed=start.seed)
        session = EpisodeSession(LateralEnv(config, items=items, judge=judge), spec)  # re-stepped, not logged again
        obs, _ = session.start()
        divergence = None
        numbers = [line.step for line in steps]
        if numbers != list(range(1, len(numbers) + 1)):  # an edited log: a turn repeated, dropped or reordered
            divergence = Divergence(
                episode_id=episode_id,
                step=next((n for k, n in enumerate(numbers, start=1) if n != k), 0),
                field="step number",
                expected=", ".join(str(k) for k in range(1, len(numbers) + 1)),
                got=", ".join(str(n) for n in numbers),
            )
        elif _sha(obs["text"]) != start.observation.sha256:
            divergence = Divergence(
                episode_id=episode_id,
                step=0,
                field="first observation",
                expected=observation_text(start.observation, run_dir),
                got=obs["text"],
            )
        for line in steps:
            if divergence is not None or session.done:
                break
            obs, reward, terminated, truncated, _ = session.step(line.action)
            checks = [
                (
                    "observation",
                    _sha(obs["text"]) == line.reply.sha256,
                    observation_text(line.reply, run_dir),
                    obs["text"],
                ),
                ("reward", reward == line.reward, str(line.reward), str(reward)),
                ("terminated", terminated == line.terminated, str(line.terminated), str(terminated)),
                ("truncated", truncated == line.truncated, str(line.truncated), str(truncated)),
            ]
            for field, ok, expected, got in checks:
                if not ok:
                    divergence = Divergence(
                        episode_id=episode_id, step=line.step, field=field, expected=expected, got=got
                    )
                    break
        results.append(
            EpisodeReplay(
                episode_id=episode_id, item_id=start.item_id, steps=len(steps), complete=complete, divergence=divergence
            )
        )
    return results


def transcript(run_dir: str | Path, episode: str | None = None) -> str:
    """A readable transcript of the run's (or one) episodes: player, env/judge replies, rewards."""
    run_dir = Path(run_dir)
    out = []
    for episode_id, records in load_episodes(run_dir, episode).items():
        for record in records:
            if isinstance(record, EpisodeStart):
                out.append(
                    f"=== {episode_id} (item {record.item_id}, seed {record.seed}, player {record.player}, "
                    f"judge {record.judge}) ==="
                )
                out.append(observation_text(record.observation, run_dir))
            elif isinstance(record, StepLine):
                fields = {k: v for k, v in record.action.items() if k != "kind"}
                action = f"{record.action['kind']} {json.dumps(fields, ensure_ascii=False)}"
                out.append(f"--- step {record.step}")
                out.append(f"{record.agent}: {action}" + ("" if record.valid else "  [invalid]"))
                if record.llm and record.llm.text:
                    out.append(f"  (raw) {record.llm.text[:500]}")
                judge = f" [judge: {record.judge_label}]" if record.judge_label else ""
                out.append(f"env: {observation_text(record.reply, run_dir)}{judge}  (reward {record.reward:g})")
            else:
                status = f"ERROR {record.error}" if record.error else json.dumps(record.outcome, default=str)
                turns = (record.outcome or {}).get("turns", 0)
                out.append(f"=== end {episode_id}: reward {record.reward:g}, turns {turns}: {status}")
        out.append("")
    return "\n".join(out)
