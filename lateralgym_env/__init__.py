"""The verifiers v1 plugin ``lateralgym-env``: verifiers imports this module for that id and takes the
one ``Taskset``, ``Env`` and ``Harness`` listed here. Everything lives in
``lateralgym.integrations.verifiers`` (the ``verifiers`` extra)."""

from lateralgym.integrations.verifiers import (
    ChatHarness,
    ChatHarnessConfig,
    LateralEnvConfig,
    LateralTask,
    LateralTaskData,
    LateralTaskset,
    LateralTasksetConfig,
    LateralVerifiersEnv,
)

__all__ = [
    "ChatHarness",
    "ChatHarnessConfig",
    "LateralEnvConfig",
    "LateralTask",
    "LateralTaskData",
    "LateralTaskset",
    "LateralTasksetConfig",
    "LateralVerifiersEnv",
]
