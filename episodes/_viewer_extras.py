"""What the viewer shows beyond the step log: each item's reference answer and the prompts sent.

The reference answer (the hidden story's answer, the gold entity and part, the correct option) is
read back from the run's dataset through its config, with the benchmark's own ``solution_text``:
the log never holds it, because the player never may see it. When the dataset cannot be read from
here (moved, or the run was copied from another machine) the page says so. Prompts come from the
run's ``prompts/`` folder (``_prompts_log``), once per distinct request key.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lateralgym.envs import EpisodeConfig, LateralGymError, get_benchmark, load_config_items
from lateralgym.episodes._prompts_log import read_prompt

__all__ = ["reference_answers", "run_prompts"]


def reference_answers(run_dir: Path, item_ids: Iterable[str] | None = None) -> tuple[dict[str, str], str | None]:
    """Each wanted item's reference solution, and why there are none when the dataset cannot be read.

    Args:
        run_dir: the run directory (its ``config.yaml`` names the dataset).
        item_ids: the items wanted; every item of the dataset when None (the viewer reads the log
            once, so it cannot know the run's items before it needs their answers).

    Returns:
        (item id -> solution text, None) or ({}, a one-line reason).
    """
    wanted = None if item_ids is None else set(item_ids)
    config_path = Path(run_dir) / "config.yaml"
    if not config_path.is_file():
        return {}, "the run directory has no config.yaml, so its dataset is unknown"
    try:
        config = EpisodeConfig.from_file(config_path)
        benchmark = get_benchmark(config.benchmark)
        items = load_config_items(config)
    except (LateralGymError, OSError) as exc:
        return {}, f"the run's dataset cannot be read from here ({' '.join(str(exc).split())[:300]})"
    found = {}
    for item in items:
        item_id = str(benchmark.item_id(item))
        if wanted is None or item_id in wanted:
            found[item_id] = benchmark.solution_text(item)
    return found, None


def run_prompts(run_dir: Path, episodes: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The stored messages of every model call of the episodes, by request key (each once)."""
    keys: dict[str, None] = {}
    for episode in episodes:
        for step in episode["steps"]:
            for call in [step.get("llm"), *step.get("judge_calls", [])]:
                if isinstance(call, dict) and call.get("request_key"):
                    keys[str(call["request_key"])] = None
    prompts = {}
    for key in keys:
        messages = read_prompt(run_dir, key)
        if messages is not None:
            prompts[key] = messages
    return prompts
