"""``ask_json``: one checkpointed, validated JSON question to a model, as every LLM stage asks it.

A stage names what it wants with a pydantic model; ``ask_json`` sends the chat through the one
client layer (``lateralgym.agents.LLMClient``: retries, timeouts, concurrency cap, redaction),
pulls the JSON object out of the reply, validates it, re-asks with the validation error when it
does not fit, and stores only valid records in the ``CheckpointStore``. A record already stored
is returned without a call, so a resumed or repeated build pays only for what is missing.

Constrained output (opt-in, ``constrained=``): the request also carries the stage model's JSON schema
(``Model.model_json_schema()``) in ``response_format``, so a server that decodes under a grammar can
only write JSON of that shape. Two wire forms exist; ``response_format_for`` builds either:

* ``json_object`` -- ``{"type": "json_object", "schema": SCHEMA}``: llama-cpp-python's server (it
  turns the schema into a GBNF grammar; it rejects the other form) and llama.cpp's ``llama-server``.
  Their converter lets a string hold any characters, and a small model fills strings with punctuation
  (``"..."`` copied from a prompt, ``"],"`` meant to close a list: most of SmolLM2's invalid stage G
  replies) and raw line breaks, so in this form every plain string of the schema also carries a
  ``pattern`` (``grammar_strings``): printable characters without quote or backslash, a letter or digit
  near the start, at most the string's ``maxLength``. The reply is validated against the model, not the
  pattern.
* ``json_schema`` -- ``{"type": "json_schema", "json_schema": {"name": MODEL, "schema": SCHEMA}}``:
  OpenAI's structured outputs (non-strict), vLLM, llama.cpp's ``llama-server``, LM Studio.

The reply is validated and re-asked exactly as without it: a schema shapes the JSON, while the checks
a schema cannot state (distinct variants, connected parts naming listed parts) stay pydantic's.

Re-asks sample (``reask_temperature=``): the first ask goes at the stage's configured temperature (so a
build whose replies are valid is the paper's), while a re-ask after an invalid reply goes at
``reask_temperature`` with its own seed (a stable hash of the key and attempt: reproducible on servers
that honour ``seed``, and never the seed of the attempt before). A model asked at temperature 0, or any
server that repeats a seed, otherwise writes the same invalid reply again.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from lateralgym.databuild._errors import DataBuildError
from lateralgym.databuild._store import CheckpointStore

if TYPE_CHECKING:
    from lateralgym.agents import LLMClient

__all__ = [
    "DEFAULT_REASK_TEMPERATURE",
    "JSON_FORMS",
    "JsonForm",
    "StageCounters",
    "ask_json",
    "extract_json_object",
    "grammar_strings",
    "response_format_for",
    "validation_feedback",
]

M = TypeVar("M", bound=BaseModel)

JsonForm = Literal["json_object", "json_schema"]
"""How a stage's JSON schema is sent in ``response_format`` (see the module docstring)."""
JSON_FORMS: tuple[JsonForm, ...] = ("json_object", "json_schema")

_MAX_FEEDBACK_ERRORS = 5
_FEEDBACK_INPUT_CHARS = 80
_REASON_CHARS = 120
DEFAULT_REASK_TEMPERATURE = 0.7
"""Temperature of a re-ask after an invalid reply: the paper's sampling temperature, so a judge asked at
0 samples a different reply instead of repeating its invalid one, and a stage already at 0.7 is unchanged."""


