"""Players: random, heuristic, oracle and human (offline); the LLM client layer.

``make_agent(spec, items=...)`` builds a player from the spec a config or the CLI names.
"""

from lateralgym.agents._base import Agent
from lateralgym.agents._factory import OFFLINE_AGENTS, make_agent, player_factory
from lateralgym.agents._human import HumanAgent
from lateralgym.agents._llm_client import (
    Completion,
    ConcurrencyLimiter,
    LLMCallError,
    LLMClient,
    LLMConfigError,
    LLMError,
    ModelSpec,
    ResponseCache,
    UsageMeter,
    UsageSummary,
    redact,
    request_key,
    set_default_concurrency,
)
from lateralgym.agents._llm_player import (
    PLAYER_SPEC_OPTIONS,
    LLMCallRecord,
    LLMPlayer,
    is_model_spec,
    parse_player_spec,
    split_player_spec,
)
from lateralgym.agents._llm_secrets import display_url
from lateralgym.agents._offline import HeuristicAgent, OracleAgent, RandomAgent
from lateralgym.agents._parsing import parse_reply

__all__ = [
    "OFFLINE_AGENTS",
    "Agent",
    "Completion",
    "ConcurrencyLimiter",
    "HeuristicAgent",
    "HumanAgent",
    "LLMCallError",
    "LLMClient",
    "LLMConfigError",
    "LLMError",
    "ModelSpec",
    "OracleAgent",
    "RandomAgent",
    "ResponseCache",
    "UsageMeter",
    "UsageSummary",
    "display_url",
    "make_agent",
    "player_factory",
    "PLAYER_SPEC_OPTIONS",
    "LLMCallRecord",
    "LLMPlayer",
    "is_model_spec",
    "parse_player_spec",
    "parse_reply",
    "redact",
    "request_key",
    "set_default_concurrency",
    "split_player_spec",
]
