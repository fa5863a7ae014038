"""The demo's own settings: refund limits, who decides, deadlines, its first-line reviewer, the ops workspace.

They extend the approval layer's `hitl.settings.Settings` and are read the same way (the
environment, then `.env`; `.env.example` lists them); the layer knows none of them. Your own
agents keep their knobs the same way, in a class of their own.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field, SecretStr, ValidationInfo, field_validator, model_validator

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
    billing_answered_by: str = Field(
        default=OWNER,
        description=(
            "Who answers the billing MCP server's questions mid-call (a credit note's reason, then its "
            "amount): owner (the customer whose thread it is) or a group, e.g. finance."
        ),
    )

    support_first_line: bool = Field(
        default=False,
        description=(
            "Hand the support agent's routine calls to a first-line reviewer (a model) before people: "
            "customer e-mails that promise nothing, and refunds up to REFUND_FIRST_LINE_LIMIT. What it "
            "does not approve, and any failure of it, goes to people."
        ),
    )
    refund_first_line_limit: float = Field(
        default=50,
        description=(
            "Refunds up to this amount go to the first-line reviewer (with SUPPORT_FIRST_LINE): above "
            "REFUND_AUTO_APPROVE_LIMIT, which must be lower (refunds up to it run without anyone)."
        ),
    )
    first_line_model: str = Field(
        default="",
        description="The first-line reviewer's model: 'scripted' or 'provider:model'; empty: MODEL's.",
    )
    first_line_may_reject: bool = Field(
        default=False,
        description=(
            "Let the first-line reviewer reject too (the agent gets its reason as a tool error); "
            "off: it only approves, and sends what it would reject to people."
        ),
    )
    first_line_sample_rate: float = Field(
        default=0.1,
        ge=0,
        le=1,
        description="The share of the first-line reviewer's approvals a person checks afterwards (0 to 1).",
    )
    first_line_timeout_seconds: float = Field(
        default=5,
        gt=0,
        description="How long the first-line reviewer may take over a call before people decide.",
    )

    @model_validator(mode="after")
    def _first_line_above_auto_approve(self) -> DemoSettings:
        if self.support_first_line and self.refund_first_line_limit <= self.refund_auto_approve_limit:
            msg = (
                f"REFUND_FIRST_LINE_LIMIT ({self.refund_first_line_limit:g}) is not above "
                f"REFUND_AUTO_APPROVE_LIMIT ({self.refund_auto_approve_limit:g}): refunds up to the "
                "auto-approve limit run without anyone, so the first-line reviewer would never see one. "
                "Lower REFUND_AUTO_APPROVE_LIMIT (e.g. 20) or raise REFUND_FIRST_LINE_LIMIT."
            )
            raise ValueError(msg)
        return self

    @field_validator("refund_decider_group", "refund_lead_group", "ops_decider_group")
    @classmethod
    def _group(cls, name: str, info: ValidationInfo) -> str:
        where = str(info.field_name).upper()
        if check_decider(where, name) == OWNER:
            msg = f"{where} names 'owner': name a group (e.g. reviewer, finance)"
            raise ValueError(msg)
        return name

    @field_validator("billing_answered_by")
    @classmethod
    def _answerer(cls, name: str) -> str:
        return check_decider("BILLING_ANSWERED_BY", name)

    @field_validator("workspace_dir")
    @classmethod
    def _workspace_dir(cls, path: Path) -> Path:
        return from_launch_dir(path)


@lru_cache(maxsize=1)
def demo_settings() -> DemoSettings:
    """The process-wide demo settings, read once."""
    return DemoSettings()
