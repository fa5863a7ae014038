"""A stand-in OpenID Connect provider on a free loopback port: publishes keys, signs tokens.

It serves `/.well-known/openid-configuration` and `/jwks.json` from keys generated at test
time, and mints JWTs with any claims or header, including the forged ones tests send.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

AUDIENCE = "hitl-test"
ROLES = "finance-approvers:supervisor,support:reviewer,customers:requester"
ALGORITHM_OF = {"RSA": "RS256", "EC": "ES256", "OKP": "EdDSA"}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Issuer:
    """Keys by `kid`; `published` are the ones its JWKS lists. `fetches` counts JWKS requests."""

    def __init__(self) -> None:
        self.private: dict[str, Any] = {}
        self.published: list[str] = []
        self.fetches = 0
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/jwks.json":
                    issuer.fetches += 1
                    body = issuer.jwks()
                elif self.path == "/.well-known/openid-configuration":
                    body = {"issuer": issuer.url, "jwks_uri": f"{issuer.url}/jwks.json"}
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_args) -> None:
                return

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()

    def add_key(self, kid: str, kty: str = "RSA", *, publish: bool = True) -> None:
        """Generate a key pair (`RSA`, `EC` P-256 or `OKP` Ed25519), and publish it unless told not to."""
        if kty == "RSA":
            self.private[kid] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        elif kty == "EC":
            self.private[kid] = ec.generate_private_key(ec.SECP256R1())
        else:
            self.private[kid] = ed25519.Ed25519PrivateKey.generate()
        if publish:
            self.published.append(kid)

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid in self.published:
            public = self.private[kid].public_key()
            kty = self._kty(kid)
            jwk = json.loads(jwt.get_algorithm_by_name(ALGORITHM_OF[kty]).to_jwk(public))
            keys.append({**jwk, "kid": kid, "use": "sig", "alg": ALGORITHM_OF[kty]})
        return {"keys": keys}

    def _kty(self, kid: str) -> str:
        key = self.private[kid]
        if isinstance(key, rsa.RSAPrivateKey):
            return "RSA"
        return "EC" if isinstance(key, ec.EllipticCurvePrivateKey) else "OKP"

    def claims(self, sub: str, groups: object, **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims = {
            "iss": self.url,
            "aud": AUDIENCE,
            "sub": sub,
            "groups": groups,
            "iat": now,
            "exp": now + 300,
        }
        return {**claims, **overrides}

    def token(
        self, sub: str = "alice", groups: object = ("customers",), kid: str = "", **overrides: Any
    ) -> str:
        """A token signed by `kid` (the first key by default) with the usual claims, `overrides` on top."""
        kid = kid or next(iter(self.private))
        if isinstance(groups, tuple):
            groups = list(groups)
        claims = self.claims(sub, groups, **overrides)
        return jwt.encode(
            claims, self.private[kid], algorithm=ALGORITHM_OF[self._kty(kid)], headers={"kid": kid}
        )

    def unsigned(self, sub: str = "boss", groups: object = ("finance-approvers",)) -> str:
        """A forged `alg: none` token naming the first key."""
        header = {"alg": "none", "typ": "JWT", "kid": next(iter(self.private))}
        payload = self.claims(sub, list(groups) if isinstance(groups, tuple) else groups)
        return f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(payload).encode())}."

    def hs256_with_public_key(self, sub: str = "boss", groups: object = ("finance-approvers",)) -> str:
        """A forged HS256 token whose HMAC secret is the first RSA key's public PEM (alg confusion)."""
        kid = next(iter(self.private))
        pem = (
            self.private[kid]
            .public_key()
            .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        )
        header = {"alg": "HS256", "typ": "JWT", "kid": kid}
        payload = self.claims(sub, list(groups) if isinstance(groups, tuple) else groups)
        signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(payload).encode())}"
        signature = hmac.new(pem, signing_input.encode(), hashlib.sha256).digest()
        return f"{signing_input}.{_b64(signature)}"

    def env(self) -> dict[str, str]:
        """The HITL_OIDC_* settings that trust this issuer."""
        return {
            "HITL_OIDC_ISSUER": self.url,
            "HITL_OIDC_AUDIENCE": AUDIENCE,
            "HITL_OIDC_JWKS_URL": f"{self.url}/jwks.json",
            "HITL_OIDC_ROLE_CLAIM": "groups",
            "HITL_OIDC_NAME_CLAIM": "sub",
            "HITL_OIDC_ROLES": ROLES,
        }
