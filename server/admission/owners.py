"""Whose thread it is, and whom its runs act for: the owner the server records, and their role.

A thread belongs to its creator (`metadata.owner`, written by the server); the owner's role is
kept beside it (`OWNER_ROLE_KEY`), which no client may write. Runs work on the owner's records
(`hitl.gate.caller.acting_for`), also when someone else's approval resumes them.
"""

from __future__ import annotations

from typing import Any

from server.identity.users import ROLES, User, directory

OWNER_ROLE_KEY = "hitl_owner_role"
"""Thread metadata the server writes beside `owner`: the owner's role when the thread got that owner.

A run works for the thread's owner (`_act_for`). An owner the directory lists acts with the role
it has now; one it does not (a person signed in with OIDC) with the role recorded here, which only
the server writes (clients may not set `hitl*` metadata).
"""


def owned_by(metadata: dict[str, Any], user: User) -> None:
    """Make `user` the owner in `metadata`, with their role."""
    metadata["owner"] = user.identity
    metadata[OWNER_ROLE_KEY] = user.role


def owner_of(thread: dict[str, Any]) -> User:
    """The thread's owner as its runs act for them (see `OWNER_ROLE_KEY`)."""
    metadata = thread.get("metadata") or {}
    owner, role = metadata.get("owner"), metadata.get(OWNER_ROLE_KEY)
    if owner and role in ROLES and directory().named(str(owner)) is None:
        return User(identity=str(owner), role=role)
    return person(owner)


def person(identity: object) -> User:
    """`identity` as the directory lists them now; anyone else is a requester (the least they could be)."""
    return directory().named(str(identity)) or User(identity=str(identity or ""), role="requester")
