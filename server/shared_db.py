"""The business database, as the place the server keeps what every replica must agree on.

Claims (`server.claims`) and leases (`server.leadership`) live beside the business data, so
replicas on one database see one truth. Not for business data itself (`services`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.registry import default_services

if TYPE_CHECKING:
    from sqlalchemy import Engine


def engine() -> Engine:
    """The engine the business services of this process use (opened on first use: blocking)."""
    return default_services().engine
