"""Runtime settings, read once from the environment (and `.env` when present).

Every variable the package reads is a field here with its description; `.env.example`
lists the same variables for people. Nothing else in the package reads `os.environ`. Long, and
one concept: the one typed list of what can be configured.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationInfo, field_validator
from pydantic.fields import FieldInfo  # noqa: TC002  (pydantic-settings resolves it at runtime)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from hitl.policy.groups import group_map


class Settings(BaseSettings):
    """Typed runtime configuration of the agents, services and server."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    model: str = Field(
        default="",
        description=(
            "Chat model: 'scripted' (offline, deterministic) or 'provider:model' as LangChain's "
            "init_chat_model reads it ('openai:gpt-4o-mini'; other providers need their package). "
            "Empty means 'scripted' unless OPENAI_API_KEY is set, then 'openai:gpt-4o-mini'."
        ),
    )
    openai_api_key: str = Field(default="", description="Key for OpenAI-compatible servers.")
    openai_base_url: str = Field(
        default="", description="Base URL of an OpenAI-compatible server (vLLM, Ollama, ...)."
    )
    model_max_retries: int = Field(
        default=2,
        ge=0,
        description=(
            "How often a failed model call (429, 5xx, timeout, connection error) is retried, with "
            "back-off, before the run fails with the provider's error (max_retries of the chat model)."
        ),
    )
    model_timeout_seconds: float = Field(
        default=600,
        gt=0,
        description="Seconds one model call may take before it counts as failed (timeout of the chat model).",
    )
    data_dir: Path = Field(
        default=Path("data"),
        description=(
            "Where the SQLite business database, the approval layer's hitl.db and the dev server's "
            "checkpoints.db live."
        ),
    )
    database_url: str = Field(
        default="",
        description="SQLAlchemy URL of the business database; empty means SQLite in data_dir.",
    )
    hitl_database_url: str = Field(
        default="",
        description=(
            "SQLAlchemy URL of the approval layer's own store (decisions, claims, receipts, the audit "
            "trail, notices, leases): never the business database, and out of reach of the business "
            "connection (on PostgreSQL a database the business role may not connect to). Empty means "
            "SQLite data_dir/hitl.db."
        ),
    )
    db_pool_size: int = Field(
        default=5,
        ge=1,
        description=(
            "PostgreSQL connections each server process keeps to each database the layer opens (its "
            "store, the business database); up to DB_MAX_OVERFLOW more while busy. A replica's whole "
            "budget: deploy/README.md, 'PostgreSQL connections'."
        ),
    )
    db_max_overflow: int = Field(
        default=5,
        ge=0,
        description="Connections beyond DB_POOL_SIZE a busy process may open per database, closed when done.",
    )

    hitl_users: str = Field(
        default="",
        description=(
            "Users who may call the server, as comma-separated name:role:token entries "
            "(role: requester, reviewer or supervisor), or name:role+group+group:token for a person in "
            "groups a policy names as deciders (e.g. ana:reviewer+finance+finance-leads:token; a group is "
            "lowercase letters, digits, -, _, ., at most 64). Empty: nobody gets in."
        ),
    )
    hitl_oidc_issuer: str = Field(
        default="",
        description=(
            "Issuer (the `iss` claim) of the OpenID Connect provider whose JWTs the server accepts as "
            "bearer tokens, besides HITL_USERS, e.g. https://login.example.com/realms/acme. "
            "Empty: OIDC is off."
        ),
    )
    hitl_oidc_audience: str = Field(
        default="",
        description="Audience (`aud`) a token must name: this server's client id or API identifier.",
    )
    hitl_oidc_jwks_url: str = Field(
        default="",
        description=(
            "Where the issuer publishes its signing keys (JWKS). Empty: the `jwks_uri` of the issuer's "
            "/.well-known/openid-configuration. https, or http on loopback only."
        ),
    )
    hitl_oidc_role_claim: str = Field(
        default="groups",
        description=(
            "Claim holding the caller's groups or roles, a string or a list of strings; a dotted path "
            "reaches into objects (e.g. realm_access.roles)."
        ),
    )
    hitl_oidc_groups_claim: str = Field(
        default="",
        description=(
            "Claim holding the caller's groups (teams a policy names as deciders, e.g. finance, sre), a "
            "string or a list of strings; a dotted path reaches into objects. Values that are no group name "
            "(lowercase letters, digits, -, _, .; at most 64), a role or `owner` are ignored. Empty: OIDC "
            "users are in no group beyond their role. Set, any group counts as possible at start-up."
        ),
    )
    hitl_oidc_name_claim: str = Field(
        default="sub",
        description=(
            "Claim naming the caller (who owns threads, who decided). `sub` is stable; use "
            "preferred_username or email only if the provider never lets people change it."
        ),
    )
    hitl_oidc_roles: str = Field(
        default="",
        description=(
            "Which role claim values give which role, as comma-separated value:role entries, e.g. "
            "finance-approvers:supervisor,helpdesk:reviewer,customers:requester. Several matches: the "
            "highest role; none: the token is refused."
        ),
    )
    approval_deadline_seconds: float = Field(
        default=86_400, description="How long a gated call waits by default before it is rejected."
    )
    escalation_deadline_seconds: float = Field(
        default=3_600, description="How long an escalated approval waits before it is rejected."
    )
    hitl_notify_url: str = Field(
        default="",
        description="POST a JSON notice here when an approval starts waiting or escalates; empty: off.",
    )
    hitl_public_url: str = Field(
        default="http://127.0.0.1:2024",
        description="The server's address as people reach it (for links in notices).",
    )
    hitl_slack_webhook_url: str = Field(
        default="",
        description=(
            "Slack incoming-webhook URL: each approval that starts waiting (or escalates) is posted there "
            "as a Block Kit message with Approve and Reject buttons. Empty: off."
        ),
    )
    hitl_slack_signing_secret: str = Field(
        default="",
        description=(
            "The Slack app's signing secret: POST /channels/slack/actions accepts only button presses "
            "signed with it (v0 HMAC-SHA256, at most 5 minutes old, each once). Empty: the route refuses all."
        ),
    )
    hitl_slack_users: str = Field(
        default="",
        description=(
            "Which Slack member decides as which HITL_USERS user, as comma-separated slack_id:user entries "
            "(e.g. U024BE7LH:reviewer1). A press by anyone else changes nothing and is audited."
        ),
    )
    hitl_slack_group_webhooks: str = Field(
        default="",
        description=(
            "A Slack incoming-webhook URL per group, as comma-separated group=url entries (e.g. "
            "finance=https://hooks.slack.com/services/T/B/x): an approval a group decides (or is "
            "escalated to) is posted to that group's channel; others to HITL_SLACK_WEBHOOK_URL, if set."
        ),
    )
    hitl_smtp_host: str = Field(
        default="", description="SMTP server for e-mail notices to the reviewers who may decide; empty: off."
    )
    hitl_smtp_port: int = Field(default=587, description="Port of the SMTP server.")
    hitl_smtp_username: str = Field(default="", description="SMTP login name; empty: no login.")
    hitl_smtp_password: str = Field(default="", description="SMTP password (with HITL_SMTP_USERNAME).")
    hitl_smtp_starttls: bool = Field(
        default=True, description="Upgrade the SMTP connection with STARTTLS (false only for a local relay)."
    )
    hitl_smtp_sender: str = Field(default="hitl@localhost", description="The From address of e-mail notices.")
    hitl_user_emails: str = Field(
        default="",
        description=(
            "E-mail addresses of the HITL_USERS users, as comma-separated user:address entries "
            "(e.g. reviewer1:ana@example.com); only users listed here get e-mail notices."
        ),
    )
    hitl_group_emails: str = Field(
        default="",
        description=(
            "A shared address per group, as comma-separated group=address entries (e.g. "
            "finance=finance-approvals@example.com): it gets the e-mail notice of each approval the group "
            "decides, besides the group's people listed in HITL_USER_EMAILS."
        ),
    )
    hitl_watch_interval: float = Field(
        default=10.0, description="Seconds between the watcher's passes (notices, deadlines)."
    )
    max_resume_bytes: int = Field(
        default=64_000, description="Largest resume payload (JSON bytes) the server accepts."
    )
    max_request_bytes: int = Field(
        default=1_000_000,
        description="Largest HTTP request body the server reads; bigger ones get 413 before any route runs.",
    )
    max_input_bytes: int = Field(
        default=32_000,
        description="Largest new input of a run (JSON bytes of its messages); more is refused with 413.",
    )
    mcp_timeout_seconds: float = Field(
        default=30,
        gt=0,
        description=(
            "Seconds one request to an MCP server may take (its handshake, a tool list, one round of a "
            "call) unless its declaration says otherwise; then the call fails, saying so."
        ),
    )
    mcp_list_seconds: float = Field(
        default=30,
        ge=0,
        description=(
            "Seconds an MCP server's tool list is reused before the agent lists it again (a call a "
            "person approved always checks the tool against a fresh list)."
        ),
    )
    mcp_max_result_chars: int = Field(
        default=20_000,
        gt=0,
        description="Longest text of an MCP tool's result the model reads; the rest is cut, saying so.",
    )
    mcp_max_response_bytes: int = Field(
        default=2_000_000,
        gt=0,
        description="Largest response (bytes) read from an MCP server; a larger one fails the call unread.",
    )
    hitl_seal_key: str = Field(
        default="",
        description=(
            "Secret (32+ characters) with which the server and the gate seal what the gate trusts in a "
            "thread's state (clearances, receipts, allowances, the run's policy). Every replica needs "
            "the same one. Empty: a key is made once in data_dir/seal.key (one process only)."
        ),
    )
    hitl_receipt_key: str = Field(
        default="",
        description=(
            "The Ed25519 private key (PEM) that signs decision receipts, as text (a secret store). "
            "Empty: HITL_RECEIPT_KEY_FILE."
        ),
    )
    hitl_receipt_key_file: str = Field(
        default="",
        description=(
            "File with the Ed25519 private key (PEM) that signs decision receipts; made when absent "
            "(`make dev` does it up front). Empty: data_dir/receipt-keys/signing.pem. Never commit it."
        ),
    )
    hitl_receipt_retired_keys: str = Field(
        default="",
        description=(
            "Public keys (a JWKS JSON object) of signing keys retired from HITL_RECEIPT_KEY: still "
            "published, so receipts they signed verify. The key file's set keeps them by itself."
        ),
    )
    hitl_receipt_jwks_file: str = Field(
        default="",
        description=(
            "The public keys GET /.well-known/jwks.json publishes (JWKS): every key that ever signed, "
            "so receipts outlive a rotation. Empty: published.jwks.json beside the key file."
        ),
    )
    hitl_dev_mode: bool = Field(
        default=False,
        description=(
            "Development mode, read from the process environment only (never from .env; `make dev` sets "
            "it): GET /app-config offers the HITL_USERS names, roles and tokens to sign-in pages opened "
            "over loopback, and dev-* tokens are accepted. Off: dev-* tokens stop the server at start."
        ),
    )

    @field_validator("hitl_slack_group_webhooks", "hitl_group_emails")
    @classmethod
    def _group_map(cls, spec: str, info: ValidationInfo) -> str:
        """Refuse a malformed `group=value` list at start-up, naming the setting and the entry."""
        mapping = group_map(str(info.field_name).upper(), spec)
        kind = "http(s) URL" if info.field_name == "hitl_slack_group_webhooks" else "address"
        for group, value in mapping.items():
            if not (value.startswith(("https://", "http://")) if kind == "http(s) URL" else "@" in value):
                msg = f"{str(info.field_name).upper()} gives {group} {value!r}, which is no {kind}"
                raise ValueError(msg)
        return spec

    @field_validator("data_dir")
    @classmethod
    def _data_dir(cls, path: Path) -> Path:
        return from_launch_dir(path)

    @field_validator("hitl_receipt_key_file", "hitl_receipt_jwks_file")
    @classmethod
    def _key_file(cls, given: str) -> str:
        """Empty stays empty: the default under data_dir."""
        return str(from_launch_dir(Path(given))) if given else given

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments, then the environment, then `.env` (without `ENVIRONMENT_ONLY`), then secrets."""
        del settings_cls
        return init_settings, env_settings, _Without(dotenv_settings, ENVIRONMENT_ONLY), file_secret_settings

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
        return f"sqlite:///{self.data_dir / 'business.db'}"

    @property
    def resolved_hitl_database_url(self) -> str:
        """The approval layer's store URL, defaulting to a SQLite file beside the business one."""
        if self.hitl_database_url:
            return self.hitl_database_url
        return f"sqlite:///{self.data_dir / 'hitl.db'}"


def from_launch_dir(path: Path) -> Path:
    """A relative path (`.env.example` has `DATA_DIR=data`) taken from the launch directory.

    Once, when settings are read: resolving it later would ask the OS for the working
    directory from the server's event loop, which `langgraph dev` refuses as a blocking call.
    """
    return path if path.is_absolute() else LAUNCH_DIR / path


LAUNCH_DIR = Path.cwd()
"""The directory the process started in (read at import, before any event loop runs): relative paths
in the settings are taken from here."""


ENVIRONMENT_ONLY = frozenset({"hitl_dev_mode"})
"""Settings a `.env` file cannot turn on: copying `.env.example` to `.env` must not enable them."""


class _Without(PydanticBaseSettingsSource):
    """A settings source with some fields left out."""

    def __init__(self, source: PydanticBaseSettingsSource, fields: frozenset[str]) -> None:
        super().__init__(source.settings_cls)
        self.source, self.fields = source, fields

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.source.get_field_value(field, field_name)

    def __call__(self) -> dict[str, Any]:
        return {k: v for k, v in self.source().items() if k not in self.fields}


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
