"""A skip reason is read by anyone who runs the suite: it says what is missing in neutral words and
never names a folder on one developer's machine."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PRIVATE = ("/work", "/home", "/Users", "../shared", "shared/data")
SKIPS = {"skip", "skipif", "importorskip", "xfail"}


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _reasons(tree: ast.AST) -> list[ast.expr]:
    """The reason arguments of every skip-like call: positional (``pytest.skip(...)``) and ``reason=``."""
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node) in SKIPS:
            found += [k.value for k in node.keywords if k.arg in ("reason", "msg")]
            if _called(node) == "skip":
                found += node.args[:1]
    return found


def test_no_skip_reason_names_a_private_path() -> None:
    bad: list[str] = []
    for path in sorted(TESTS.rglob("*.py")):
        for reason in _reasons(ast.parse(path.read_text(encoding="utf-8"))):
            text = ast.unparse(reason)
            names = [n.id for n in ast.walk(reason) if isinstance(n, ast.Name)]
            # a literal path, or a path constant formatted in (SHARED_DATA, DATA_DIR, ...)
            if any(p in text for p in PRIVATE) or any(n.isupper() and ("DATA" in n or "DIR" in n) for n in names):
                bad.append(f"{path.relative_to(TESTS)}:{reason.lineno}: {text}")
    assert not bad, "skip reasons naming a path:\n" + "\n".join(bad)


def test_the_check_sees_a_formatted_path() -> None:
    tree = ast.parse('pytest.skip(f"samples are not at {SHARED_DATA}")\npytest.skip("not in ../shared/data")')
    assert len(_reasons(tree)) == 2
    assert all("SHARED_DATA" in ast.unparse(r) or "../shared" in ast.unparse(r) for r in _reasons(tree))
