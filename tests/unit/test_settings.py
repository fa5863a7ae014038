"""Settings: every variable is documented in `.env.example`; dev mode comes from the environment only."""

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


def test_dev_mode_is_off_in_env_example():
    """.env.example: copying it to .env must not turn dev mode on."""
    lines = (ROOT / ".env.example").read_text().splitlines()
    assert "HITL_DEV_MODE=false" in lines


def test_a_dotenv_file_cannot_turn_dev_mode_on(tmp_path, monkeypatch):
    """.env with HITL_DEV_MODE=true: ignored for dev mode (other .env values still apply)."""
    (tmp_path / ".env").write_text("HITL_DEV_MODE=true\nMODEL=openai:from-dotenv\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HITL_DEV_MODE", raising=False)
    monkeypatch.delenv("MODEL", raising=False)
    settings = Settings()
    assert (settings.hitl_dev_mode, settings.model) == (False, "openai:from-dotenv")
    monkeypatch.setenv("HITL_DEV_MODE", "true")
    assert Settings().hitl_dev_mode is True
