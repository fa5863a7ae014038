"""Settings: every variable is documented (the layer's, the demo's); dev mode comes from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.settings import DemoSettings
from hitl.settings import Settings

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("listing", "fields"),
    [
        (".env.example", Settings.model_fields),
        ("agents/settings.env.example", DemoSettings.model_fields.keys() - Settings.model_fields.keys()),
    ],
)
def test_every_setting_is_listed_with_a_comment(listing, fields):
    """docs: each layer setting has a commented `NAME=` line in .env.example; the demo's, in its own file.

    The demo's live apart so that a project without the demo keeps `.env.example` byte for byte,
    and a later release's change to it merges without a conflict.
    """
    lines = (ROOT / listing).read_text().splitlines()
    for name in fields:
        variable = name.upper()
        matches = [i for i, line in enumerate(lines) if line.startswith(f"{variable}=")]
        assert matches, f"{variable} is missing from {listing}"
        assert lines[matches[0] - 1].startswith("#"), f"{variable} has no comment in {listing}"


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


def test_relative_paths_are_taken_from_the_launch_directory(tmp_path, monkeypatch):
    """DATA_DIR=data (as .env.example has it): absolute at once, so nothing resolves it in the event loop."""
    from hitl import settings as module  # noqa: PLC0415

    monkeypatch.setattr(module, "LAUNCH_DIR", tmp_path)
    monkeypatch.setenv("DATA_DIR", "data")
    monkeypatch.setenv("WORKSPACE_DIR", "workspace")
    monkeypatch.setenv("HITL_RECEIPT_KEY_FILE", "keys/signing.pem")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    settings = DemoSettings(_env_file=None)
    assert settings.data_dir == tmp_path / "data"
    assert settings.workspace_dir == tmp_path / "workspace"
    assert settings.hitl_receipt_key_file == str(tmp_path / "keys" / "signing.pem")
    assert settings.resolved_database_url == f"sqlite:///{tmp_path / 'data' / 'business.db'}"
    absolute = tmp_path / "elsewhere"
    assert Settings(_env_file=None, data_dir=absolute).data_dir == absolute
