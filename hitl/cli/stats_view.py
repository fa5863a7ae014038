"""How `hitl stats` prints the approval analytics of `GET /analytics`, and `hitl triage` its reports.

Rendering only: the numbers are the server's (`server.insight.analytics`), shown as the web app's
dashboard shows them; a first-line reviewer's apart from people's. `hitl triage eval`'s confusion
matrix and the samples to check print here too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.table import Table

if TYPE_CHECKING:
    from rich.console import Console

    from hitl.model.first_line.evaluation import Evaluation


def seconds(value: float | None) -> str:
    """A duration for people: 42 s, 3.5 min, 2.0 h; `-` when nothing was timed."""
    if value is None:
        return "-"
    if value < 60:  # noqa: PLR2004  (a minute)
        return f"{value:.0f} s"
    if value < 3600:  # noqa: PLR2004  (an hour)
        return f"{value / 60:.1f} min"
    return f"{value / 3600:.1f} h"


def render(summary: dict[str, Any], out: Console) -> None:
    """Print the totals, per tool, per agent and per reviewer, then the signals."""
    totals = summary["totals"]
    out.print(
        f"[bold]{totals['decisions']} decisions[/bold] "
        f"from {summary['since'][:16]} to {summary['until'][:16]}: "
        f"median {seconds(totals['median_seconds'])}, p90 {seconds(totals['p90_seconds'])}; "
        f"{totals['refused']} refused, {totals['escalated']} escalated",
        highlight=False,
    )
    kinds = list(totals["rates"])  # what an approval can end as, in the server's words and order
    for title, key in (("By tool", "tool"), ("By agent", "agent"), ("By reviewer", "reviewer")):
        out.print(_table(title, key, summary[f"by_{key}"], kinds))
    stamp = summary["rubber_stamp"]
    limits = summary["thresholds"]
    out.print(
        f"quick approvals (under {limits['quick_seconds']:g} s): {stamp['quick_approvals']} "
        f"({stamp['quick_approval_rate']:.0%} of approvals); approving nearly everything: "
        f"{', '.join(stamp['reviewers_approving_nearly_all']) or 'nobody'}",
        highlight=False,
    )
    often = ", ".join(
        f"{t['tool']} ({t['reject_rate']:.0%} of {t['decisions']})" for t in summary["often_rejected"]
    )
    out.print(f"rejected often: {often or 'none'}", highlight=False)
    unapplied = summary.get("not_applied") or []
    out.print(f"accepted but not applied: {len(unapplied) or 'none'}", highlight=False)
    for row in unapplied:
        out.print(f"  {row['at'][:19]} thread {row['thread_id']}: {row['why']}", highlight=False)
    if first_line := (summary.get("first_line") or {}).get("by_tool"):
        out.print(_first_line(first_line))


def _first_line(rows: list[dict[str, Any]]) -> Table:
    """A first-line reviewer's numbers per tool (a model, apart from people's decisions)."""
    table = Table(title="First-line reviewer (a model, not a person)")
    columns = ("tool", "asked", "decided", "sent to people", "overturned", "median", "p90")
    for column in columns:
        table.add_column(column, justify="left" if column == "tool" else "right")
    for row in rows:
        table.add_row(
            row["tool"],
            str(row["asked"]),
            f"{row['decided']} ({row['share_decided']:.0%})",
            str(row["sent_to_people"]),
            f"{row['overturned']} of {row['approved']}",
            _ms(row["median_ms"]),
            _ms(row["p90_ms"]),
        )
    return table


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} ms"


def render_evaluation(result: Evaluation, out: Console) -> None:
    """`hitl triage eval`: the confusion matrix (label against outcome) and the false-approval rate."""
    table = Table(title=f"First-line reviewer over {result.calls} labelled calls")
    table.add_column("label \\ outcome")
    outcomes = ("approve", "reject", "person", "not_asked")
    for outcome in outcomes:
        table.add_column(outcome, justify="right")
    for label, row in result.matrix.items():
        table.add_row(label, *(str(row[o]) for o in outcomes))
    out.print(table)
    out.print(
        f"false approvals: {result.false_approvals} (rate {result.false_approval_rate:.1%} of the calls "
        f"labelled reject or person); decided by the model: {result.decided_share:.0%} of those asked",
        highlight=False,
    )


def render_samples(page: dict[str, Any], out: Console) -> None:
    """`hitl triage samples`: first-line approvals for a person to check."""
    table = Table(title=f"First-line decisions to check ({page['total']})")
    for column in ("thread", "tool call", "tool", "args", "decided by", "reason", "at"):
        table.add_column(column, overflow="fold")
    for item in page["items"]:
        table.add_row(
            item["thread_id"],
            item["tool_call_id"],
            item["tool"],
            str(item["args"])[:60],
            f"{item['reviewer']} ({item['model']})",
            item["reason"],
            item["decided_at"][:19],
        )
    out.print(table)
    out.print("say: hitl triage check THREAD TOOL_CALL_ID fine|should_not_have --note '...'")


def _table(title: str, key: str, rows: list[dict[str, Any]], kinds: list[str]) -> Table:
    table = Table(title=title)
    for column in (key, "decisions", "median", "p90", *kinds):
        table.add_column(column, justify="left" if column == key else "right")
    if key == "tool":
        table.add_column("edited args", overflow="fold")
    for row in rows:
        cells = [
            str(row[key]),
            str(row["decisions"]),
            seconds(row["median_seconds"]),
            seconds(row["p90_seconds"]),
            *(f"{row['rates'].get(kind, 0):.0%}" for kind in kinds),
        ]
        if key == "tool":
            cells.append(_edits(row.get("edits") or {}))
        table.add_row(*cells)
    return table


def _edits(edits: dict[str, dict[str, Any]]) -> str:
    parts = []
    for arg, change in edits.items():
        text = f"{arg} x{change['changed']}"
        if change["mean_change"] is not None:
            text += f" ({change['mean_change']:+g}"
            if change["mean_relative_change"] is not None:
                text += f", {change['mean_relative_change']:+.0%}"
            text += ")"
        parts.append(text)
    return "; ".join(parts) or "-"
