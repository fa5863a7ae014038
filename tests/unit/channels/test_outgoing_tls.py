"""Outgoing clients share one TLS context and still verify: an untrusted certificate gets nothing sent.

A receiver on loopback serves HTTPS with a self-signed certificate (made here with `cryptography`).
A webhook notice, a channel POST and the OIDC key fetch each fail with a certificate error, and the
receiver never reads a request.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from hitl.settings import get_settings
from server.channels import delivery
from server.coordination import outbox
from server.http.outgoing import tls
from server.identity import oidc_keys

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that no CA signed, and its key (PEM files)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    loopback = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=1))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(loopback, critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "receiver.pem", folder / "receiver.key"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_file, key_file


@pytest.fixture
def untrusted(tmp_path) -> Iterator[tuple[str, Path, list[str]]]:
    """An HTTPS receiver on loopback, its certificate self-signed: URL, certificate, paths it was sent."""
    received: list[str] = []

    class Receiver(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            received.append(self.path)
            self.send_response(200)
            self.end_headers()

        def do_POST(self) -> None:
            self.do_GET()

        def log_message(self, *_args: object) -> None:
            pass

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert_file, key_file = self_signed(tmp_path)
    context.load_cert_chain(cert_file, key_file)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", cert_file, received
    finally:
        server.shutdown()
        server.server_close()


def test_every_outgoing_client_shares_one_context_that_verifies():
    """tls(): one context per process, certificates and host names checked."""
    assert tls() is tls()
    assert tls().verify_mode == ssl.CERT_REQUIRED
    assert tls().check_hostname


async def test_nothing_is_sent_to_a_receiver_whose_certificate_no_ca_signed(untrusted):
    """webhook notice, channel POST, OIDC key fetch: each a certificate error; the receiver read nothing.

    The same receiver answers a client that trusts its certificate: only the CA is missing.
    """
    url, cert_file, received = untrusted
    notice = outbox.Notice.post("notice-1", "webhook", f"{url}/hook", {"event": "approval_pending"})
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        await outbox.attempt(notice, get_settings())
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        await delivery.post_json(f"{url}/slack", {"text": "approve?"})()
    async with oidc_keys.new_client() as client:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await client.get(f"{url}/.well-known/jwks.json")
    assert received == []
    async with httpx.AsyncClient(verify=ssl.create_default_context(cafile=cert_file)) as trusting:
        assert (await trusting.get(f"{url}/control")).status_code == 200
    assert received == ["/control"]
