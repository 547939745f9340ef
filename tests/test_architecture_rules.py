"""The shape the code keeps (README, Architecture): checked on the source, so a change that breaks it fails here.

* Each benchmark owns everything named after it: outside ``envs/benchmarks/`` (and the shipped
  configs and sample data) no file of the package names a built-in benchmark.
* Arguments are parsed only in the command layer: ``lateralgym/cli.py``, ``lateralgym/commands/``
  and a benchmark's own ``commands`` module.
* What crosses packages goes through public names: no package imports another package's private
  module (a benchmark's folder may use the engine's, whose package it is part of).
* Layers point one way, bottom up: engine (``envs`` without its benchmarks) < agents < judges, databuild <
  benchmarks < episodes < integrations < the CLI (``lateralgym``). No module imports a higher layer at
  module level; inside functions only the two the README names (``LAZY_UPWARD``).
* One object drives an episode: the one module that writes step lines (``StepLine``) is the one
  that steps an env for them, ``EpisodeSession``; every driver (runner, server, trainers) goes through it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("lateralgym", "envs", "agents", "judges", "episodes", "integrations", "databuild", "lateralgym_env")
BENCHMARK_NAMES = re.compile(
    r"splat|brainteaser|creativ|riddle|arbench|ar-bench|macgyver|lateval|turtle", re.IGNORECASE
)


def package_files(suffixes: tuple[str, ...] = (".py",)) -> list[Path]:
    files = []
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*"):
            if path.suffix in suffixes and "__pycache__" not in path.parts:
                files.append(path)
    return files


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def in_benchmark_folder(path: Path) -> bool:
    return relative(path).startswith("envs/benchmarks/")


def test_no_file_outside_a_benchmark_folder_names_a_benchmark() -> None:
    offenders = []
    for path in package_files((".py", ".html", ".md", ".toml", ".txt")):
        if in_benchmark_folder(path):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if BENCHMARK_NAMES.search(line):
                offenders.append(f"{relative(path)}:{number}: {line.strip()[:100]}")
    assert not offenders, "a benchmark is named outside its folder:\n" + "\n".join(offenders)


def _imports(path: Path) -> list[str]:
    modules = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.append(node.module)
        elif isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
    return modules


def test_only_the_command_layer_parses_arguments() -> None:
    allowed = re.compile(r"^(lateralgym/cli\.py|lateralgym/commands/|envs/benchmarks/[^/]+/commands(\.py|/))")
    offenders = [
        relative(path) for path in package_files() if "argparse" in _imports(path) and not allowed.match(relative(path))
    ]
    assert not offenders, f"argparse below the command layer: {offenders}"


def _owner(module: str) -> tuple[str, list[str]]:
    """(the package a ``lateralgym.*`` module belongs to, the rest of its path)."""
    parts = module.split(".")[1:]
    if parts[:2] == ["envs", "benchmarks"] and len(parts) > 2:
        if parts[2].startswith("_"):  # what the benchmarks share (_mcq, _mcq_reply): the benchmarks' own
            return "envs.benchmarks", parts[2:]
        return "envs.benchmarks." + parts[2], parts[3:]
    return parts[0], parts[1:]


def _package_of(path: Path) -> str:
    parts = Path(relative(path)).parts
    if parts[:2] == ("envs", "benchmarks") and len(parts) > 2:
        return "envs.benchmarks." + parts[2].removesuffix(".py")
    return parts[0] if parts[0] != "lateralgym" or len(parts) == 1 else "lateralgym"


def test_no_package_imports_another_packages_private_module() -> None:
    offenders = []
    for path in package_files():
        source = _package_of(path)
        for module in _imports(path):
            if not module.startswith("lateralgym."):
                continue
            target, rest = _owner(module)
            if target in ("commands",) or not any(part.startswith("_") for part in rest):
                continue  # lateralgym.commands is the lateralgym package's own
            benchmarks = source.startswith("envs.benchmarks.")
            inside = target == source or (benchmarks and target in ("envs", "envs.benchmarks"))
            if not inside:
                offenders.append(f"{relative(path)} imports {module}")
    assert not offenders, "private modules imported across packages:\n" + "\n".join(sorted(set(offenders)))


def _calls(tree: ast.AST) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)]


def test_one_place_steps_an_env_and_writes_a_step_line() -> None:
    writes, both = [], []
    for path in package_files():
        calls = _calls(ast.parse(path.read_text(encoding="utf-8")))
        names = {c.func.id for c in calls if isinstance(c.func, ast.Name)}
        attributes = {c.func.attr for c in calls if isinstance(c.func, ast.Attribute)}
        if "StepLine" in names:
            writes.append(relative(path))
            if attributes & {"step", "astep"}:
                both.append(relative(path))
    assert writes == ["episodes/_session.py"] and both == writes, (writes, both)


LAYERS = {"engine": 0, "agents": 1, "judges": 2, "databuild": 2, "benchmarks": 3, "episodes": 4, "integrations": 5}
CLI = 6
LAZY_UPWARD = {
    ("envs/_engine.py", "lateralgym.judges"),  # LateralEnv builds the judge a config names when given none
    ("envs/benchmarks/splat/_judge_labels.py", "lateralgym.episodes"),  # SPLAT's agreement reads a run's log
}
"""The lazy upward imports the README names (README, Architecture); no other is allowed."""

README_NAMES = {
    ("envs/_engine.py", "lateralgym.judges"): "`LateralEnv` building a config's judge",
    ("envs/benchmarks/splat/_judge_labels.py", "lateralgym.episodes"): "SPLAT's agreement reading a log",
}
"""How the README's Architecture section names each of ``LAZY_UPWARD``."""


