"""Judges: the factory that builds any benchmark's judge from a spec, and what every LLM judge shares.

A benchmark's judges live in its folder: its offline judges (``Benchmark.judging.offline_judges`` /
``make_judge``: exact match, reference answers, ...), its LLM judge (``Benchmark.judging.llm_judge``,
imported only when a config asks for one) and a person judging in the terminal
(``Benchmark.judging.human_judge``). ``make_judge(spec, benchmark=...)`` builds the one a spec names.
``evaluate_judge`` measures any judge against people's labels (a benchmark's ``judgement_formats``;
``lateralgym judges eval``), ``cross_validate`` a learned judge on stories it was not trained on.
``LabelAsker`` and ``JUDGE_OPTIONS`` are the shared machinery of LLM
judges: a reply in a fixed vocabulary, re-asked when unclear, majority over samples. The LLM parts
import the openai SDK, so the SDK loads on the first request; each name loads its module on first use
(``_LAZY``).
"""

from typing import TYPE_CHECKING

from lateralgym.envs.support import lazy_exports

if TYPE_CHECKING:
    from lateralgym.envs import QA, Judge, JudgeReply
    from lateralgym.envs.support import normalise_answer
    from lateralgym.judges._asker import (
        ANSWER_REASK,
        JUDGE_OPTIONS,
        MAX_HISTORY,
        MAX_QUESTION_CHARS,
        LabelAsker,
        first_question,
        join_raw,
        judged_item,
        majority,
        quoted,
    )
    from lateralgym.judges._cards import JudgeCard, check_card, data_digest, make_card, read_card, write_card
    from lateralgym.judges._crossval import (
        DEFAULT_FOLDS,
        CrossValidationError,
        TrainableJudge,
        cross_validate,
        group_folds,
    )
    from lateralgym.judges._evaluation import (
        GroupAccuracy,
        JudgeEvaluation,
        cohen_kappa,
        evaluate_judge,
        evaluate_judge_async,
        evaluate_labels,
        score_labels,
    )
    from lateralgym.judges._factory import HUMAN, check_judge_spec, llm_judge_for, make_judge, offline_judges

_LAZY = {  # name -> the module that defines it, imported on first use
    **dict.fromkeys(("QA", "Judge", "JudgeReply"), "lateralgym.envs"),
    "normalise_answer": "lateralgym.envs.support",
    **dict.fromkeys(
        (
            "ANSWER_REASK",
            "JUDGE_OPTIONS",
            "MAX_HISTORY",
            "MAX_QUESTION_CHARS",
            "LabelAsker",
            "first_question",
            "join_raw",
            "judged_item",
            "majority",
            "quoted",
        ),
        "_asker",
    ),
    **dict.fromkeys(
        (
            "GroupAccuracy",
            "JudgeEvaluation",
            "cohen_kappa",
            "evaluate_judge",
            "evaluate_judge_async",
            "evaluate_labels",
            "score_labels",
        ),
        "_evaluation",
    ),
    **dict.fromkeys(
        ("DEFAULT_FOLDS", "CrossValidationError", "TrainableJudge", "cross_validate", "group_folds"), "_crossval"
    ),
    **dict.fromkeys(("JudgeCard", "check_card", "data_digest", "make_card", "read_card", "write_card"), "_cards"),
    **dict.fromkeys(("HUMAN", "check_judge_spec", "llm_judge_for", "make_judge", "offline_judges"), "_factory"),
}

if not TYPE_CHECKING:  # mypy reads the imports above: no fallback types a misspelt name as Any
    __getattr__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "ANSWER_REASK",
    "DEFAULT_FOLDS",
    "HUMAN",
    "CrossValidationError",
    "TrainableJudge",
    "cross_validate",
    "evaluate_labels",
    "group_folds",
    "GroupAccuracy",
    "JudgeCard",
    "JudgeEvaluation",
    "JUDGE_OPTIONS",
    "MAX_HISTORY",
    "MAX_QUESTION_CHARS",
    "LabelAsker",
    "check_card",
    "check_judge_spec",
    "data_digest",
    "cohen_kappa",
    "make_card",
    "read_card",
    "write_card",
    "QA",
    "Judge",
    "JudgeReply",
    "evaluate_judge",
    "evaluate_judge_async",
    "llm_judge_for",
    "make_judge",
    "normalise_answer",
    "first_question",
    "join_raw",
    "judged_item",
    "majority",
    "offline_judges",
    "quoted",
    "score_labels",
]
