"""What LateralGym's other layers use from the engine beyond its public API: plumbing, not for users.

The runner, the LLM client, the judges and a benchmark's LLM-facing modules import these; a user
writing a benchmark or running episodes needs ``lateralgym.envs`` (and ``lateralgym.envs.records``
for loaders) only.
"""

from typing import TYPE_CHECKING

from lateralgym.envs._lazy import lazy_callable, lazy_exports, resolved

if TYPE_CHECKING:
    from lateralgym.envs._benchmark import guard_recorded_imports, recorded_sources
    from lateralgym.envs._calls import REPLY_CHAR_CAPS, cap_text, capped, reply_cap, writable
    from lateralgym.envs._command_groups import TRAIN_DESCRIPTION, TRAIN_HELP, command_group
    from lateralgym.envs._config import MAX_SEED, check_hints, check_name
    from lateralgym.envs._errors import validation_message
    from lateralgym.envs._judging import extract_answer_label, normalise_answer
    from lateralgym.envs._reply_text import invalid as invalid_reply
    from lateralgym.envs._reply_text import json_objects
    from lateralgym.envs._resampled import any_drawn, mean_across, ratio, sum_across
    from lateralgym.envs._splits import hashed_split
    from lateralgym.envs._sync import background, run_sync
    from lateralgym.envs._text import FORMULA_STARTS, csv_cell, csv_text

_LAZY = {  # name -> the module that defines it, imported on first use
    **dict.fromkeys(("guard_recorded_imports", "recorded_sources"), "lateralgym.envs._benchmark"),
    **dict.fromkeys(("REPLY_CHAR_CAPS", "cap_text", "capped", "reply_cap", "writable"), "lateralgym.envs._calls"),
    **dict.fromkeys(("TRAIN_DESCRIPTION", "TRAIN_HELP", "command_group"), "lateralgym.envs._command_groups"),
    **dict.fromkeys(("MAX_SEED", "check_hints", "check_name"), "lateralgym.envs._config"),
    "validation_message": "lateralgym.envs._errors",
    **dict.fromkeys(("extract_answer_label", "normalise_answer"), "lateralgym.envs._judging"),
    "invalid_reply": "lateralgym.envs._reply_text:invalid",
    "json_objects": "lateralgym.envs._reply_text",
    **dict.fromkeys(("any_drawn", "mean_across", "ratio", "sum_across"), "lateralgym.envs._resampled"),
    "hashed_split": "lateralgym.envs._splits",
    **dict.fromkeys(("background", "run_sync"), "lateralgym.envs._sync"),
    **dict.fromkeys(("FORMULA_STARTS", "csv_cell", "csv_text"), "lateralgym.envs._text"),
}

if not TYPE_CHECKING:  # mypy reads the imports above: no fallback types a misspelt name as Any
    __getattr__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "guard_recorded_imports",
    "recorded_sources",
    "TRAIN_DESCRIPTION",
    "TRAIN_HELP",
    "command_group",
    "lazy_callable",
    "lazy_exports",
    "resolved",
    "FORMULA_STARTS",
    "MAX_SEED",
    "REPLY_CHAR_CAPS",
    "cap_text",
    "capped",
    "reply_cap",
    "any_drawn",
    "background",
    "check_hints",
    "check_name",
    "csv_cell",
    "csv_text",
    "extract_answer_label",
    "hashed_split",
    "invalid_reply",
    "json_objects",
    "mean_across",
    "normalise_answer",
    "ratio",
    "run_sync",
    "sum_across",
    "validation_message",
    "writable",
]
