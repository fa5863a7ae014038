"""The demo's MCP server `billing`: invoices over streamable HTTP, as a team's own system would serve them.

`python -m services.billing_mcp --port 8790` (`make dev` starts it; the compose stack runs it as a
service). Its tools: `lookup_invoice` and `payment_method` (read-only), `void_invoice` (destructive),
and `issue_credit_note` (no annotations), which asks the customer for a reason and then to confirm the
amount, by MCP's multi round-trip requests: it keeps nothing between rounds, so an answer given days
later, on any replica, still completes the call. Every request must carry the `Authorization` the
deployment sets (`BILLING_MCP_AUTHORIZATION`), and every call the identity it acts for (the agent's
`hitl/acting_for`); a call without one is refused. Data in the business database (`services.invoices`).
"""

from __future__ import annotations

import argparse
import hmac
import json
import socket
import sys
import uuid
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    ToolAnnotations,
)
from starlette.responses import JSONResponse

from agents.settings import demo_settings
from services.errors import BusinessRuleError
from services.registry import default_services

if TYPE_CHECKING:
    from collections.abc import Callable

    from starlette.types import ASGIApp, Receive, Scope, Send

    from services.invoices import Invoices

STAFF = frozenset({"reviewer", "supervisor"})


def acting_for(ctx: Context) -> str | None:
    """Whose invoices a call may touch: the customer it acts for, None for staff.

    Raises:
        BusinessRuleError: the call names nobody it acts for.
    """
    meta: Any = ctx.request_context.meta or {}
    person = meta.get("hitl/acting_for") if isinstance(meta, dict) else None
    if not isinstance(person, dict) or not isinstance(person.get("identity"), str) or not person["identity"]:
        msg = "This call names nobody it acts for (hitl/acting_for); billing refuses it."
        raise BusinessRuleError(msg)
    roles = person.get("roles")
    return None if isinstance(roles, list) and STAFF & set(roles) else person["identity"]


def tool_call_id(ctx: Context) -> str:
    """The agent's id of this call: what a write is recorded under, so a call run again writes nothing more.

    Raises:
        BusinessRuleError: the call carries none.
    """
    meta: Any = ctx.request_context.meta or {}
    found = meta.get("hitl/tool_call_id") if isinstance(meta, dict) else None
    if not isinstance(found, str) or not found:
        msg = "This call carries no hitl/tool_call_id; billing writes nothing without one."
        raise BusinessRuleError(msg)
    return found


def build(invoices: Callable[[], Invoices]) -> MCPServer[Any]:
    """The `billing` MCP server over `invoices`."""
    billing: MCPServer[Any] = MCPServer(
        "billing", version="1.0", instructions="Invoices of the shop.", log_level="WARNING"
    )

    @billing.tool(annotations=ToolAnnotations(read_only_hint=True))
    def lookup_invoice(invoice_id: str, ctx: Context) -> str:
        """Look an invoice up: its order, amount, status and what was credited on it."""
        invoice = invoices().get(invoice_id, owner=acting_for(ctx))
        return (
            f"Invoice {invoice['invoice_id']} for order {invoice['order_id']}: {invoice['amount']:g}, "
            f"{invoice['status']}, credited {invoice['credited']:g}."
        )

    @billing.tool(annotations=ToolAnnotations(read_only_hint=True))
    def payment_method(invoice_id: str, ctx: Context) -> str:
        """The payment method an invoice was paid with (masked)."""
        invoice = invoices().get(invoice_id, owner=acting_for(ctx))
        digits = sum(ord(c) for c in invoice["invoice_id"]) % 10_000
        return f"Invoice {invoice['invoice_id']} was paid by card ending {digits:04d}."

    @billing.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=True))
    def void_invoice(invoice_id: str, ctx: Context) -> str:
        """Void an open invoice without credit notes."""
        invoice = invoices().void(invoice_id, tool_call_id=tool_call_id(ctx), owner=acting_for(ctx))
        return f"Invoice {invoice['invoice_id']} is void."

    @billing.tool()
    def issue_credit_note(invoice_id: str, amount: float, ctx: Context) -> str | InputRequiredResult:
        """Give part of an invoice back as a credit note; asks the customer why, then to confirm it."""
        owner = acting_for(ctx)
        invoice = invoices().get(invoice_id, owner=owner)
        state = json.loads(ctx.request_state) if ctx.request_state else {"step": "reason"}
        answer = _answer(ctx, state.get("key"))
        if state["step"] == "reason" and answer is None:
            return _ask(
                state | {"step": "reason"}, f"Why should {invoice_id} be credited {amount:g}?", REASON
            )
        if answer is not None and answer.action != "accept":
            said = "declined" if answer.action == "decline" else "cancelled"
            return (
                f"No credit note written on {invoice_id}: the customer {said} the {state['step']} question."
            )
        if state["step"] == "reason":
            reason = str((answer.content or {}).get("reason") if answer else "")
            question = f"Credit {amount:g} on {invoice_id} (invoice {invoice['amount']:g})?"
            return _ask({"step": "confirm", "reason": reason}, question, CONFIRM)
        if not (answer and (answer.content or {}).get("confirm") is True):
            return f"No credit note written on {invoice_id}: the amount was not confirmed."
        note = invoices().credit(
            invoice_id, amount=amount, reason=state["reason"], tool_call_id=tool_call_id(ctx), owner=owner
        )
        return f"Credit note {note['credit_note_id']} of {note['amount']:g} on {invoice_id}: {note['reason']}"

    return billing


