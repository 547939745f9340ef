"""Players: random, heuristic, oracle and human (offline); the LLM player and the LLM client layer.

``make_agent(spec, items=...)`` builds a player from the spec a config or the CLI names. A model
is named by one ``ModelSpec`` string for every role (``openai/qwen?temperature=0&few_shot=true``);
every call comes back as a ``lateralgym.envs.ModelCall``. ``safe_spec(spec)`` is the form of any
player or judge spec fit to write to a file (credentials removed from every URL inside it).
"""

from typing import TYPE_CHECKING, Any

from lateralgym.agents._base import Agent
from lateralgym.agents._factory import OFFLINE_AGENTS, check_player_spec, make_agent, player_factory
from lateralgym.agents._human import HumanAgent
from lateralgym.agents._llm_cache import ResponseCache, request_key
from lateralgym.agents._llm_concurrency import (
    AdaptiveLimiter,
    ConcurrencyLimiter,
    default_concurrency,
    set_default_concurrency,
)
from lateralgym.agents._llm_errors import LLMCallError, LLMConfigError, LLMError
from lateralgym.agents._llm_secrets import display_url, redact, safe_spec
from lateralgym.agents._llm_spec import GENERATION_KEYS, ModelSpec, is_model_spec
from lateralgym.agents._llm_usage import UsageMeter, UsageSummary
from lateralgym.agents._offline import HeuristicAgent, OracleAgent, RandomAgent
from lateralgym.agents._parsing import parse_reply, read_model_reply

if TYPE_CHECKING:
    from lateralgym.agents._llm_client import LLMClient
    from lateralgym.agents._llm_player import PLAYER_OPTIONS, LLMPlayer

# The client and the LLM player import the openai SDK (half a second): only on first use, so a run
# with offline players and judges never pays for it.
_LAZY = {
    "LLMClient": "lateralgym.agents._llm_client",
    "LLMPlayer": "lateralgym.agents._llm_player",
    "PLAYER_OPTIONS": "lateralgym.agents._llm_player",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'lateralgym.agents' has no attribute {name!r}")


__all__ = [
    "GENERATION_KEYS",
    "OFFLINE_AGENTS",
    "PLAYER_OPTIONS",
    "Agent",
    "AdaptiveLimiter",
    "ConcurrencyLimiter",
    "HeuristicAgent",
    "HumanAgent",
    "LLMCallError",
    "LLMClient",
    "LLMConfigError",
    "LLMError",
    "LLMPlayer",
    "ModelSpec",
    "OracleAgent",
    "RandomAgent",
    "ResponseCache",
    "UsageMeter",
    "UsageSummary",
    "check_player_spec",
    "default_concurrency",
    "display_url",
    "is_model_spec",
    "make_agent",
    "parse_reply",
    "player_factory",
    "read_model_reply",
    "redact",
    "request_key",
    "safe_spec",
    "set_default_concurrency",
]
