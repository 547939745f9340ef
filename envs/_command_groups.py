"""What a benchmark's own commands share with the core's: the ``train`` group's words and the one function
that makes a command group once for whoever adds to it first. Below the benchmarks, so their commands
modules import nothing from the command layer; it parses no argument (``sub`` is argparse's sub-command
collection, passed in)."""

from __future__ import annotations

from typing import Any

__all__ = ["TRAIN_DESCRIPTION", "TRAIN_HELP", "command_group"]

TRAIN_HELP = "train a policy or an LLM on a benchmark's tasks, and test it on held-out ones"
TRAIN_DESCRIPTION = (
    "Train on a config's train items and evaluate on its held-out test items. Algorithms: sft and grpo (an LLM, "
    "any benchmark; the grpo extra) and each benchmark's own (ppo: a MaskablePPO policy; the rl extra)."
)


def command_group(sub: Any, name: str, *, help: str, description: str) -> Any:
    """The sub-commands of the group ``name`` (``lateralgym train ...``), made by the first module that
    asks, so the core and a benchmark can each add theirs (``train grpo``, ``train ppo``)."""
    groups: dict[str, Any] = sub.__dict__.setdefault("_lateralgym_groups", {})
    if name not in groups:
        parser = sub.add_parser(name, help=help, description=description)
        groups[name] = parser.add_subparsers(dest=f"{name}_command", metavar="ACTION", required=True)
    return groups[name]
