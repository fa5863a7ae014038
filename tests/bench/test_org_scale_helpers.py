"""Section 7's pure parts: the bench graph's configuration, the fill, the million rows, the metrics text, p95.

No server, no database: what the numbers are made from, not the numbers.
"""

from __future__ import annotations

import itertools
import json

import pytest

from bench import inbox_table_scale as table
from bench.org_replicas import bench_config, pass_totals
from bench.org_scale import kept_name
from bench.paused_fill import REFUSALS_TOLERATED, STALL_SECONDS, Fill, _Filling, senders
from bench.paused_graph import GRAPH_ID, approval_value
from bench.report import Results, Row, Section
from bench.served import repo_config
from bench.stats import p95, tail_summary
from hitl.contracts import answers
from server.ledger.storage import inbox
from server.runtime.replicas import CONFIG


def test_the_bench_graph_is_served_only_by_the_bench_configuration(tmp_path):
    """The bench copy of langgraph.replicas.json serves `bench_pause` (absolute paths); the product not."""
    config = json.loads(bench_config(tmp_path).read_text())
    replicas = json.loads(CONFIG.read_text())
    assert config["graphs"] == {**replicas["graphs"], GRAPH_ID: "bench.paused_graph:graph"}
    assert config["dependencies"] == [str(CONFIG.parent)]
    assert GRAPH_ID not in replicas["graphs"]
    assert GRAPH_ID not in repo_config()["graphs"]


def test_the_bench_approval_has_an_answer_contract():
    """The graph asks a per-call approval a reviewer decides, whose answer type is known."""
    value = approval_value("t-1")
    assert value["type"] == "tool_approval"
    assert value["required_role"] == "reviewer"
    assert answers.response_type(value) is not None


def test_senders_take_turns_across_replicas():
    """Four senders per client, client 0, 1, 0, 1, ...: every replica gets the same share."""
    assert senders(2) == [0, 1, 0, 1, 0, 1, 0, 1]
    assert senders(1, per_client=3) == [0, 0, 0]


def test_a_fill_that_added_nothing_has_no_rate():
    """0 added in 0 s is 0 per second, not a division by zero."""
    assert Fill(0, 0.0).per_second == 0.0
    assert Fill(30, 2.0).per_second == pytest.approx(15.0)


def test_a_fill_stops_on_a_failed_run_too_many_server_errors_or_a_stall():
    """A run in error, more server errors than tolerated, or no progress for the stall time stops it."""
    filling = _Filling(missing=10, window=5)
    assert filling.trouble(0, 1.0) is None
    assert "ended in error" in (filling.trouble(1, 1.0) or "")
    assert "without progress" in (filling.trouble(0, STALL_SECONDS + 1) or "")
    filling.server_errors = REFUSALS_TOLERATED + 1
    assert "failed" in (filling.trouble(0, 1.0) or "")


def test_a_timed_fill_ends_when_what_it_sent_has_paused():
    """Without a time limit: when all missing wait; past it: once every run sent has paused."""
    assert not _Filling(missing=10, window=5, done=9).finished
    assert _Filling(missing=10, window=5, done=10).finished
    timed_out = _Filling(missing=10, window=5, until=0.0, sent=4, done=3)
    assert not timed_out.finished
    timed_out.done = 4
    assert timed_out.finished


def test_million_rows_fit_the_table_and_come_oldest_first():
    """Each row has one value per column of hitl_inbox, created_at rises, and a seed gives the same rows."""
    rows = list(table.inbox_rows(2000))
    assert all(len(row) == len(inbox.columns) for row in rows)
    created = [row[3] for row in rows]
    assert created == sorted(created)
    assert len({len(stamp) for stamp in created}) == 1  # one ISO width, so text order is time order
    assert rows == list(table.inbox_rows(2000))
    assert json.loads(rows[7][12])["thread_id"] == rows[7][0]


def test_deciders_follow_the_shares():
    """About 40% reviewer, 10% supervisor, 20% owner, the rest teams (draws spread evenly)."""
    draws = [i / 1000 for i in range(1000)]
    found = [table.decider(draw, team) for draw, team in zip(draws, itertools.cycle(range(20)), strict=False)]
    assert found.count("reviewer") == 400
    assert found.count("supervisor") == 100
    assert found.count("owner") == 200
    assert {group for group in found if group.startswith("team-")} == set(table.OTHER_GROUPS)


