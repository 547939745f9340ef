"""A model server whose TLS certificate is not trusted is named as such, with what to do; it was a bare
"Connection error".

A real HTTPS server on 127.0.0.1 with a self-signed certificate made here (``cryptography``, else the
``openssl`` command) stands in for a server whose certificate this machine does not trust; the scripted
server behind it answers once the client trusts it. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import shutil
import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer

from lateralgym.agents import LLMCallError, LLMClient
from lateralgym.cli import main
from lateralgym.episodes import EpisodeEnd, read_log

EXE = [sys.executable, "-m", "lateralgym.cli"]


def self_signed(folder: Path) -> tuple[Path, Path]:
    """(certificate, key) in PEM for 127.0.0.1, signed by itself; skips when it cannot be made here."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        if shutil.which("openssl") is None:
            pytest.skip("needs the cryptography package or the openssl command to make a certificate")
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
            + ["-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1"]
            + ["-addext", "subjectAltName=IP:127.0.0.1"],
            check=True,
            capture_output=True,
        )
        return cert, key
    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    signed = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(private, hashes.SHA256())
    )
    cert.write_bytes(signed.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert, key


@pytest.fixture
def https_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ScriptedLLMServer, Path]]:
    """The scripted server behind TLS with a self-signed certificate, and that certificate; no proxy, and
    no CA of the environment's, between the client and it."""
    for name in list(os.environ):
        if name.lower().endswith("_proxy") or name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
            monkeypatch.delenv(name)
    cert, key = self_signed(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    server = ScriptedLLMServer(default_reply="Answer: A", listener=context.wrap_socket(listener, server_side=True))
    server.start()
    yield server, cert
    server.stop()


def https_url(server: ScriptedLLMServer) -> str:
    return f"https://127.0.0.1:{server.port}/v1"


def llm_run(url: str, out: Path, *flags: str) -> list[str]:
    player = "openai/p?max_retries=2&timeout=10"
    return ["run", "riddlesense", "--player", player, "--base-url", url, "--limit", "1", "--no-cache"] + [
        "--no-progress",
        "--out",
        str(out),
        *flags,
    ]


def test_the_client_names_an_untrusted_certificate_and_does_not_retry_it(
    https_server: tuple[ScriptedLLMServer, Path], tmp_path: Path
) -> None:
    server, _ = https_server
    client = LLMClient("openai/m", base_url=https_url(server), cache_dir=tmp_path / "cache", max_retries=2)
    try:
        with pytest.raises(LLMCallError) as failed:
            client.complete_sync("hello", use_cache=False)
    finally:
        client.close()
    error = failed.value
    assert error.kind == "tls" and error.attempts == 1 and not error.retryable  # it stays untrusted
    assert "the server's TLS certificate could not be verified (self-signed certificate)" in str(error)
    assert "SSL_CERT_FILE" in str(error) and "http://" in str(error)
    assert "\n" not in str(error) and server.requests == []  # nothing was sent


def test_the_check_before_a_run_says_so_in_one_line(
    https_server: tuple[ScriptedLLMServer, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server, _ = https_server
    assert main(llm_run(https_url(server), tmp_path / "runs")) == 4
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "failed the check before the run: the server's TLS certificate could not be verified" in err
    assert "set SSL_CERT_FILE to the CA certificate (PEM) that signed it" in err
    assert "Connection error" not in err and not (tmp_path / "runs").exists()


def test_an_episode_ended_by_it_is_counted_as_tls(
    https_server: tuple[ScriptedLLMServer, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server, _ = https_server
    assert main(llm_run(https_url(server), tmp_path / "runs", "--no-check")) == 4
    captured = capsys.readouterr()
    assert "errors by kind: tls x 1" in captured.out
    (run_dir,) = (tmp_path / "runs").iterdir()
    (end,) = [r for r in read_log(run_dir / "steps.jsonl") if isinstance(r, EpisodeEnd)]
    assert end.error is not None and "not retried: tls: the server's TLS certificate could not be verified" in end.error


def test_trusting_the_certificate_as_the_message_says_makes_the_run_work(
    https_server: tuple[ScriptedLLMServer, Path], tmp_path: Path
) -> None:
    server, cert = https_server
    done = subprocess.run(
        [*EXE, *llm_run(https_url(server), tmp_path / "runs")],
        env={**os.environ, "SSL_CERT_FILE": str(cert)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert server.chat_calls == 1


def test_a_certificate_for_another_name_says_to_use_its_name(
    https_server: tuple[ScriptedLLMServer, Path], tmp_path: Path
) -> None:
    server, cert = https_server  # trusted, but made for 127.0.0.1: no CA to trust fixes "localhost"
    done = subprocess.run(
        [*EXE, *llm_run(f"https://localhost:{server.port}/v1", tmp_path / "runs")],
        env={**os.environ, "SSL_CERT_FILE": str(cert)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 4, done.stderr
    assert done.stderr.strip().endswith(
        "the server's TLS certificate could not be verified (Hostname mismatch, certificate is not valid for "
        "'localhost'); use a host name its certificate names in the URL; nothing was run; fix that and run again "
        "(--no-check skips the check)"
    ), done.stderr


def test_https_to_a_server_without_tls_asks_whether_it_speaks_https(tmp_path: Path) -> None:
    with ScriptedLLMServer() as plain:
        url = f"https://127.0.0.1:{plain.port}/v1"
        client = LLMClient("openai/m", base_url=url, cache_dir=tmp_path / "cache", max_retries=0)
        try:
            with pytest.raises(LLMCallError) as failed:
                client.complete_sync("hello", use_cache=False)
        finally:
            client.close()
    assert failed.value.kind == "tls"
    assert "the TLS handshake with the server failed" in str(failed.value)
    assert "does the server speak https? (one without TLS is reached over http://)" in str(failed.value)
