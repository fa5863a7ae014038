"""`hitl inbox`'s table: a quorum's progress reads the same whatever other rows wait beside it."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from hitl.cli.queue import inbox_table

PROGRESS = "1 of 2 approvals: supervisor1"


def row(thread: str, description: str, **extra: Any) -> dict[str, Any]:
    """A `GET /inbox` row as the server sends it."""
    return {
        "thread_id": thread,
        "agent": "billing",
        "tool": "pay_invoice",
        "description": description,
        "allowed_decisions": ["approve", "edit", "reject"],
        "group": "supervisor",
        "required_role": "supervisor",
        "owner": "requester1",
        "age_seconds": 60,
        **extra,
    }


def printed(items: list[dict[str, Any]]) -> list[str]:
    """The table's lines at the width the CLI's tests give it (COLUMNS=200)."""
    console = Console(width=200)
    with console.capture() as captured:
        console.print(inbox_table({"items": items, "total": len(items)}))
    return captured.get().splitlines()


def test_a_quorums_progress_stays_on_one_line_beside_long_rows():
    """alone, or beside rows with long descriptions and another call waiting: the progress is on one line."""
    quorum = row(
        "01a24f8a-1abb-7428-9014-9258870477cd",
        "Pay 2400 on invoice INV-785098255 (customer: requester1, Test Customer)",
        approvals={"required": 2, "approved_by": ["supervisor1"]},
    )
    crowded = [
        row(
            f"01a24f8a-0306-7679-9198-45bb9c43945{n}",
            f"Pay {n}00 on invoice INV-93803651{n} (customer: requester1, Test Customer)",
            also_waiting=[{"tool": "ask_for_details", "required_role": "owner"}],
        )
        for n in range(6)
    ]
    for items in ([quorum], [*crowded, quorum]):
        lines = printed(items)
        assert any(PROGRESS in line for line in lines), "\n".join(lines)