@dataclass
class StageCounters:
    """What one stage of a build did, for the progress display and the summary table.

    Attributes:
        stage: The stage's name (``entities``, ``parts``, ...).
        calls: Requests answered or failed by the client (each re-ask is one more).
        cached: Records served from the checkpoint store, at no cost.
        written: Valid records stored by this run.
        retried: Re-asks after an invalid reply (the validation error appended).
        invalid_skipped: Questions given up after every re-ask was invalid (nothing written).
        errored: Questions given up because the API failed after the client's own retries.
        prompt_tokens: Prompt tokens reported by the server.
        completion_tokens: Completion tokens reported by the server.
        cost_usd: Cost the client priced (litellm's cost map); None once a call could not be priced.
        invalid_reasons: Why replies were invalid: the first problem of each (``where: what``), counted, so a
            build that skips questions says which rule its model keeps breaking.
    """

    stage: str
    calls: int = 0
    cached: int = 0
    written: int = 0
    retried: int = 0
    invalid_skipped: int = 0
    errored: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    invalid_reasons: dict[str, int] = field(default_factory=dict)

    def note_invalid(self, exc: ValidationError | ValueError) -> None:
        """Count why one reply was invalid (its first problem, at most 120 characters)."""
        reason = validation_feedback(exc).split("; ")[0][:_REASON_CHARS]
        self.invalid_reasons[reason] = self.invalid_reasons.get(reason, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        """The counters as a plain dict (for JSON summaries)."""
        return asdict(self)


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in ``text``, tolerating prose and code fences around it, and raw line breaks
    and tabs inside its strings (small models write them, and llama-cpp-python's JSON grammar allows them).

    Example:
        >>> extract_json_object('Sure!\\n```json\\n{"a": 1}\\n```')
        {'a': 1}
        >>> extract_json_object('{"a": "two\\nlines"}')
        {'a': 'two\\nlines'}

    Raises:
        ValueError: No JSON object could be decoded from the text.
    """
    decoder = json.JSONDecoder(strict=False)
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise ValueError("the reply holds no JSON object")


def response_format_for(schema: type[BaseModel], form: JsonForm) -> dict[str, Any]:
    """The ``response_format`` request field that constrains a reply to ``schema``'s JSON schema.

    Example:
        >>> from pydantic import BaseModel
        >>> class Answer(BaseModel):
        ...     ok: bool
        >>> response_format_for(Answer, "json_object")["schema"]["required"]
        ['ok']
        >>> response_format_for(Answer, "json_schema")["json_schema"]["name"]
        'Answer'
    """
    body = schema.model_json_schema()
    if form == "json_object":
        return {"type": "json_object", "schema": grammar_strings(body)}
    return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": body}}


_GRAMMAR_CHAR = r'[^"\\\x00-\x1f]'
"""A JSON string character a grammar may write unescaped (no quote, backslash or control character)."""
_GRAMMAR_LEAD = r'[^A-Za-z0-9"\\\x00-\x1f]{0,4}[A-Za-z0-9]'
"""A string's start: at most four other characters, then a letter or digit (punctuation alone, such as a
copied ``"..."`` or a bracket the model meant to close, is not an answer; deterministic for the grammar)."""


def grammar_strings(node: Any) -> Any:
    r"""``node`` (a JSON schema) with a ``pattern`` on every plain string: printable characters only, a letter
    or digit among the first five, at most ``maxLength`` characters, or nothing when the string may be empty
    (llama.cpp's converter takes a pattern over the length bounds; a reply is still validated against the
    model's exact bounds).

    Example:
        >>> import re
        >>> worded = re.compile(grammar_strings({"type": "string", "minLength": 1, "maxLength": 80})["pattern"])
        >>> [bool(worded.fullmatch(text)) for text in ("NA", "...a steel blade", "...", "],", "a\nb", "x" * 81)]
        [True, True, False, False, False, False]
        >>> grammar_strings({"enum": ["a"], "type": "string"})
        {'enum': ['a'], 'type': 'string'}
    """
    if isinstance(node, list):
        return [grammar_strings(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: grammar_strings(value) for key, value in node.items()}
    if out.get("type") == "string" and not {"pattern", "enum", "const", "format"} & out.keys():
        low, high = max(0, out.get("minLength", 0) - 1), out.get("maxLength")
        # The lead takes up to five characters: the rest keeps the whole within maxLength.
        rest = "*" if low == 0 and high is None else f"{{{low},{'' if high is None else max(low, high - 5)}}}"
        worded = f"{_GRAMMAR_LEAD}{_GRAMMAR_CHAR}{rest}"
        out["pattern"] = f"^{worded}$" if out.get("minLength", 0) > 0 else f"^({worded})?$"  # "" when allowed
    return out


def validation_feedback(exc: ValidationError | ValueError) -> str:
    """A short description of what was wrong with a reply, for the re-ask."""
    if not isinstance(exc, ValidationError):
        return str(exc)
    problems = []
    for error in exc.errors()[:_MAX_FEEDBACK_ERRORS]:
        where = ".".join(str(p) for p in error["loc"]) or "(top level)"
        problems.append(f"{where}: {error['msg']}")
    more = len(exc.errors()) - _MAX_FEEDBACK_ERRORS
    if more > 0:
        problems.append(f"and {more} more problem(s)")
    return "; ".join(problems)


async def ask_json(
    client: LLMClient,
    *,
    stage: str,
    key: str,
    messages: list[dict[str, str]],
    schema: type[M],
    store: CheckpointStore,
    counters: StageCounters,
    temperature: float,
    retries: int = 2,
    constrained: JsonForm | None = None,
    reask_temperature: float | None = DEFAULT_REASK_TEMPERATURE,
) -> M | None:
    """Cached in ``store`` under (stage, key) (a hit costs no call); extracts the one JSON object from the reply
    (tolerating prose/code fences around it); validates with pydantic; on invalid output re-asks with the
    validation error appended (up to ``retries``), then returns None and counts ``invalid_skipped`` — never
    writes an invalid record. API errors/timeouts after the client's own retries: counted ``errored``, None
    returned.

    Args:
        client: The client of the annotating model (its cap bounds the requests in flight).
        stage: Checkpoint stage name.
        key: Checkpoint key: everything the question depends on, so equal keys mean equal questions.
        messages: The chat to send.
        schema: The pydantic model the reply's JSON object must validate against.
        store: Where valid records live.
        counters: The stage's counters, updated in place.
        temperature: Sampling temperature of the first request.
        retries: Re-asks after an invalid reply.
        constrained: Also send ``schema``'s JSON schema in ``response_format``, in this form
            (``response_format_for``); None (default) sends the prompt alone.
        reask_temperature: Sampling temperature of each re-ask, sent with a per-attempt ``seed`` (see the
            module docstring); None: re-asks go at ``temperature`` with no seed, like the first ask.

    Returns:
        The validated record, or None when the question was given up (counted).

    Raises:
        DataBuildError: A stored record no longer fits ``schema`` (a checkpoint of another version).
    """
    from lateralgym.agents import LLMCallError

    stored = store.get(stage, key)
    if stored is not None:
        try:
            record = schema.model_validate(stored)
        except ValidationError as exc:
            raise DataBuildError(
                f"{store.root / stage}.jsonl, key {key!r}: checkpoint does not fit {schema.__name__} "
                f"({validation_feedback(exc)}); delete that file to rebuild the stage"
            ) from None
        counters.cached += 1
        return record
    chat: list[dict[str, str]] = [dict(m) for m in messages]
    params: dict[str, Any] = {"temperature": temperature}
    if constrained is not None:
        params["response_format"] = response_format_for(schema, constrained)
    for attempt in range(retries + 1):
        if attempt and reask_temperature is not None:
            params.update(temperature=reask_temperature, seed=_attempt_seed(stage, key, attempt))
        try:
            call = await client.complete(chat, role="annotator", **params)
        except LLMCallError:
            counters.calls += 1
            counters.errored += 1
            return None
        counters.calls += 1
        if call.error is not None:  # a client made with raise_on_error=False
            counters.errored += 1
            return None
        counters.prompt_tokens += call.prompt_tokens
        counters.completion_tokens += call.completion_tokens
        if not call.cache_hit:
            counters.cost_usd = (
                None if call.cost_usd is None or counters.cost_usd is None else counters.cost_usd + call.cost_usd
            )
        try:
            record = schema.model_validate(extract_json_object(call.text))
        except (ValidationError, ValueError) as exc:
            counters.note_invalid(exc)
            if attempt == retries:
                break
            counters.retried += 1
            chat = [*chat, *_reask(call.text, exc)]
            continue
        store.put(stage, key, record.model_dump(mode="json"))
        counters.written += 1
        return record
    counters.invalid_skipped += 1
    return None


def _attempt_seed(stage: str, key: str, attempt: int) -> int:
    """The seed of one re-ask: stable across runs, different for each question and attempt."""
    return zlib.crc32(f"{stage}|{key}|{attempt}".encode())


def _reask(reply: str, exc: ValidationError | ValueError) -> Sequence[dict[str, str]]:
    """The turn that shows the model its invalid reply and what was wrong with it."""
    return (
        {"role": "assistant", "content": reply},
        {
            "role": "user",
            "content": (
                f"That reply could not be used: {validation_feedback(exc)}. "
                "Answer again with only the corrected JSON object, in the format asked for."
            ),
        },
    )