def test_the_readme_names_each_lazy_upward_import() -> None:
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert set(README_NAMES) == LAZY_UPWARD and len(LAZY_UPWARD) <= 2  # issue 33: at most two, each named
    said = {0: "No import goes up", 1: "One import goes up", 2: "Two imports go up"}[len(LAZY_UPWARD)]
    assert said in readme, said
    missing = [phrase for phrase in README_NAMES.values() if phrase not in readme]
    assert not missing, f"README's Architecture section does not name: {missing}"


def _layer_of_module(module: str) -> int | None:
    if module == "lateralgym_env" or module.startswith("lateralgym_env."):
        return LAYERS["integrations"]
    if not (module == "lateralgym" or module.startswith("lateralgym.")):
        return None
    parts = module.split(".")[1:]
    if parts[:2] == ["envs", "benchmarks"]:
        return LAYERS["benchmarks"]
    if parts and parts[0] == "envs":
        return LAYERS["engine"]
    if parts and parts[0] in LAYERS:
        return LAYERS[parts[0]]
    return CLI


def _layer_of_file(path: Path) -> int:
    rel = relative(path)
    if rel.startswith("envs/benchmarks/"):
        return LAYERS["benchmarks"]
    top = rel.split("/")[0]
    return {"envs": LAYERS["engine"], "lateralgym": CLI, "lateralgym_env": LAYERS["integrations"]}.get(
        top, LAYERS.get(top, CLI)
    )


def _imports_with_place(tree: ast.Module) -> list[tuple[str, bool]]:
    """Every imported module (``from X import Y`` also as ``X.Y``, which may be a module) and whether the
    import runs inside a function; imports for type checking only are left out."""
    found: list[tuple[str, bool]] = []

    def visit(nodes: list[Any], lazy: bool) -> None:
        for node in nodes:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(node.body, True)
            elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.append((node.module, lazy))
                found.extend((f"{node.module}.{alias.name}", lazy) for alias in node.names)
            elif isinstance(node, ast.Import):
                found.extend((alias.name, lazy) for alias in node.names)
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(node, field, None)
                    if isinstance(inner, list):
                        visit(inner, lazy)

    visit(tree.body, False)
    return found


def test_layers_point_one_way() -> None:
    module_level, lazy = [], set()
    for path in package_files():
        here = _layer_of_file(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for module, inside_function in _imports_with_place(tree):
            there = _layer_of_module(module)
            if there is None or there <= here:
                continue
            target = "lateralgym." + module.split(".")[1] if module.startswith("lateralgym.") else module
            if inside_function:
                lazy.add((relative(path), target))
            else:
                module_level.append(f"{relative(path)} imports {module}")
    assert not module_level, "module-level imports of a higher layer:\n" + "\n".join(sorted(set(module_level)))
    assert lazy == LAZY_UPWARD, f"lazy upward imports other than the README's: {sorted(lazy ^ LAZY_UPWARD)}"


def test_the_benchmark_base_is_small_and_composed_of_parts() -> None:
    """At most 25 public hooks on ``Benchmark``; the rest sit in its six parts, and no built-in benchmark
    forwards a part's method to another module's function of the same name."""
    from lateralgym.envs import Benchmark, all_benchmarks
    from lateralgym.envs._parts import PARTS

    hooks = [name for name in dir(Benchmark) if not name.startswith("_")]
    assert len(hooks) <= 25, hooks
    assert set(PARTS) <= set(hooks)
    for unit in all_benchmarks():
        for slot in PARTS:
            part = getattr(unit, slot)
            assert part.benchmark is unit, (unit.name, slot)  # each benchmark holds its own, bound copy
        forwarding = [
            name
            for name, value in vars(type(unit)).items()
            if callable(value) and not name.startswith("_") and f"_player.{name}(" in ast.unparse(_source_of(value))
        ]
        assert not forwarding, (unit.name, forwarding)


def _source_of(function: Any) -> ast.AST:
    import inspect
    import textwrap

    return ast.parse(textwrap.dedent(inspect.getsource(function)))
