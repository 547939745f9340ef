"""What LateralGym's other layers use from the engine beyond its public API: plumbing, not for users.

The runner, the LLM client, the judges and a benchmark's LLM-facing modules import these; a user
writing a benchmark or running episodes needs ``lateralgym.envs`` (and ``lateralgym.envs.records``
for loaders) only.
"""

from lateralgym.envs._benchmark import guard_recorded_imports, recorded_sources
from lateralgym.envs._calls import REPLY_CHAR_CAPS, cap_text, capped, reply_cap, writable
from lateralgym.envs._command_groups import TRAIN_DESCRIPTION, TRAIN_HELP, command_group
from lateralgym.envs._config import MAX_SEED, check_hints, check_name
from lateralgym.envs._errors import validation_message
from lateralgym.envs._judging import extract_answer_label, normalise_answer
from lateralgym.envs._lazy import lazy_exports
from lateralgym.envs._reply_text import invalid as invalid_reply
from lateralgym.envs._reply_text import json_objects
from lateralgym.envs._resampled import any_drawn, mean_across, ratio, sum_across
from lateralgym.envs._splits import hashed_split
from lateralgym.envs._sync import background, run_sync
from lateralgym.envs._text import FORMULA_STARTS, csv_cell, csv_text

__all__ = [
    "guard_recorded_imports",
    "recorded_sources",
    "TRAIN_DESCRIPTION",
    "TRAIN_HELP",
    "command_group",
    "lazy_exports",
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
