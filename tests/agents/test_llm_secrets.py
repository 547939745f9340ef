"""Secrets outside the API-key variable: a key pasted as a URL, credentials in a URL, provider keys."""

from __future__ import annotations

import base64
import string
import traceback
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, quote_plus, unquote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_server import Fault, ScriptedLLMServer

from lateralgym.agents import display_url, redact, safe_spec
from lateralgym.agents._llm_client import LLMCallError, LLMClient, LLMConfigError, ModelSpec
from lateralgym.agents._llm_secrets import url_secrets
from lateralgym.agents._llm_usage import litellm_available

MakeClient = Callable[..., LLMClient]
PASTED = "sk-pasted-by-mistake-0123456789"
CREDENTIAL = "sk-url-credential-0123456789"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        (f"https://user:{CREDENTIAL}@llm.example.com/v1", "https://llm.example.com/v1"),
        (f"http://{CREDENTIAL}@10.0.0.2:8000", "http://10.0.0.2:8000"),
        (f"https://llm.example.com/v1?api-key={CREDENTIAL}&x=1", "https://llm.example.com/v1?api-key=[REDACTED]&x=1"),
        (None, None),
    ],
)
def test_display_url(url: str | None, shown: str | None) -> None:
    assert display_url(url) == shown


def test_a_bad_base_url_is_not_echoed() -> None:
    with pytest.raises(LLMConfigError, match="http://") as info:
        ModelSpec.parse("openai/x", base_url=PASTED)
    assert PASTED not in str(info.value)


def test_url_credentials_stay_out_of_reprs_and_the_cache(
    llm_server: ScriptedLLMServer, make_client: MakeClient, tmp_path: Path, opened_clients: list[LLMClient]
) -> None:
    url = f"http://user:{CREDENTIAL}@127.0.0.1:{llm_server.port}/v1"
    client = LLMClient("openai/scripted-model", base_url=url, cache_dir=tmp_path / "cache", max_retries=1)
    opened_clients.append(client)
    assert client.complete_sync("Is a spoon a lever?").text == "ok"
    llm_server.enqueue(Fault.status(500), Fault.status(500))
    with pytest.raises(LLMCallError) as info:
        client.complete_sync("another question")

    texts = [repr(client), repr(client.spec), str(client.spec), client.spec.model_dump_json()]
    texts += [str(info.value), "".join(traceback.format_exception(info.value))]
    texts += [p.read_text() for p in (tmp_path / "cache").rglob("*.json")]
    assert all(CREDENTIAL not in text for text in texts)
    assert f"127.0.0.1:{llm_server.port}/v1" in texts[-1]  # the cache still says which server answered
    # The credentials are still used (the spec keeps them for the SDK).
    assert client.spec.base_url == url
    # Credentials do not split the cache: the same server without them hits the same entry.
    assert make_client().complete_sync("Is a spoon a lever?").cache_hit


@pytest.mark.filterwarnings("ignore:.*ReadOnly. qualifier:UserWarning")  # litellm 1.106.2 with pydantic 2.14
def test_providers_key_variables_are_redacted_from_the_cache(
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    opened_clients: list[LLMClient],
) -> None:
    if not litellm_available():  # not importorskip: a bare "import litellm" would fetch its price list
        pytest.skip("litellm is not installed")
    secret = "hv-secret-key-0123456789"
    monkeypatch.setenv("HOSTED_VLLM_API_KEY", secret)
    llm_server.enqueue(f"I was called with {secret}")  # a reply that echoes the key
    client = LLMClient("hosted_vllm/scripted-model", base_url=llm_server.base_url, cache_dir=tmp_path / "cache")
    opened_clients.append(client)

    reply = client.complete_sync("Is a spoon a lever?")

    assert reply.text == "I was called with [REDACTED]"  # a key echoed back never leaves the client
    assert llm_server.requests[0].headers["authorization"] == f"Bearer {secret}"
    (entry,) = (tmp_path / "cache").rglob("*.json")
    assert secret not in entry.read_text() and "[REDACTED]" in entry.read_text()


# -- every credential form, generated ------------------------------------------------------

SECRET_NAMES = ("api-key", "key", "token", "access_token", "sig", "client_secret", "X-Amz-Signature", "apiKey")
secret = st.text(string.ascii_letters + string.digits + "-._~!$&'()*+,;=:@/?#%[] ", min_size=2, max_size=16).map(
    lambda tail: f"SECRET{tail}"  # every raw or URL-encoded form of it holds "SECRET"
)


def _encoded(text: str, times: int) -> str:
    for _ in range(times):
        text = quote(text, safe="")
    return text


