"""Players: random, heuristic, oracle and human (offline); the LLM player and the LLM client layer.

``make_agent(spec, items=...)`` builds a player from the spec a config or the CLI names. A model
is named by one ``ModelSpec`` string for every role (``openai/qwen?temperature=0&few_shot=true``);
every call comes back as a ``lateralgym.envs.ModelCall``. ``safe_spec(spec)`` is the form of any
player or judge spec fit to write to a file (credentials removed from every URL inside it).
"""

from lateralgym.agents._base import Agent
from lateralgym.agents._factory import OFFLINE_AGENTS, make_agent, player_factory
from lateralgym.agents._human import HumanAgent
from lateralgym.agents._llm_client import (
    ConcurrencyLimiter,
    LLMCallError,
    LLMClient,
    LLMConfigError,
    LLMError,
    ModelSpec,
    ResponseCache,
    UsageMeter,
    UsageSummary,
    default_concurrency,
    redact,
    request_key,
    set_default_concurrency,
)
from lateralgym.agents._llm_player import PLAYER_OPTIONS, LLMPlayer
from lateralgym.agents._llm_secrets import display_url, safe_spec
from lateralgym.agents._llm_spec import GENERATION_KEYS, is_model_spec
from lateralgym.agents._offline import HeuristicAgent, OracleAgent, RandomAgent
from lateralgym.agents._parsing import parse_reply

__all__ = [
    "GENERATION_KEYS",
    "OFFLINE_AGENTS",
    "PLAYER_OPTIONS",
    "Agent",
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
    "default_concurrency",
    "display_url",
    "is_model_spec",
    "make_agent",
    "parse_reply",
    "player_factory",
    "redact",
    "request_key",
    "safe_spec",
    "set_default_concurrency",
]
