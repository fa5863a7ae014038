"""`hitl inbox`'s line above its table: the caller's whole inbox per group, as `GET /inbox` counts it."""

from __future__ import annotations

from hitl.cli.queue import group_counts


def test_each_group_with_its_count_in_the_servers_order():
    """counts: one line naming each group and how many wait for it, in the order the server sent them."""
    assert group_counts({"supervisor": 2, "reviewer": 3, "owner": 0}) == (
        "waiting per group: supervisor 2, reviewer 3, owner 0"
    )


def test_no_line_when_the_server_counts_nothing():
    """no counts (an older server, or an inbox of no group): no line at all, not an empty one."""
    assert group_counts(None) == ""
    assert group_counts({}) == ""
    assert group_counts(["reviewer"]) == ""
