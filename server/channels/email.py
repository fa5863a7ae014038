"""E-mail notices: the people who may decide a waiting approval get a link that opens it in the web app.

A link never decides by itself (mail scanners follow links): it opens the thread, and deciding
needs the signed-in user. Recipients are the `HITL_USERS` users who may decide the approval
(its role, an escalation's, or the owner for a form and their own questions) and have an address in
`HITL_USER_EMAILS`, except the people who asked for it (they may not approve it), unless it is theirs.
Sent with `aiosmtplib` by `server.coordination.outbox` (no blocking I/O on the server's event
loop), one message per person, each delivered at least once with a stable Message-ID. A group's shared
address (`HITL_GROUP_EMAILS`) gets the notices of what the group decides too. Not for OIDC users,
whom the server only meets when they call.
"""

from __future__ import annotations

import json
from email.message import EmailMessage
from typing import TYPE_CHECKING, Any

from hitl.contracts.asks import read
from hitl.contracts.interrupts import OWNER
from hitl.policy.groups import group_map
from server.channels.slack_message import headline, link_to_open, subjects, thread_link, who_decides
from server.identity.users import directory

if TYPE_CHECKING:
    from hitl.settings import Settings
    from server.decisions.pending import Pending
    from server.identity.users import User

MAX_ARGS_CHARS = 4000


def addresses(settings: Settings) -> dict[str, str]:
    """`HITL_USER_EMAILS` as user name to address."""
    pairs = (e.strip().partition(":") for e in settings.hitl_user_emails.split(","))
    return {name.strip(): address.strip() for name, _, address in pairs if name.strip() and "@" in address}


def recipients(settings: Settings, pending: Pending, owner: str | None) -> list[tuple[User, str]]:
    """Who may decide `pending` and has an address; not the people who asked for it, unless it is theirs.

    Theirs (`hitl.contracts.asks`): an owner's own question, or calls whose policy lets the asker decide
    (`self_approval`), not escalated. Anyone else who asked may not approve it, so is not told to.
    """
    value = pending.value if isinstance(pending.value, dict) else {}
    listed = value.get("requested_by")
    askers = {str(p) for p in listed} if isinstance(listed, list) else set()
    asked = read(value)
    theirs = (
        asked is not None
        and pending.escalated_to is None
        and all(ask.decider == OWNER or ask.self_approval for ask in asked.asks)
    )
    known = addresses(settings)
    return [
        (user, known[user.identity])
        for user in directory().users()
        if user.identity in known
        and (theirs or user.identity not in askers)
        and all(user.may_decide(d, owner) for d in pending.deciders)
    ]


def notice(
    settings: Settings, to: str, pending: Pending, rows: list[dict[str, Any]], event: str
) -> EmailMessage:
    """The e-mail telling `to` that `pending` waits: what, who asks, args, deadline, who decides, the link."""
    first = rows[0]
    thread_id = str(first["thread_id"])
    named = subjects(pending, rows)
    tools = ", ".join(named)
    said = headline(rows, event)
    lines = [
        f"{said}: {tools}, asked by {first.get('agent')} for {first.get('owner') or 'unknown'}.",
        "",
    ]
    for row, subject in zip(rows, named, strict=True):
        args = json.dumps(row.get("args") or {}, indent=2, ensure_ascii=False, default=str)[:MAX_ARGS_CHARS]
        lines += [f"{subject}: {row.get('description') or ''}".strip(), args, ""]
    if (url := link_to_open(pending)) is not None:
        lines += [f"Link to open (the server's, shown as sent): {url}", ""]
    lines += [
        f"Who must decide: {who_decides(first)}",
        f"Deadline: {first.get('deadline') or 'none'}",
        "",
        f"Open it in the web app: {thread_link(settings.hitl_public_url, thread_id)}",
        "The link only opens the approval; you decide there, signed in. Nothing is decided by e-mail.",
        f"(interrupt {pending.id})",
    ]
    message = EmailMessage()
    message["From"] = settings.hitl_smtp_sender
    message["To"] = to
    message["Subject"] = f"[HITL] {said}: {tools} ({first.get('agent')})"
    message.set_content("\n".join(lines))
    return message


def notices(
    settings: Settings, thread: dict[str, Any], pending: Pending, rows: list[dict[str, Any]], event: str
) -> list[tuple[str, EmailMessage]]:
    """(address, message) for each person to tell (see `recipients`); the notice outbox sends them."""
    del thread
    owner = rows[0].get("owner") if rows else None
    people = [
        address for _, address in recipients(settings, pending, owner if isinstance(owner, str) else None)
    ]
    to = list(dict.fromkeys([*people, *group_addresses(settings, pending)]))
    return [(address, notice(settings, address, pending, rows, event)) for address in to]


def group_addresses(settings: Settings, pending: Pending) -> list[str]:
    """The shared addresses (`HITL_GROUP_EMAILS`) of the groups that decide `pending` (an escalation's)."""
    shared = group_map("HITL_GROUP_EMAILS", settings.hitl_group_emails)
    return [shared[d] for d in sorted(pending.deciders) if d in shared]
