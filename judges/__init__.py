"""Judges: exact match, the KB judge (CreativityBench questions), the reference judge (SPLAT), LLM
judges (SPLAT protocol, CreativityBench rubric) and judge/human agreement tooling.

``make_judge(spec)`` builds one from the spec a config names. The LLM judge modules import the
openai SDK, so they load on first use.
"""

from typing import Any

from lateralgym.envs._judging import QA, Judge, JudgeReply, normalise_answer
from lateralgym.judges._exact import ExactMatchJudge, grade_choice, grade_creativity
from lateralgym.judges._factory import OFFLINE_JUDGES, LLMJudge, make_judge
from lateralgym.judges._kb import KBJudge
from lateralgym.judges._reference import ReferenceJudge, key_facts
from lateralgym.judges._seat import JudgeSeat

_LAZY = {
    "LLMSplatJudge": "lateralgym.judges._llm_splat",
    "LLMCreativityJudge": "lateralgym.judges._llm_creativity",
    "FAILURE_CATEGORIES": "lateralgym.judges._llm_creativity",
    "RUBRIC_CRITERIA": "lateralgym.judges._llm_creativity",
    "AgreementReport": "lateralgym.judges._agreement",
    "AgreementError": "lateralgym.judges._agreement",
    "agreement_report": "lateralgym.judges._agreement",
    "load_human_labels": "lateralgym.judges._agreement",
    "final_answer_agreement": "lateralgym.judges._agreement",
    "reasoning_agreement": "lateralgym.judges._agreement",
    "cohen_kappa": "lateralgym.judges._agreement",
    "records_from_history": "lateralgym.judges._agreement",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'lateralgym.judges' has no attribute {name!r}")


__all__ = [
    *_LAZY,
    "OFFLINE_JUDGES",
    "QA",
    "ExactMatchJudge",
    "Judge",
    "JudgeReply",
    "JudgeSeat",
    "KBJudge",
    "LLMJudge",
    "ReferenceJudge",
    "grade_choice",
    "grade_creativity",
    "key_facts",
    "make_judge",
    "normalise_answer",
]
