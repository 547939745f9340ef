"""Judges: exact match, the KB judge (CreativityBench questions) and the reference judge (SPLAT).

``make_judge(spec)`` builds one from the spec a config names.
"""

from lateralgym.envs._judging import QA, Judge, JudgeReply, normalise_answer
from lateralgym.judges._exact import ExactMatchJudge, grade_choice, grade_creativity
from lateralgym.judges._factory import OFFLINE_JUDGES, make_judge
from lateralgym.judges._kb import KBJudge
from lateralgym.judges._reference import ReferenceJudge, key_facts

__all__ = [
    "OFFLINE_JUDGES",
    "QA",
    "ExactMatchJudge",
    "Judge",
    "JudgeReply",
    "KBJudge",
    "ReferenceJudge",
    "grade_choice",
    "grade_creativity",
    "key_facts",
    "make_judge",
    "normalise_answer",
]
