"""Runtime settings, read once from the environment (and `.env` when present).

Every variable the package reads is a field here with its description; `.env.example`
lists the same variables for people. Nothing else in the package reads `os.environ`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Typed runtime configuration of the agents, services and server."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    model: str = Field(
        default="",
        description=(
            "Chat model: 'scripted' (offline, deterministic) or 'openai:<model>'. "
            "Empty means 'scripted' unless OPENAI_API_KEY is set, then 'openai:gpt-4o-mini'."
        ),
    )
    openai_api_key: str = Field(default="", description="Key for OpenAI-compatible servers.")
    openai_base_url: str = Field(
        default="", description="Base URL of an OpenAI-compatible server (vLLM, Ollama, ...)."
    )
    data_dir: Path = Field(default=Path("data"), description="Where the SQLite business database lives.")
    database_url: str = Field(
        default="",
        description="SQLAlchemy URL of the business database; empty means SQLite in data_dir.",
    )
    workspace_dir: Path = Field(
        default=Path("workspace"),
        description="Root directory of the ops agent's files; its file tools cannot reach outside it.",
    )
    refund_auto_approve_limit: float = Field(
        default=100, description="Refunds up to this amount run without a person."
    )
    refund_supervisor_limit: float = Field(
        default=500, description="Refunds above this amount need a supervisor to decide."
    )

    hitl_users: str = Field(
        default="",
        description=(
            "Users who may call the server, as comma-separated name:role:token entries "
            "(role: requester, reviewer or supervisor). Empty: nobody gets in."
        ),
    )
    max_resume_bytes: int = Field(
        default=64_000, description="Largest resume payload (JSON bytes) the server accepts."
    )

    @property
    def resolved_model(self) -> str:
        """The model name after applying the offline default."""
        if self.model:
            return self.model
        return "openai:gpt-4o-mini" if self.openai_api_key else "scripted"

    @property
    def resolved_database_url(self) -> str:
        """The business database URL, defaulting to a SQLite file in `data_dir`."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'business.db').resolve()}"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