def test_a_reader_sees_their_groups_and_their_own_questions():
    """Rows of the reader's groups (a supervisor's include the reviewers'), owner rows only their own."""
    reviewer, supervisor = table.READERS
    row = ["t", "i", 0, "2026", "reviewer", "user-0001"]
    assert table.visible(row, reviewer)
    assert table.visible(row, supervisor)
    assert not table.visible([*row[:4], "supervisor", reviewer.identity], reviewer)
    assert table.visible([*row[:4], "owner", reviewer.identity], reviewer)
    assert not table.visible([*row[:4], "owner", "user-0001"], reviewer)
    assert not table.visible([*row[:4], "team-07", "user-0001"], supervisor)


def test_pass_totals_read_the_cpu_clock_only():
    """The sum and count of `hitl_watcher_pass_seconds{clock="cpu"}`; the wall clock's are ignored."""
    text = (
        'hitl_watcher_pass_seconds_sum{clock="wall"} 9.5\n'
        'hitl_watcher_pass_seconds_count{clock="wall"} 4.0\n'
        'hitl_watcher_pass_seconds_sum{clock="cpu"} 0.25\n'
        'hitl_watcher_pass_seconds_count{clock="cpu"} 4.0'
    )
    assert pass_totals(text) == (0.25, 4)
    assert pass_totals("") == (0.0, 0)


def test_p95_interpolates_and_a_single_sample_is_its_own():
    """p95 of 1..21 is 20; of one sample, that sample; the summary holds p50, p95, max and count."""
    assert p95([float(i) for i in range(1, 22)]) == pytest.approx(20.0)
    assert p95([3.0]) == 3.0
    assert tail_summary([1.0, 2.0, 3.0]) == {"p50": 2.0, "p95": pytest.approx(2.9), "max": 3.0, "count": 3}
    with pytest.raises(ValueError, match="no samples"):
        p95([])


def test_a_kept_set_keeps_its_name(tmp_path):
    """The first call names the set's databases; later calls on the same folder reuse the name."""
    first = kept_name(tmp_path / "keep")
    assert first.startswith("bench_org_")
    assert kept_name(tmp_path / "keep") == first


def _results(date: str, sections: list[Section]) -> Results:
    meta = {"date": date, "duration_s": 60.0, "machine": {"revision": "abc", "cores": "2"}, "sizes": {}}
    return Results(meta=meta, sections=sections)


def test_a_rerun_section_replaces_its_own_and_keeps_the_rest(tmp_path):
    """`--only`: the rerun's section replaces the old one, other sections stay, RESULTS.md names the rerun."""
    old = _results(
        "then",
        [
            Section("inbox", "3. Inbox", "ref", [Row("inbox", "a", "ms", 1.0, 2.0, "why")]),
            Section("org_scale", "7. Org", "ref", [Row("org_scale", "b", "ms", 5.0, None, "why")]),
        ],
    )
    old.meta["versions"] = {}
    old.write(tmp_path)
    loaded = Results.load(tmp_path)
    assert loaded is not None
    assert [row.ours for s in loaded.in_order for row in s.rows] == [1.0, 5.0]
    rerun = _results(
        "now", [Section("org_scale", "7. Org", "ref", [Row("org_scale", "b", "ms", 3.0, None, "why")])]
    )
    rerun.meta["machine"]["cpu"] = "AMD EPYC"
    merged = loaded.with_rerun(rerun)
    assert [row.ours for s in merged.in_order for row in s.rows] == [1.0, 3.0]
    assert merged.meta["date"] == "then"
    assert merged.meta["reruns"]["org_scale"]["date"] == "now"
    assert Results.load(tmp_path / "none") is None
    merged.write(tmp_path)
    assert "Section `org_scale` was run alone" in (tmp_path / "RESULTS.md").read_text()
    assert "at revision abc on AMD EPYC, 2 cores," in (tmp_path / "RESULTS.md").read_text()
