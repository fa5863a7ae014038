"""Who reviews what in ops: file writes and deletions, SQL that is not a plain read.

Every ops agent works on a real directory, so each of them (the general-purpose subagent
and the deployer included) gates writing files; `file_manager` gates reading them too.
A reviewer decides, or the group `OPS_DECIDER_GROUP` names (e.g. sre).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from hitl.policy.gates import Policy, ToolGate
from services.sql import is_read_only

if TYPE_CHECKING:
    from collections.abc import Mapping

    from hitl.contracts.decisions import DecisionType


SCHEMA_CHANGE = re.compile(r"\b(drop|truncate|alter)\b", re.IGNORECASE)
"""SQL that changes or drops tables (anywhere in the text: comments and strings count too)."""


def sql_approvals(args: Mapping[str, Any]) -> int:
    """Two different people approve SQL that changes the schema; one approves other writes."""
    return 2 if SCHEMA_CHANGE.search(str(args["query"])) else 1


def _describe_write(_name: str, args: Mapping[str, Any]) -> str:
    return f"Write {args['file_path']} ({len(str(args['content']))} characters)"


def _describe_edit(_name: str, args: Mapping[str, Any]) -> str:
    return f"Edit {args['file_path']}: replace {str(args['old_string'])[:60]!r}"


def file_write_policy(decider: str = "reviewer") -> Policy:
    """Writing or editing a workspace file: approve, edit, reject, or respond in the tool's place.

    A reviewer may "always allow" the rest of a thread's writes (`may_allow`).
    """
    every: tuple[DecisionType, ...] = ("approve", "edit", "reject", "respond")
    return {
        "write_file": ToolGate(
            allowed_decisions=every, description=_describe_write, may_allow=True, decider=decider
        ),
        "edit_file": ToolGate(
            allowed_decisions=every, description=_describe_edit, may_allow=True, decider=decider
        ),
    }


def delete_file_gate(decider: str = "reviewer") -> ToolGate:
    """Deleting a workspace file: approve, edit (another path) or reject; "always allow" in a thread."""
    return ToolGate(
        allowed_decisions=("approve", "edit", "reject"),
        description=lambda _n, a: f"Delete {a['path']}",
        may_allow=True,
        decider=decider,
    )


def ops_policy(decider: str = "reviewer") -> Policy:
    """The `ops` agent's policy; `read_data` and SELECTs run without a person, DROP/TRUNCATE/ALTER two."""
    return {
        **file_write_policy(decider),
        "execute_sql": ToolGate(
            allowed_decisions=("approve", "reject"),
            when=lambda args: not is_read_only(str(args["query"])),
            description=lambda _n, a: f"Run SQL: {a['query']}",
            approvals_required=sql_approvals,
            decider=decider,
        ),
        "delete_file": delete_file_gate(decider),
    }


def file_manager_policy(decider: str = "reviewer") -> Policy:
    """`file_manager` overrides the parent: reading a file needs a person too."""
    return {
        **file_write_policy(decider),
        "delete_file": delete_file_gate(decider),
        "read_file": ToolGate(
            allowed_decisions=("approve", "reject"),
            description=lambda _n, a: f"Read {a['file_path']}",
            decider=decider,
        ),
    }


def deployer_policy(decider: str = "reviewer") -> Policy:
    """`deployer` asks for sign-off with `request_approval`; its file writes are gated like the parent's."""
    return file_write_policy(decider)
