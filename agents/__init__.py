"""Players: random, heuristic, oracle and human (offline); the LLM player and the LLM client layer.

``make_agent(spec, items=...)`` builds a player from the spec a config or the CLI names. A model
is named by one ``ModelSpec`` string for every role (``openai/qwen?temperature=0&few_shot=true``);
every call comes back as a ``lateralgym.envs.ModelCall``. ``safe_spec(spec)`` is the form of any
player or judge spec fit to write to a file (credentials removed from every URL inside it).
"""

from typing import TYPE_CHECKING, Any

from lateralgym.agents._aux import AUX_OPTIONS, aux_prompt, with_aux
from lateralgym.agents._base import Agent, PlayedTurn
from lateralgym.agents._constraint import (
    CONSTRAINT_MODES,
    Constraint,
    ConstraintMode,
    ConstraintRejectedError,
    check_constraint,
    default_constraint,
    parse_constrain,
)
from lateralgym.agents._factory import OFFLINE_AGENTS, check_player_spec, make_agent, player_factory
from lateralgym.agents._gguf import GGUFInfo, LocalModelError, read_gguf
from lateralgym.agents._human import HumanAgent
from lateralgym.agents._llm_cache import ResponseCache, request_key
from lateralgym.agents._llm_concurrency import (
    DEFAULT_CONCURRENCY,
    AdaptiveLimiter,
    ConcurrencyLimiter,
    default_concurrency,
    set_default_concurrency,
)
from lateralgym.agents._llm_errors import LLMCallError, LLMConfigError, LLMError
from lateralgym.agents._llm_secrets import display_url, redact, safe_spec, scrub_credentials
from lateralgym.agents._llm_spec import GENERATION_KEYS, LOCAL_PROVIDER, ModelSpec, OptionParser, is_model_spec
from lateralgym.agents._llm_usage import UsageMeter, UsageSummary, litellm_available, lookup_cost_usd
from lateralgym.agents._local_identity import LocalServerIdentityError
from lateralgym.agents._local_model import (
    LOCAL_INSTALL_HINT,
    LocalModelServer,
    choose_context,
    choose_threads,
    smollm2_gguf,
)
from lateralgym.agents._local_serve import (
    LOCAL_MODELS,
    LocalModel,
    ServedModel,
    local_model_rows,
    register_local_model,
    served_models,
    serving,
    stop_local_servers,
)
from lateralgym.agents._offline import HeuristicAgent, OracleAgent, RandomAgent
from lateralgym.agents._parsing import parse_reply, read_model_reply
from lateralgym.agents._prices import PRICES_AS_OF, price_per_million
from lateralgym.agents._prompts import PromptPlan, Reasoning, conversation_start, opening_messages, prompt_plan
from lateralgym.agents._speed import Speed, measure_speed

if TYPE_CHECKING:
    from lateralgym.agents._llm_backends import MalformedReplyError, normalise_reply
    from lateralgym.agents._llm_client import LLMClient
    from lateralgym.agents._llm_player import PLAYER_OPTIONS, LLMPlayer
    from lateralgym.agents._llm_probe import EndpointCheckError, check_endpoints

# The client and the LLM player import the openai SDK (half a second): only on first use, so a run
# with offline players and judges never pays for it.
_LAZY = {
    "LLMClient": "lateralgym.agents._llm_client",
    "LLMPlayer": "lateralgym.agents._llm_player",
    "PLAYER_OPTIONS": "lateralgym.agents._llm_player",
    "MalformedReplyError": "lateralgym.agents._llm_backends",
    "normalise_reply": "lateralgym.agents._llm_backends",
    "EndpointCheckError": "lateralgym.agents._llm_probe",
    "check_endpoints": "lateralgym.agents._llm_probe",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'lateralgym.agents' has no attribute {name!r}")


__all__ = [
    "AUX_OPTIONS",
    "CONSTRAINT_MODES",
    "DEFAULT_CONCURRENCY",
    "GENERATION_KEYS",
    "LOCAL_MODELS",
    "LOCAL_PROVIDER",
    "OFFLINE_AGENTS",
    "PLAYER_OPTIONS",
    "PRICES_AS_OF",
    "Agent",
    "AdaptiveLimiter",
    "ConcurrencyLimiter",
    "Constraint",
    "ConstraintMode",
    "ConstraintRejectedError",
    "EndpointCheckError",
    "GGUFInfo",
    "HeuristicAgent",
    "HumanAgent",
    "LLMCallError",
    "LLMClient",
    "LLMConfigError",
    "LLMError",
    "LLMPlayer",
    "LOCAL_INSTALL_HINT",
    "LocalModel",
    "LocalModelError",
    "LocalServerIdentityError",
    "LocalModelServer",
    "MalformedReplyError",
    "ModelSpec",
    "OptionParser",
    "OracleAgent",
    "PlayedTurn",
    "PromptPlan",
    "RandomAgent",
    "Reasoning",
    "ResponseCache",
    "ServedModel",
    "Speed",
    "UsageMeter",
    "UsageSummary",
    "aux_prompt",
    "check_constraint",
    "check_endpoints",
    "check_player_spec",
    "choose_context",
    "choose_threads",
    "conversation_start",
    "default_concurrency",
    "default_constraint",
    "display_url",
    "is_model_spec",
    "litellm_available",
    "measure_speed",
    "local_model_rows",
    "lookup_cost_usd",
    "make_agent",
    "normalise_reply",
    "opening_messages",
    "parse_constrain",
    "parse_reply",
    "player_factory",
    "price_per_million",
    "prompt_plan",
    "read_gguf",
    "read_model_reply",
    "redact",
    "register_local_model",
    "request_key",
    "safe_spec",
    "scrub_credentials",
    "served_models",
    "serving",
    "set_default_concurrency",
    "smollm2_gguf",
    "stop_local_servers",
    "with_aux",
]
