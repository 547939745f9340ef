"""The GRPO recipe (docs/training.md) stays true: it parses, and every LateralGym name it uses exists.

It is not run (it needs TRL, vLLM and a GPU); its LateralGym half is exercised for real in
``test_rollout.py``.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

README = (Path(__file__).resolve().parents[2] / "docs" / "training.md").read_text(encoding="utf-8")


def _recipes() -> list[str]:
    return re.findall(r"```py\n(.*?)```", README, re.S)


def test_the_grpo_recipe_parses_and_names_only_what_lateralgym_has() -> None:
    (recipe,) = _recipes()
    tree = ast.parse(recipe)
    imported = [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    ours = [node for node in imported if (node.module or "").startswith("lateralgym")]
    assert ours, "the recipe should use LateralGym's adapter"
    for node in ours:
        module = importlib.import_module(str(node.module))
        for alias in node.names:
            assert hasattr(module, alias.name), f"{node.module} has no {alias.name}"
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
    chat_env = importlib.import_module("lateralgym.integrations").ChatEnv
    for name in ("dataset", "start", "step", "reward"):
        assert name in used and callable(getattr(chat_env, name))
    assert {"GRPOTrainer", "GRPOConfig"} <= {a.name for node in imported for a in node.names}
