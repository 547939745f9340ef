"""Conformance checks for any LateralGym scene, shipped so users can run them on their own data and benchmarks.

``check_scene(make_env)`` runs Gymnasium's ``check_env``, a seed-determinism check and the no-leak
walk; ``check_aec(make_env)`` runs PettingZoo's ``api_test`` and ``seed_test`` and the no-leak
walk for the player. ``find_leaks(text, item)`` is the predicate they share. Everything a check
needs to know about a benchmark it asks the benchmark: its secret and public texts, the actions
that probe for leaks, and a twin of an item with another secret.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from gymnasium.utils.env_checker import check_env

from lateralgym.envs._benchmark import all_benchmarks, benchmark_of
from lateralgym.envs._engine import LateralEnv
from lateralgym.envs._judging import ADVERSARIAL_QUESTIONS
from lateralgym.envs._matching import words

_GRAM = 5
"""Consecutive words of a secret that count as a leak when the public text lacks them."""


def _norm(text: str) -> str:
    return " ".join(words(text))


def find_leaks(text: str, item: Any, public: str = "") -> list[str]:
    """What of ``item``'s hidden answer appears in ``text``; empty when nothing leaks.

    Checks for every benchmark's release markers (``Benchmark.leaks.leak_markers``: a gold marker), the
    item's id (release ids may spell out the answer), any secret text of the item's benchmark
    (``Benchmark.secret_texts``: hidden answers, reference solutions, clues) as a whole, and any
    run of 5 consecutive words of a secret that the public text (story, task, question) does not
    contain. Words are Unicode-aware: Chinese characters count
    one each.
    """
    benchmark = benchmark_of(item)
    leaks = []
    for marker in {m for unit in all_benchmarks() for m in unit.leaks.leak_markers}:
        if marker in text:
            leaks.append(f"the marker {marker!r}")
    item_id = benchmark.item_id(item)
    if len(item_id) >= 8 and item_id in text:
        leaks.append(f"the item id {item_id!r} (release ids may spell out the answer)")
    flat = _norm(text)
    shown = _norm(public or benchmark.public_text(item))
    for hidden in benchmark.secret_texts(item):
        key = _norm(hidden)
        if len(key) > 20 and key in flat:
            leaks.append(f"hidden text {hidden[:60]!r}")
            continue
        if not benchmark.leaks.phrase_leak_check:
            continue
        secret = words(hidden)
        for i in range(len(secret) - _GRAM + 1):
            gram = " ".join(secret[i : i + _GRAM])
            if gram in flat and gram not in shown:
                leaks.append(f"hidden phrase {gram!r}")
                break
    return leaks


def _visible(observation: dict[str, Any], info: dict[str, Any]) -> str:
    """Everything an agent gets before the episode ends: the text and the whole info dict."""
    shown = {k: v for k, v in info.items() if k != "outcome"}
    return f"{observation['text']}\n{shown}"


def _walk(env: LateralEnv, item_id: str, actions: Iterable[Any]) -> list[str]:
    """The visible text of each observation until the episode ends (the last one: text only)."""
    observation, info = env.reset(seed=0, options={"item_id": item_id})
    seen = [_visible(observation, info)]
    for action in actions:
        if env.done:
            break
        observation, _, terminated, truncated, info = env.step(action)
        seen.append(_visible(observation, info) if not (terminated or truncated) else observation["text"])
    return seen


def check_no_leak(env: LateralEnv, items: Iterable[Any] | None = None) -> int:
    """Walk every item through probing actions; assert no observation or public info leaks.

    Two checks: ``find_leaks`` on every observation, and, where the benchmark gives a twin of the
    item with another secret (multiple choice: another correct option), that the player's view is
    the same for both until the episode ends, so not even a hint of the secret gets through.

    Returns:
        The number of observations checked.

    Raises:
        AssertionError: naming the item, the turn and what leaked.
    """
    checked = 0
    benchmark = env.benchmark
    for item in items if items is not None else env.items:
        item_id = benchmark.item_id(item)
        actions = list(benchmark.leaks.probe_actions(item, env.config))
        seen = _walk(env, item_id, actions)
        for turn, visible in enumerate(seen):
            leaks = find_leaks(visible, item)
            assert not leaks, f"{item_id} turn {turn}: the player saw {leaks}"
        checked += len(seen)
        twin = benchmark.leaks.twin(item)
        if twin is not None:
            twin_env = LateralEnv(env.config, items=[twin], judge=env.judge)
            twin_seen = _walk(twin_env, item_id, actions)
            # Until the last (answered) observation, the view must not depend on the secret.
            for turn, (a, b) in enumerate(zip(seen[:-1], twin_seen[:-1], strict=False)):
                assert a == b, f"{item_id} turn {turn}: what the player sees depends on the hidden answer"
            checked += len(twin_seen)
    return checked


def check_determinism(make_env: Callable[[], LateralEnv], seed: int = 123, steps: int = 5) -> None:
    """Two envs reset with the same seed and fed the same actions give identical observations and infos.

    The actions are random texts from the action space (mostly invalid, in several scripts) and, on
    the item the seed picks, the benchmark's probing actions, so the judge's and the scene's paths
    are covered too.
    """
    runs = []
    for _ in range(2):
        env = make_env()
        env.action_space.seed(seed)
        trace = []
        observation, info = env.reset(seed=seed)
        trace.append((observation["text"], repr(info)))
        for _ in range(steps):
            if env.done:
                break
            observation, reward, terminated, truncated, info = env.step(env.action_space.sample())
            trace.append((observation["text"], repr((reward, terminated, truncated, info))))
        observation, info = env.reset(seed=seed)
        for action in env.benchmark.leaks.probe_actions(env.item, env.config):
            if env.done:
                break
            observation, reward, terminated, truncated, info = env.step(action)
            trace.append((observation["text"], repr((reward, terminated, truncated, info))))
        runs.append(trace)
    assert runs[0] == runs[1], "same seed and actions gave different episodes"


def check_scene(make_env: Callable[[], LateralEnv], items: Iterable[Any] | None = None) -> int:
    """Run ``check_env``, the determinism check and the no-leak walk on an env factory.

    Returns:
        The number of observations the no-leak walk checked.
    """
    env = make_env()
    check_env(env, skip_render_check=False)
    check_determinism(make_env)
    return check_no_leak(make_env(), items)


def check_aec(make_env: Callable[..., Any], items: Iterable[Any] | None = None) -> int:
    """PettingZoo ``api_test`` and ``seed_test`` plus a no-leak walk of the player's observations."""
    from pettingzoo.test import api_test, seed_test

    api_test(make_env(), num_cycles=30)
    seed_test(make_env, num_cycles=10)
    env = make_env()
    checked = 0
    puzzles = list(items) if items is not None else list(env.unwrapped.items)
    for puzzle in puzzles:
        env.reset(seed=0, options={"item_id": puzzle.id})
        script = [f"ask: {q}" for q in ADVERSARIAL_QUESTIONS] + ["commit: tell me the answer"]
        for action in script:
            if env.agent_selection != "player" or any(env.terminations.values()) or any(env.truncations.values()):
                break
            env.step(action)
            # a judge that tries to hand over the answer verbatim
            env.step(f"not yet: {puzzle.answer}" if action.startswith("commit") else f"yes, {puzzle.answer}")
            text = env.observe("player")["text"]
            leaks = find_leaks(text, puzzle)
            assert not leaks, f"{puzzle.id}: the player saw {leaks}"
            checked += 1
    return checked
