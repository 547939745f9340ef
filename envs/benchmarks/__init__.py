"""The built-in benchmarks, one folder or module each; importing this package registers them.

* ``creativity``: CreativityBench (static, chain-of-thought and interactive tool repurposing);
* ``brainteaser``: BrainTeaser (multiple-choice lateral-thinking puzzles);
* ``splat``: SPLAT situation puzzles (and LatEval's, in the same protocol);
* ``riddlesense``: RiddleSense (five-option riddles).

See ``docs/adding-a-benchmark.md`` for registering your own.
"""

from lateralgym.envs.benchmarks import brainteaser, creativity, riddlesense, splat

__all__ = ["brainteaser", "creativity", "riddlesense", "splat"]
