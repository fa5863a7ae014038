"""One bundle of business services over one database, built once per process."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from hitl.settings import get_settings
from services.bookings import Bookings
from services.database import connect
from services.file_deletions import FileDeletions
from services.flights import Timetable
from services.invoices import Invoices
from services.mail import Outbox
from services.orders import OrderBook
from services.payments import Payments
from services.records import Records
from services.sql import SqlConsole

if TYPE_CHECKING:
    from sqlalchemy import Engine


@dataclass(frozen=True)
class Services:
    """The business systems the tools act on."""

    orders: OrderBook
    payments: Payments
    outbox: Outbox
    timetable: Timetable
    bookings: Bookings
    records: Records
    sql: SqlConsole
    file_deletions: FileDeletions
    invoices: Invoices
    engine: Engine
    """The database every service above uses."""

    @classmethod
    def open(cls, database_url: str) -> Services:
        """Connect to `database_url` (creating and seeding it) and build every service."""
        engine = connect(database_url)
        return cls(
            orders=OrderBook(engine),
            payments=Payments(engine),
            outbox=Outbox(engine),
            timetable=Timetable(engine),
            bookings=Bookings(engine),
            records=Records(engine),
            sql=SqlConsole(engine),
            file_deletions=FileDeletions(engine),
            invoices=Invoices(engine),
            engine=engine,
        )


@lru_cache(maxsize=1)
def default_services() -> Services:
    """The services over the database named by the settings."""
    return Services.open(get_settings().resolved_database_url)