REASON = {
    "type": "object",
    "properties": {"reason": {"type": "string", "title": "Reason", "minLength": 3, "maxLength": 500}},
    "required": ["reason"],
}
CONFIRM = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Confirm the amount"}},
    "required": ["confirm"],
}


def _ask(state: dict[str, Any], message: str, schema: dict[str, Any]) -> InputRequiredResult:
    """One question, under a key of its own (new on every round: a client must not rely on keys)."""
    key = uuid.uuid4().hex[:12]
    request = ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))
    return InputRequiredResult(input_requests={key: request}, request_state=json.dumps({**state, "key": key}))


def _answer(ctx: Context, key: object) -> ElicitResult | None:
    found = (ctx.input_responses or {}).get(key) if isinstance(key, str) else None
    return found if isinstance(found, ElicitResult) else None


class BearerRequired:
    """Every request carries the `Authorization` the deployment configured, or gets 401."""

    def __init__(self, app: ASGIApp, expected: str) -> None:
        """Guard `app` with `expected` (the whole header value, e.g. `Bearer <token>`)."""
        self.app, self.expected = app, expected.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse an HTTP request without the expected header; pass everything else on."""
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await JSONResponse({"detail": "billing needs its bearer token."}, status_code=401)(
                    scope, receive, send
                )
                return
        await self.app(scope, receive, send)


def app(host: str) -> ASGIApp:
    """The server as an ASGI app behind its bearer check.

    Raises:
        SystemExit: `BILLING_MCP_AUTHORIZATION` is empty (billing never serves without it).
    """
    expected = demo_settings().billing_mcp_authorization.get_secret_value()
    if not expected:
        sys.stderr.write("BILLING_MCP_AUTHORIZATION is empty: billing serves nobody without it.\n")
        raise SystemExit(1)
    server = build(lambda: default_services().invoices)
    return BearerRequired(
        server.streamable_http_app(stateless_http=True, json_response=True, host=host), expected
    )


def taken(port: int, host: str = "127.0.0.1") -> str | None:
    """Why `host:port` cannot be served on (a live listener there), or None when it is free."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            return error.strerror or str(error)
    return None


def main(argv: list[str] | None = None) -> int:
    """Serve billing on `--host`:`--port` until stopped."""
    import uvicorn  # noqa: PLC0415  (only the served process needs it)

    parser = argparse.ArgumentParser(prog="python -m services.billing_mcp", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8790)
    args = parser.parse_args(argv)
    if args.host == "127.0.0.1" and (reason := taken(args.port)) is not None:
        sys.stderr.write(
            f"Port {args.port} on 127.0.0.1 is taken ({reason}): billing cannot serve there.\n"
            f"Stop what runs there, or serve on another port: make dev MCP_PORT={args.port + 1}\n"
        )
        return 1
    sys.stdout.write(f"MCP server billing: http://{args.host}:{args.port}/mcp\n")
    sys.stdout.flush()
    uvicorn.run(app(args.host), host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
