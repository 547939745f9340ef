"""Players: random, heuristic, oracle and human (offline); the LLM player and the LLM client layer.

``make_agent(spec, items=...)`` builds a player from the spec a config or the CLI names. A model
is named by one ``ModelSpec`` string for every role (``openai/qwen?temperature=0&few_shot=true``);
every call comes back as a ``lateralgym.envs.ModelCall``. ``safe_spec(spec)`` is the form of any
player or judge spec fit to write to a file (credentials removed from every URL inside it). Each
name loads its module on first use (``_LAZY``): a run with offline players never imports the openai SDK.
"""

from typing import TYPE_CHECKING

from lateralgym.envs.support import lazy_exports

if TYPE_CHECKING:
    from lateralgym.agents._aux import AUX_OPTIONS, aux_prompt, with_aux
    from lateralgym.agents._constraint import (
        CONSTRAINT_MODES,
        Constraint,
        ConstraintMode,
        ConstraintRejectedError,
        check_constraint,
        default_constraint,
        parse_constrain,
    )
    from lateralgym.agents._gguf import GGUFInfo, LocalModelError, read_gguf
    from lateralgym.agents._human import HumanAgent
    from lateralgym.agents._llm_backends import MalformedReplyError, normalise_reply
    from lateralgym.agents._llm_cache import ResponseCache, request_key
    from lateralgym.agents._llm_client import LLMClient
    from lateralgym.agents._llm_concurrency import (
        DEFAULT_CONCURRENCY,
        AdaptiveLimiter,
        ConcurrencyLimiter,
        default_concurrency,
        set_default_concurrency,
    )
    from lateralgym.agents._llm_errors import LLMCallError, LLMConfigError, LLMError
    from lateralgym.agents._llm_player import PLAYER_OPTIONS, LLMPlayer
    from lateralgym.agents._llm_probe import EndpointCheckError, check_endpoints
    from lateralgym.agents._llm_secrets import display_url, redact, safe_spec, scrub_credentials
    from lateralgym.agents._llm_spec import GENERATION_KEYS, LOCAL_PROVIDER, ModelSpec, OptionParser
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
        local_model_rows,
        plan_local,
        register_local_model,
        served_models,
        stop_local_servers,
    )
    from lateralgym.agents._parsing import parse_reply, read_model_reply
    from lateralgym.agents._players import (
        OFFLINE_AGENTS,
        Agent,
        HeuristicAgent,
        OracleAgent,
        PlayedTurn,
        RandomAgent,
        check_player_spec,
        is_model_spec,
        make_agent,
        offline_player_note,
        player_factory,
    )
    from lateralgym.agents._prices import PRICES_AS_OF, price_per_million
    from lateralgym.agents._prompts import PromptPlan, Reasoning, conversation_start, opening_messages, prompt_plan
    from lateralgym.agents._served import ServedModel, serving
    from lateralgym.agents._speed import Speed, measure_speed

_LAZY = {  # name -> the module that defines it, imported on first use
    "LocalServerIdentityError": "_local_identity",
    **dict.fromkeys(("AUX_OPTIONS", "aux_prompt", "with_aux"), "_aux"),
    **dict.fromkeys(("Agent", "PlayedTurn"), "_players"),
    **dict.fromkeys(
        (
            "CONSTRAINT_MODES",
            "Constraint",
            "ConstraintMode",
            "ConstraintRejectedError",
            "check_constraint",
            "default_constraint",
            "parse_constrain",
        ),
        "_constraint",
    ),
    **dict.fromkeys(
        ("OFFLINE_AGENTS", "check_player_spec", "is_model_spec", "make_agent", "player_factory"), "_players"
    ),
    **dict.fromkeys(("GGUFInfo", "LocalModelError", "read_gguf"), "_gguf"),
    "HumanAgent": "_human",
    **dict.fromkeys(("ResponseCache", "request_key"), "_llm_cache"),
    **dict.fromkeys(
        (
            "DEFAULT_CONCURRENCY",
            "AdaptiveLimiter",
            "ConcurrencyLimiter",
            "default_concurrency",
            "set_default_concurrency",
        ),
        "_llm_concurrency",
    ),
    **dict.fromkeys(("MalformedReplyError", "normalise_reply"), "_llm_backends"),
    "LLMClient": "_llm_client",  # the client and the LLM player import the openai SDK (half a second)
    **dict.fromkeys(("LLMCallError", "LLMConfigError", "LLMError"), "_llm_errors"),
    **dict.fromkeys(("PLAYER_OPTIONS", "LLMPlayer"), "_llm_player"),
    **dict.fromkeys(("EndpointCheckError", "check_endpoints"), "_llm_probe"),
    **dict.fromkeys(("display_url", "redact", "safe_spec", "scrub_credentials"), "_llm_secrets"),
    **dict.fromkeys(("GENERATION_KEYS", "LOCAL_PROVIDER", "ModelSpec", "OptionParser"), "_llm_spec"),
    **dict.fromkeys(("UsageMeter", "UsageSummary", "litellm_available", "lookup_cost_usd"), "_llm_usage"),
    **dict.fromkeys(
        ("LOCAL_INSTALL_HINT", "LocalModelServer", "choose_context", "choose_threads", "smollm2_gguf"), "_local_model"
    ),
    **dict.fromkeys(
        (
            "LOCAL_MODELS",
            "LocalModel",
            "local_model_rows",
            "plan_local",
            "register_local_model",
            "served_models",
            "stop_local_servers",
        ),
        "_local_serve",
    ),
    **dict.fromkeys(("ServedModel", "serving"), "_served"),  # what a manifest records; a run's server block
    **dict.fromkeys(("HeuristicAgent", "OracleAgent", "RandomAgent", "offline_player_note"), "_players"),
    **dict.fromkeys(("parse_reply", "read_model_reply"), "_parsing"),
    **dict.fromkeys(("PRICES_AS_OF", "price_per_million"), "_prices"),
    **dict.fromkeys(("PromptPlan", "Reasoning", "conversation_start", "opening_messages", "prompt_plan"), "_prompts"),
    **dict.fromkeys(("Speed", "measure_speed"), "_speed"),
}

if not TYPE_CHECKING:  # mypy reads the imports above: no fallback types a misspelt name as Any
    __getattr__ = lazy_exports(__name__, _LAZY)


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
    "plan_local",
    "lookup_cost_usd",
    "make_agent",
    "normalise_reply",
    "opening_messages",
    "offline_player_note",
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
