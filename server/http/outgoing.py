"""The TLS context every outgoing HTTP client of a process shares (notices, Slack replies, the issuer's keys).

httpx builds a new context for each client it makes, loading the whole CA bundle: about 35 ms of CPU
for every notice sent or key set fetched. The one made here trusts the same CAs (httpx's default:
certifi, or SSL_CERT_FILE / SSL_CERT_DIR) and verifies as strictly. Not for the in-process
`langgraph_sdk.get_client()`, which talks to the server's own app without TLS.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    import ssl


@functools.cache
def tls() -> ssl.SSLContext:
    """The verifying context httpx would make (pass it as `verify=`), made once per process."""
    return httpx.create_ssl_context()
