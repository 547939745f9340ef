"""What the player of static CreativityBench sees, pinned: speeding up ``reset`` must not change a byte.

The static (and CoT) episode is one reset and one commit, so its observation is rendered, cached and
reused across episodes; these tests hold the text to a literal and to the plain rendering of the task.
"""

from __future__ import annotations

from typing import Any

import pytest
from _items import PAINT_TASK

from lateralgym.envs import EpisodeConfig, load_sample_items, sanitise
from lateralgym.envs.benchmarks.creativity import CreativityEnv, CreativityTask

PAINT_STATIC_SEED_0 = """\
TASK: The lid of a paint tin is stuck shut and my fingernails cannot lift it. What can I use?
ENVIRONMENT: I am in the kitchen. Around me there is the steel soup spoon, the cotton tea towel and the bamboo \
cutting board.
ENTITIES (parts with physical and state attributes):
bamboo cutting board:
  - board_face: physical — material: bamboo; shape: flat; size: palm-sized; weight: heavy; rigidity: rigid; \
state — visibility: visible; accessibility: free; moisture: dry; temperature: room temperature
  - juice_groove: physical — material: bamboo; shape: flat; size: palm-sized; weight: heavy; rigidity: rigid; \
state — visibility: visible; accessibility: free; moisture: wet; temperature: room temperature
cotton tea towel:
  - cloth_body: physical — material: woven cotton; shape: flat; size: palm-sized; weight: light; rigidity: rigid; \
state — visibility: visible; accessibility: free; moisture: damp; temperature: room temperature
  - hanging_loop: physical — material: cotton tape; shape: flat; size: palm-sized; weight: light; rigidity: rigid; \
state — visibility: visible; accessibility: free; moisture: dry; temperature: room temperature
steel soup spoon:
  - bowl: physical — material: stainless steel; shape: flat; size: palm-sized; weight: light; rigidity: rigid; \
state — visibility: visible; accessibility: free; moisture: dry; temperature: room temperature
  - handle: physical — material: stainless steel; shape: flat; size: palm-sized; weight: light; rigidity: rigid; \
state — visibility: visible; accessibility: free; moisture: dry; temperature: room temperature
OTHER ITEMS: paint tin (a small tin with a tight metal lid)
Allowed actions: commit: <entity> | <part> | <how you would use it>"""


def plain_brief(task: CreativityTask, order: list[str], usage: str) -> str:
    """The static opening as the paper's static prompt lays it out, rendered from the task with no cache."""
    by_name = {e.name: e for e in task.entities}
    lines = [f"TASK: {task.task}", f"ENVIRONMENT: {task.environment}"]
    lines.append("ENTITIES (parts with physical and state attributes):")
    lines += [by_name[name].describe() for name in order]
    if task.items:
        items = [f"{i.name} ({i.description})" if i.description else i.name for i in task.items]
        lines.append("OTHER ITEMS: " + "; ".join(items))
    return "\n".join([*lines, usage])


def plain_revealed(task: CreativityTask) -> dict[str, dict[str, str]]:
    return {e.name: {p.name: p.render() for p in e.parts} for e in task.entities}


@pytest.mark.parametrize("name", ["creativity-static", "creativity-cot"])
def test_the_static_opening_and_its_answer_are_pinned(name: str) -> None:
    env = CreativityEnv(EpisodeConfig.named(name), items=[PAINT_TASK])
    for _ in range(3):  # the first episode renders; later ones reuse what it rendered
        obs, info = env.reset(seed=0)
        assert obs["text"] == PAINT_STATIC_SEED_0
        assert obs["turn"] == 0 and obs["entity_mask"].tolist()[:4] == [1, 1, 1, 0]
        assert info["public"]["revealed"] == plain_revealed(PAINT_TASK)
        obs, reward, terminated, truncated, info = env.step("commit: steel soup spoon | handle | lever the lid")
        assert obs["text"] == "Answer recorded. Result: correct: the entity and the part fit the task."
        assert (reward, terminated, truncated) == (1.0, True, False)
        outcome = info["outcome"]
        assert outcome["gold_correct"] and outcome["entity_count"] == 3 and outcome["turns"] == 1
        assert outcome["answer"] == {"entity": "steel soup spoon", "part": "handle", "how_to_use": "lever the lid"}
        assert outcome["factors"]["distractor_count"] == 2 and outcome["scene"] == "kitchen"


def _episode(env: CreativityEnv, seed: int, index: int) -> tuple[str, dict[str, Any], str]:
    obs, info = env.reset(seed=seed, options={"index": index})
    public = info["public"]
    reply = env.step(f"commit: {public['entities'][0]} | nothing | guess")[0]["text"]
    return obs["text"], public, reply


