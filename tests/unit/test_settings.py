"""Settings: every variable the package reads is documented in `.env.example`."""

from __future__ import annotations

from pathlib import Path

from hitl.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_env_example_lists_every_setting():
    """docs: each Settings field has a line `NAME=` in .env.example, with a comment above it."""
    lines = (ROOT / ".env.example").read_text().splitlines()
    for name in Settings.model_fields:
        variable = name.upper()
        matches = [i for i, line in enumerate(lines) if line.startswith(f"{variable}=")]
        assert matches, f"{variable} is missing from .env.example"
        assert lines[matches[0] - 1].startswith("#"), f"{variable} has no comment in .env.example"
