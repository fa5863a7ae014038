"""The server's side of signed receipts: sign each accepted decision, publish the keys, verify a thread.

`sign` runs as `server.decisions.store.accept` records every accepted decision (people's and the
watcher's); `GET /.well-known/jwks.json` is public (anyone may check a receipt);
`GET /audit/{thread_id}/verification` tells a client which of a thread's receipts verify
(the web app's "verified" mark), to whoever may read the thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langgraph_sdk import get_client
from starlette.responses import JSONResponse

from hitl.gate.trusted_state import trusted_receipts
from hitl.proof.policy_revision import revision
from hitl.proof.receipt_keys import keyring
from hitl.proof.signed_receipts import sign as sign_receipt
from hitl.proof.verification import Evidence, verify
from server.identity.access import as_server, is_not_found
from server.records import audit

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient
    from starlette.requests import Request

    from hitl.contracts.records import ApprovalReceipt
    from hitl.policy.overrides import PolicyCatalog
    from server.identity.users import User

keyring()  # read (or made) once, at import: never as blocking file I/O inside a request


def sign(
    thread_id: str, receipts: list[ApprovalReceipt], catalog: PolicyCatalog | None, audit_head: str
) -> list[ApprovalReceipt]:
    """`receipts` signed, each bound to the policy's revision and `audit_head`, the trail's last hash.

    Called with the thread's trail locked (`server.decisions.store.accept`), so the head is the one
    the receipts' records are chained after.
    """
    bound = {"policy_revision": _revision(catalog), "audit_head": audit_head}
    return [sign_receipt(r, thread_id, keyring(), **bound) for r in receipts]  # type: ignore[misc]


def revision_of(catalog: PolicyCatalog | None) -> str:
    """The revision of the policy `catalog` holds, as receipts bind it (computed once per agent)."""
    return _revision(catalog)


def _revision(catalog: PolicyCatalog | None) -> str:
    key = catalog.agent if catalog is not None else ""
    if key not in _revisions:
        _revisions[key] = revision(catalog)
    return _revisions[key]


_revisions: dict[str, str] = {}
"""Each served agent's policy revision (its catalog is built once per process)."""


async def jwks(_request: Request) -> JSONResponse:
    """GET /.well-known/jwks.json: every public key receipts are signed with (old ones stay)."""
    return JSONResponse(keyring().jwks, headers={"Cache-Control": "public, max-age=300"})


async def evidence(client: LangGraphClient, thread_id: str) -> Evidence:
    """What verifying `thread_id` reads, as the server has it (a deleted thread: its trail alone)."""
    try:
        with as_server():
            state = dict(await client.threads.get_state(thread_id))
    except Exception as error:
        if not is_not_found(error):
            raise
        state = {}
    values = state.get("values")
    receipts = trusted_receipts(
        values.get("approval_receipts") if isinstance(values, dict) else None, thread_id
    )
    records, head = await audit.trail_with_head(thread_id)
    return Evidence(
        thread_id=thread_id,
        jwks=keyring().jwks,
        records=[dict(r) for r in records],
        head=head,
        receipts=[dict(r) for r in receipts],
    )


async def verification(request: Request, user: User) -> JSONResponse:
    """GET /audit/{thread_id}/verification: each receipt's verdict and the trail's problems."""
    thread_id = request.path_params["thread_id"]
    if not await audit.readable(thread_id, user):
        return _not_found(thread_id)
    report: dict[str, Any] = verify(await evidence(get_client(), thread_id)).as_json()
    return JSONResponse(report)


def _not_found(thread_id: str) -> JSONResponse:
    return JSONResponse({"detail": f"Thread {thread_id} not found."}, status_code=404)
