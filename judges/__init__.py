"""Judges: the factory that builds any judge from a spec, LLM judges (SPLAT protocol, CreativityBench
rubric), ``JudgeSeat`` for the PettingZoo judge agent, and judge/human agreement tooling.

Offline judges belong to their benchmarks (``Benchmark.offline_judges``: exact match, the KB
judge, the reference judge) and are re-exported here; ``HumanJudge`` is a person judging SPLAT in
the terminal (``--judge human``). ``make_judge(spec, benchmark=...)`` builds
one from the spec a config names. The LLM judge modules import the openai SDK, so they load on
first use.
"""

from typing import Any

from lateralgym.envs._judging import QA, Judge, JudgeReply, normalise_answer
from lateralgym.envs.benchmarks._mcq import ExactChoiceJudge, grade_choice
from lateralgym.envs.benchmarks.creativity._judges import ExactMatchJudge, KBJudge, grade_creativity
from lateralgym.envs.benchmarks.splat._judges import ReferenceJudge, key_facts
from lateralgym.judges._factory import llm_judge_for, make_judge, offline_judges
from lateralgym.judges._human import HumanJudge
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
    "AgreementRow": "lateralgym.judges._agreement_table",
    "agreement_table": "lateralgym.judges._agreement_table",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'lateralgym.judges' has no attribute {name!r}")


__all__ = [
    *_LAZY,
    "QA",
    "ExactChoiceJudge",
    "ExactMatchJudge",
    "HumanJudge",
    "Judge",
    "JudgeReply",
    "JudgeSeat",
    "KBJudge",
    "ReferenceJudge",
    "grade_choice",
    "grade_creativity",
    "key_facts",
    "llm_judge_for",
    "make_judge",
    "normalise_answer",
    "offline_judges",
]
