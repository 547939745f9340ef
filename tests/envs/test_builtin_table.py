"""The table the registry finds the built-in benchmarks by (``lateralgym.envs.benchmarks.BUILTIN``) says
what their classes say, and looking one up imports that one alone."""

from __future__ import annotations

import json
import subprocess
import sys

from lateralgym.envs import BENCHMARKS, all_benchmarks
from lateralgym.envs.benchmarks import BUILTIN


def test_the_table_names_each_builtin_module_and_env_ids_as_its_class_does() -> None:
    builtins = [b for b in all_benchmarks() if type(b).__module__.startswith("lateralgym.envs.benchmarks.")]
    assert {b.name: (type(b).__module__, type(b).env_ids) for b in builtins} == {
        name: (builtin.module, builtin.env_ids) for name, builtin in BUILTIN.items()
    }
    assert [b.name for b in all_benchmarks()][: len(BUILTIN)] == list(BUILTIN)  # built-ins first, in its order


PROBE = """
import json, sys
import gymnasium
import lateralgym
from lateralgym.envs import get_benchmark
loaded = sorted(m for m in sys.modules if m.startswith("lateralgym.envs.benchmarks."))
ids = {i: gymnasium.registry[i].kwargs["config"] for i in gymnasium.registry if i.startswith("lateralgym/")}
get_benchmark(sys.argv[1])
after = sorted(m.split(".")[3] for m in sys.modules if m.count(".") == 3 and ".benchmarks." in m)
print(json.dumps([loaded, ids, after]))
"""


def test_import_lateralgym_registers_the_builtin_ids_and_a_lookup_imports_that_benchmark_alone() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, "riddlesense"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded, ids, after = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded == []
    assert ids == {env_id: config for builtin in BUILTIN.values() for env_id, config in builtin.env_ids.items()}
    assert after == ["_mcq", "_mcq_reply", "riddlesense"]


def test_a_builtin_dropped_from_the_registry_registers_again() -> None:
    from lateralgym.envs import get_benchmark

    splat = BENCHMARKS.pop("splat", None) or get_benchmark("splat")
    try:
        assert type(get_benchmark("splat")) is type(splat)
    finally:
        BENCHMARKS["splat"] = splat