def test_every_static_episode_shows_the_plain_rendering_of_its_task() -> None:
    """Over sample tasks and seeds (so entity orders differ), one reused env and fresh envs on freshly
    loaded copies of the tasks show exactly the task's plain rendering, in the episode's entity order."""
    tasks = sorted(load_sample_items("creativity"), key=lambda t: t.id)[::25]
    config = EpisodeConfig.named("creativity-static")
    usage = "Allowed actions: commit: <entity> | <part> | <how you would use it>"
    reused = CreativityEnv(config, items=tasks)
    copies = [CreativityTask.model_validate(t.model_dump()) for t in tasks]
    fresh = CreativityEnv(config, items=copies)
    for seed in range(3):
        for index, task in enumerate(tasks):
            text, public, reply = _episode(reused, seed, index)
            assert text == plain_brief(task, public["entities"], usage)
            assert sorted(public["entities"]) == sorted(e.name for e in task.entities)
            assert public["revealed"] == plain_revealed(task)
            assert _episode(fresh, seed, index) == (text, public, reply)
            assert reply.startswith("Answer recorded. Result: ")


def test_a_changed_task_under_the_same_id_shows_its_own_text() -> None:
    """Nothing is remembered by task id: another file's task with the same id renders afresh."""
    towel, spoon, board = PAINT_TASK.entities
    assert spoon.name == "steel soup spoon" and spoon.parts[0].name == "bowl"
    bowl = spoon.parts[0]
    painted = bowl.model_copy(update={"physical": bowl.physical.model_copy(update={"material": "painted tin"})})
    changed_spoon = spoon.model_copy(update={"parts": (painted, *spoon.parts[1:])})
    changed = PAINT_TASK.model_copy(
        update={"task": "My paint tin will not open.", "entities": (towel, changed_spoon, board)}
    )
    config = EpisodeConfig.named("creativity-static").with_options(shuffle_entities=False)
    original = CreativityEnv(config, items=[PAINT_TASK]).reset(seed=0)[0]["text"]
    text = CreativityEnv(config, items=[changed]).reset(seed=0)[0]["text"]
    assert text.startswith("TASK: My paint tin will not open.\n") and "material: painted tin" in text
    assert "material: painted tin" not in original
    assert CreativityEnv(config, items=[PAINT_TASK]).reset(seed=0)[0]["text"] == original


def test_a_task_with_control_characters_is_still_sanitised() -> None:
    """The opening is unscanned only when every piece of it is known clean: a task carrying a carriage
    return, an escape or a lone surrogate shows exactly what ``sanitise`` makes of its plain rendering."""
    towel, spoon, board = PAINT_TASK.entities
    bowl = spoon.parts[0]
    odd = bowl.model_copy(update={"physical": bowl.physical.model_copy(update={"material": "steel\x1b[31m\ud800"})})
    task = PAINT_TASK.model_copy(
        update={
            "environment": "I am in the kitchen.\r\nIt is late.",
            "entities": (towel, spoon.model_copy(update={"parts": (odd, *spoon.parts[1:])}), board),
        }
    )
    config = EpisodeConfig.named("creativity-static").with_options(shuffle_entities=False)
    text = CreativityEnv(config, items=[task]).reset(seed=0)[0]["text"]
    usage = "Allowed actions: commit: <entity> | <part> | <how you would use it>"
    assert text == sanitise(plain_brief(task, [e.name for e in task.entities], usage))
    assert "I am in the kitchen.\nIt is late." in text and "material: steel[31m\ufffd;" in text


def test_step_records_read_at_any_time_match_the_steps() -> None:
    """Records are built when read: read between steps or only at the end, they are the same, in order."""
    config = EpisodeConfig.named("creativity-interactive")
    actions = [
        "inspect: steel soup spoon",
        "ask: is it heavy?",
        "inspect: paint tin",
        "commit: steel soup spoon | handle",
    ]
    seen: list[tuple[int, str, float]] = []
    env = CreativityEnv(config, items=[PAINT_TASK])
    env.reset(seed=0)
    for n, action in enumerate(actions, start=1):
        obs, reward, *_ = env.step(action)
        seen.append((n, obs["text"], reward))
        assert [(r.turn, r.message, r.reward) for r in env.records] == seen
    later = CreativityEnv(config, items=[PAINT_TASK])
    later.reset(seed=0)
    for action in actions:
        later.step(action)
    assert later.records == env.records and later.records[1].valid is False  # ask: not in the paper's protocol
    assert later.records[-1].action == {"kind": "commit", "entity": "steel soup spoon", "part": "handle"}
    later.reset(seed=1)
    assert later.records == []