@st.composite
def url_with_credential(draw: st.DrawFn) -> tuple[str, str, str | None]:
    """A server URL carrying ``secret`` in one of the forms a URL can: the URL, the secret, the userinfo."""
    value = draw(secret)
    user = draw(st.sampled_from(["alice", "a.b-c", "u%40x"]))
    form = draw(st.sampled_from(["password", "user-token", "query", "query-and-password"]))
    host = draw(st.sampled_from(["127.0.0.1:8000", "llm.example.com", "[::1]:9"]))
    extra = draw(st.sampled_from(["", "&temperature=0", "&x=1&y=2"]))
    name = draw(st.sampled_from(SECRET_NAMES))
    encoded = quote(value, safe="")
    if form == "password":
        return f"http://{user}:{encoded}@{host}/v1", value, f"{user}:{encoded}"
    if form == "user-token":
        return f"https://{encoded}@{host}/v1", value, encoded
    if form == "query":
        return f"http://{host}/v1?{name}={encoded}{extra}", value, None
    return f"http://{user}:{encoded}@{host}/v1?{name}={encoded}{extra}", value, f"{user}:{encoded}"


def basic(userinfo: str) -> str:
    """The ``Authorization: Basic`` token an HTTP client sends for a URL's userinfo (as httpx does)."""
    user, _, password = userinfo.partition(":")
    return base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()


def _leaks(text: str, value: str, userinfo: str | None) -> list[str]:
    forms = {"SECRET", base64.b64encode(value.encode()).decode()[:12]}
    if userinfo is not None:
        forms |= {basic(userinfo), basic(userinfo).rstrip("=")}
    return [form for form in forms if form in text]


@settings(max_examples=200, deadline=None)
@given(case=url_with_credential(), times=st.integers(0, 2), tail=st.sampled_from(["", "&temperature=0&few_shot=1"]))
def test_safe_spec_removes_every_credential_form(case: tuple[str, str, str | None], times: int, tail: str) -> None:
    url, value, userinfo = case
    spec = f"openai/m?base_url={_encoded(url, times)}{tail}"

    safe = safe_spec(spec)

    assert not _leaks(safe, value, userinfo), safe
    assert safe_spec(safe) == safe  # nothing left to remove
    if tail:
        assert safe.endswith(tail)  # the settings after the URL are kept


@settings(max_examples=200, deadline=None)
@given(case=url_with_credential())
def test_display_url_and_the_spec_dump_remove_every_credential_form(case: tuple[str, str, str | None]) -> None:
    url, value, userinfo = case
    spec = ModelSpec.parse("openai/m", base_url=url)
    texts = [str(display_url(url)), repr(spec), str(spec), spec.model_dump_json(), str(spec.model_dump())]
    assert not [leak for text in texts for leak in _leaks(text, value, userinfo)], texts
    assert spec.base_url == url  # still used
    assert spec.merge(temperature=0.5).base_url == url  # and kept through a merge


@settings(max_examples=200, deadline=None)
@given(case=url_with_credential(), key=secret)
def test_redact_removes_every_form_a_server_can_echo(case: tuple[str, str, str | None], key: str) -> None:
    url, value, userinfo = case
    echoed = [
        f"POST {urlsplit(url).path}?{urlsplit(url).query}",
        f"Authorization: Bearer {key}",
        f"'authorization': 'Basic {basic(userinfo or 'u:' + value)}', the token alone: {basic(userinfo or 'u:x')}",
        f"url={quote(url, safe='')} raw={url} value={value} quoted={quote(value, safe='')} plus={quote_plus(value)}",
        f"b64={base64.b64encode(value.encode()).decode()} key={quote(key, safe='')}",
    ]
    text = redact(" | ".join(echoed), [key, *url_secrets(url)])
    assert not _leaks(text, value, userinfo) and not _leaks(text, key, None), text


def test_redact_keeps_prose() -> None:
    prose = "Basic authentication failed; a basic understanding; the bearer of bad news; max_tokens=5"
    assert redact(prose) == prose
    assert safe_spec("openai/m?max_tokens=5&api_key_env=MY_KEY&temperature=0") == (
        "openai/m?max_tokens=5&api_key_env=MY_KEY&temperature=0"
    )
    assert safe_spec("heuristic") == "heuristic"


@pytest.mark.parametrize("userinfo", ["", "alice:pw-SECRET-0123456789abcdef@"], ids=["bearer", "basic"])
def test_a_long_error_is_redacted_before_it_is_cut(
    llm_server: ScriptedLLMServer, tmp_path: Path, api_key: str, userinfo: str
) -> None:
    """Wherever the message's length limit falls, no piece of the echoed key or ``Basic`` token survives."""
    secret = f"Basic {basic(userinfo.rstrip('@'))}" if userinfo else f"Bearer {api_key}"
    messages = []
    for pad in range(330, 400):  # moves the Authorization header across the cut, a character at a time
        url = f"http://{userinfo}127.0.0.1:{llm_server.port}/v1?pad={'p' * pad}"
        llm_server.enqueue(Fault.echo(400))
        with LLMClient("openai/scripted-model", base_url=url, cache_dir=tmp_path, max_retries=0) as client:
            with pytest.raises(LLMCallError) as info:
                client.complete_sync("Is a spoon a lever?")
        messages.append(str(info.value))
    assert any(f"Authorization: {secret.split()[0]} [REDACTED]" in message for message in messages)
    token = secret.split()[1]
    pieces = {token[i : i + 6] for i in range(len(token) - 5)}
    assert not [piece for piece in pieces for message in messages if piece in message]
