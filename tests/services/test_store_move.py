"""Moving an older release's layer records out of the business database, on SQLite and on PostgreSQL.

Releases before 2.0 kept the layer's tables in the business database. `server.ledger.move.move_out`
copies them into the layer's own store (a row already there kept), drops them from the business
database, and marks the store, once: a crash between the steps is finished by the next start, and
a table an agent's SQL names `hitl_decisions` later stays the business data's own. A moved decision
is then vouched for by its signatures like any other (`server.decisions.provenance`).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import create_engine, func, inspect, make_url, select, text

from hitl.databases import open_database
from server.decisions import provenance, store
from server.ledger import move, storage
from server.ledger.storage import audit_records, decisions
from server.records import trail
from tests.services.conftest import POSTGRES_URL
from tests.services.test_decisions_shared import accept

if TYPE_CHECKING:
    from collections.abc import Iterator


def layer_tables(url: str) -> list[str]:
    engine = create_engine(url)
    try:
        return sorted(n for n in inspect(engine).get_table_names() if n.startswith("hitl_"))
    finally:
        engine.dispose()


@pytest.fixture
def layer_url(database_url, tmp_path, request) -> Iterator[str]:
    """A new, empty store for the layer, on the same backend as the business database.

    The mover's own engines (`hitl.databases.open_database`, kept per process) are closed after.
    """
    if database_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'hitl.db'}"
        for url in (database_url, f"sqlite:///{tmp_path / 'hitl.db'}"):
            open_database(url).dispose()
        return
    admin = request.getfixturevalue("postgres")
    schema = f"hitl_layer_{uuid.uuid4().hex[:12]}"
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        url = make_url(POSTGRES_URL).update_query_dict({"options": f"-csearch_path={schema}"})
        yield url.render_as_string(hide_password=False)
        for opened in (database_url, url.render_as_string(hide_password=False)):
            open_database(opened).dispose()
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))


def legacy(database_url: str) -> tuple[str, str]:
    """A business database as release 52a94d2 left it: the layer's tables in it, two decisions on a thread."""
    business = create_engine(database_url)
    storage.ready(business)
    with business.begin() as conn:  # a table of this release only
        conn.execute(text("DROP TABLE hitl_store_marks"))
    thread_id = f"t-{uuid.uuid4().hex}"
    first = accept(business, thread_id, [f"i-{uuid.uuid4().hex}"], "reviewer1")
    accept(business, thread_id, [f"i-{uuid.uuid4().hex}"], "supervisor1")
    business.dispose()
    return thread_id, first.decision_id


def test_the_layers_tables_move_once_and_every_row_with_them(database_url, layer_url):
    """move: rows copied, tables dropped, store marked; a second move, a later hitl_ table: nothing."""
    thread_id, decision_id = legacy(database_url)
    assert "hitl_decisions" in layer_tables(database_url)
    moved = move.move_out(database_url, layer_url)
    assert (moved["hitl_decisions"], moved["hitl_audit_records"]) == (2, 2)
    assert layer_tables(database_url) == []
    layer = create_engine(layer_url)
    records, head = trail.read(thread_id, engine=layer)
    assert [r["reviewer"] for r in records] == ["reviewer1", "supervisor1"]
    assert head.seq == 2
    assert store.stored(decision_id, engine=layer) is not None

    assert move.move_out(database_url, layer_url) == {}
    business = create_engine(database_url)
    with business.begin() as conn:  # what an approved SQL statement of an agent could make
        conn.execute(text("CREATE TABLE hitl_decisions (decision_id VARCHAR(64) PRIMARY KEY)"))
        conn.execute(text("INSERT INTO hitl_decisions VALUES ('forged')"))
    business.dispose()
    assert move.move_out(database_url, layer_url) == {}
    assert layer_tables(database_url) == ["hitl_decisions"]
    with layer.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(decisions)) == 2
    layer.dispose()


def test_a_move_cut_off_after_its_copy_is_finished_by_the_next_start(database_url, layer_url):
    """crash after the copy: rows in the store and in the old tables; the next move keeps one of each."""
    thread_id, _ = legacy(database_url)
    business, layer = create_engine(database_url), storage.ready(create_engine(layer_url))
    with business.connect() as source, layer.begin() as target:  # the copy, committed; no drop, no mark
        for name in move.left_behind(business):
            move._copy(source, target, storage.METADATA.tables[name])  # noqa: SLF001  (the step cut off)
    business.dispose()
    assert move.move_out(database_url, layer_url)["hitl_audit_records"] == 2
    with layer.connect() as conn:
        seqs = list(conn.scalars(select(audit_records.c.seq).where(audit_records.c.thread_id == thread_id)))
    assert sorted(seqs) == [1, 2]
    assert layer_tables(database_url) == []
    layer.dispose()


def test_a_moved_decision_with_no_seal_is_not_vouched_for(database_url, layer_url):
    """provenance: a decision moved from an older release has no seal: refused, never applied as it says."""
    _, decision_id = legacy(database_url)
    business = create_engine(database_url)
    with business.begin() as conn:
        conn.execute(decisions.update().values(seal=None))
    business.dispose()
    move.move_out(database_url, layer_url)
    layer = create_engine(layer_url)
    decision = store.stored(decision_id, engine=layer)
    assert decision is not None
    with pytest.raises(provenance.UnvouchedError, match="not as the server sealed them"):
        provenance.vouch(decision, engine=layer)
    layer.dispose()
