"""Fixtures shared by every layer: a fresh business database and unique demo orders."""

from __future__ import annotations

import uuid

import pytest

from services.orders import Order
from services.registry import Services


@pytest.fixture
def services(tmp_path) -> Services:
    """Business services over a new SQLite file, seeded with the demo orders."""
    return Services.open(f"sqlite:///{tmp_path / 'business.db'}")


@pytest.fixture
def new_order(services):
    """Insert a fresh delivered order of `amount` into the test's database; returns its id."""
    return lambda amount: add_order(services, amount)


def add_order(services: Services, amount: float) -> str:
    """Insert a fresh delivered order of `amount` and return its id (e.g. B12345678)."""
    order_id = f"B{uuid.uuid4().int % 10**8:08d}"
    services.orders.add(
        Order(
            order_id=order_id,
            customer_name="Test Customer",
            customer_email=f"{order_id.lower()}@example.com",
            item="Test item",
            amount=amount,
            status="delivered",
            delivered_on="2026-11-25",
        )
    )
    return order_id
