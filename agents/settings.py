"""The demo's own settings: refund limits, who decides, the deadlines of its tools, the ops agent's workspace.

They extend the approval layer's `hitl.settings.Settings` and are read the same way (the
environment, then `.env`; `.env.example` lists them); the layer knows none of them. Your own
agents keep their knobs the same way, in a class of their own.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field, SecretStr, ValidationInfo, field_validator

from hitl.policy.groups import OWNER, check_decider
from hitl.settings import Settings, from_launch_dir


class DemoSettings(Settings):
    """The layer's settings plus the shop's, travel's and ops' own."""

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
    refund_dual_control_limit: float = Field(
        default=2000,
        description="Refunds above this amount need two different supervisors to approve (four eyes).",
    )
    refund_deadline_seconds: float = Field(
        default=86_400, description="How long a refund waits before it escalates (to REFUND_LEAD_GROUP)."
    )
    refund_decider_group: str = Field(
        default="reviewer",
        description="Who decides refunds up to REFUND_SUPERVISOR_LIMIT: a group (a role is one): finance.",
    )
    refund_lead_group: str = Field(
        default="supervisor",
        description=(
            "Who decides refunds above REFUND_SUPERVISOR_LIMIT (two of them above "
            "REFUND_DUAL_CONTROL_LIMIT), and who an overdue refund escalates to: a group, e.g. finance-leads."
        ),
    )
    ops_decider_group: str = Field(
        default="reviewer",
        description="Who decides the ops agent's gated calls (file writes, deletions, SQL writes), e.g. sre.",
    )
    email_deadline_seconds: float = Field(
        default=14_400, description="How long an e-mail waits before it is rejected."
    )
    signoff_deadline_seconds: float = Field(
        default=1_800,
        description="How long a sign-off (request_approval, e.g. deploys) waits before it is refused.",
    )
    billing_mcp_url: str = Field(
        default="",
        description=(
            "URL of the billing MCP server (services/billing_mcp.py) the support agent uses, e.g. "
            "http://127.0.0.1:8790/mcp (`make dev` sets it). Empty: support has no billing tools."
        ),
    )
    billing_mcp_authorization: SecretStr = Field(
        default=SecretStr(""),
        description=(
            "The Authorization header the billing MCP server requires and the support agent sends "
            "(e.g. 'Bearer <token>'). Billing refuses to serve without one."
        ),
    )

    @field_validator("refund_decider_group", "refund_lead_group", "ops_decider_group")
    @classmethod
    def _group(cls, name: str, info: ValidationInfo) -> str:
        where = str(info.field_name).upper()
        if check_decider(where, name) == OWNER:
            msg = f"{where} names 'owner': name a group (e.g. reviewer, finance)"
            raise ValueError(msg)
        return name

    @field_validator("workspace_dir")
    @classmethod
    def _workspace_dir(cls, path: Path) -> Path:
        return from_launch_dir(path)


@lru_cache(maxsize=1)
def demo_settings() -> DemoSettings:
    """The process-wide demo settings, read once."""
    return DemoSettings()
