"""Tiny hand-made items for unit tests that must not depend on the shipped sample data."""

from __future__ import annotations

from lateralgym.envs.benchmarks.brainteaser import MCQPuzzle
from lateralgym.envs.benchmarks.creativity import (
    Affordance,
    CreativityTask,
    Entity,
    GoldAnswer,
    Part,
    PhysicalAttributes,
    ReferenceSolution,
    SamplingFactors,
    SceneItem,
    StateAttributes,
)
from lateralgym.envs.benchmarks.splat import SituationPuzzle

PRY = Affordance(action="pry up a tight lid", category="pry", use_condition="slide the edge under the rim", level=2)


def _part(name: str, material: str, weight: str, moisture: str, *affs: Affordance) -> Part:
    return Part(
        name=name,
        physical=PhysicalAttributes(
            material=material, shape="flat", size="palm-sized", weight=weight, rigidity="rigid"
        ),
        state=StateAttributes(
            visibility="visible", accessibility="free", moisture=moisture, temperature="room temperature"
        ),
        affordances=affs,
    )


SPOON = Entity(
    id="kitchen/steel_soup_spoon/1",
    name="steel soup spoon",
    scene="kitchen",
    parts=(_part("bowl", "stainless steel", "light", "dry"), _part("handle", "stainless steel", "light", "dry", PRY)),
)
TOWEL = Entity(
    id="kitchen/cotton_tea_towel/1",
    name="cotton tea towel",
    scene="kitchen",
    parts=(_part("cloth_body", "woven cotton", "light", "damp"), _part("hanging_loop", "cotton tape", "light", "dry")),
)
BOARD = Entity(
    id="kitchen/bamboo_cutting_board/1",
    name="bamboo cutting board",
    scene="kitchen",
    parts=(_part("board_face", "bamboo", "heavy", "dry"), _part("juice_groove", "bamboo", "heavy", "wet")),
)

PAINT_TASK = CreativityTask(
    id="t-paint-lid",
    scene="kitchen",
    task="The lid of a paint tin is stuck shut and my fingernails cannot lift it. What can I use?",
    environment="I am in the kitchen. Around me there is the steel soup spoon, the cotton tea towel "
    "and the bamboo cutting board.",
    entities=(TOWEL, SPOON, BOARD),
    items=(SceneItem(name="paint tin", description="a small tin with a tight metal lid", interactable=True),),
    gold=GoldAnswer(entity="steel soup spoon", part="handle", affordance=PRY),
    solution=ReferenceSolution(
        prepare_recipient="Set the tin on a steady counter so it cannot slide around while working.",
        prepare_use_condition="Hold the spoon by its bowl so the flat end of the handle points down.",
        prepare_environment_condition="Lay newspaper down to catch drips of wet paint.",
        apply_affordance="Wedge the flat handle tip under the lid rim and lever it upward a little at a time "
        "all round.",
    ),
    factors=SamplingFactors(cluster_size_range=(1, 9), gold_level=2, distractor_count=2, distractor_similarity="mixed"),
)

PUZZLES = (
    MCQPuzzle(
        id="SP-1",
        group_id="SP-1",
        kind="sentence",
        variant="original",
        question="A pilot flew for hours without landing yet never left the ground. How?",
        choices=("He flew a simulator.", "He slept.", "The plane was broken.", "None of above."),
        label=0,
    ),
    MCQPuzzle(
        id="SP-1_SR",
        group_id="SP-1",
        kind="sentence",
        variant="semantic",
        question="Without ever leaving the ground, a pilot flew for hours. How?",
        choices=("The plane was broken.", "He flew a simulator.", "He slept.", "None of above."),
        label=1,
    ),
    MCQPuzzle(
        id="SP-1_CR",
        group_id="SP-1",
        kind="sentence",
        variant="context",
        question="A racing driver won a race without ever sitting in a car. How?",
        choices=("He drove fast.", "He cheated.", "He was a passenger.", "None of above."),
        label=3,
    ),
)

STORY = SituationPuzzle(
    id="sp-test-1",
    title="The Quiet Concert",
    story="Hundreds of people watched the violinist play all evening, yet nobody heard a single note.",
    answer="The concert was a silent film screening. The violinist was an actor on the cinema screen, so no "
    "sound came from the instrument.",
    difficulty=2,
    clues=("It was a silent film.", "The violinist was an actor on screen.", "The audience sat in a cinema."),
)
