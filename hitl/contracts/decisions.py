"""What a person answers an interrupt: the decisions, an approve that allows more, a sign-off's answer.

LangChain's decision types (approve, edit, reject, respond) are the vocabulary; ours add an
approve that allows later calls of the tool in the thread (within argument bounds), the batched
answer, and the answer to a tool's sign-off. Which of them an interrupt accepts is
`hitl.contracts.answers`; what an edit may say, `hitl.contracts.edits`.
"""

from __future__ import annotations

from typing import Literal, NotRequired

from langchain.agents.middleware.human_in_the_loop import (
    ApproveDecision,
    Decision,
    EditDecision,
    RejectDecision,
    RespondDecision,
)
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from hitl.contracts.interrupts import DecisionType

__all__ = [
    "AllowInThread",
    "ApprovalAnswer",
    "ApproveAndAllowDecision",
    "ApproveDecision",
    "ArgBound",
    "BatchedResponse",
    "Decision",
    "DecisionType",
    "EditDecision",
    "EqualsBound",
    "MaxBound",
    "McpAction",
    "McpElicitationAnswer",
    "RejectDecision",
    "RespondDecision",
]


class ApprovalAnswer(BaseModel):
    """The answer to an `ApprovalRequest`: yes or no, and why."""

    model_config = ConfigDict(extra="forbid")

    approved: bool = Field(strict=True, description="Whether the action may go ahead.")
    reason: str = Field(default="", description="Why; the agent reports it.")


class MaxBound(TypedDict):
    """The argument is a number of at most `max`."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]

    max: float


class EqualsBound(TypedDict):
    """The argument equals `equals` exactly."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]

    equals: str | int | float | bool


ArgBound = MaxBound | EqualsBound
"""A limit on one argument of the calls an allowance covers."""


class AllowInThread(TypedDict):
    """Approve, and don't ask again in this thread for this tool (optionally within argument bounds)."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]

    scope: Literal["thread"]
    bounds: NotRequired[dict[str, ArgBound]]
    """Argument name to its bound; calls outside any bound (or missing the argument) still pause."""


class ApproveAndAllowDecision(TypedDict):
    """An approve that may also allow later calls of the same tool in this thread.

    Accepted only where the request says `may_allow`; policy's always-review calls never do.
    """

    type: Literal["approve"]
    allow: NotRequired[AllowInThread]


McpAction = Literal["accept", "decline", "cancel"]
"""What a person may do with an MCP server's question (as MCP says): `McpElicitationAccept`'s action, or
`McpElicitationRefusal`'s."""


class McpElicitationAccept(TypedDict):
    """Accept an MCP server's question: `content` fitting its `requested_schema` (form), or none (url)."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]

    action: Literal["accept"]
    content: NotRequired[dict[str, str | int | float | bool | list[str]]]
    question: NotRequired[str]
    """The question answered (`McpElicitationRequest.question`); the server fills it in."""


class McpElicitationRefusal(TypedDict):
    """Decline the question (the call may go on without it) or cancel it (the call is abandoned)."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]

    action: Literal["decline", "cancel"]
    question: NotRequired[str]
    """As `McpElicitationAccept.question`."""


McpElicitationAnswer = McpElicitationAccept | McpElicitationRefusal
"""The answer to a `McpElicitationRequest`, by interrupt id; the server checks `content` against the
request's own `requested_schema` (a field's error names it) before anything is saved."""


class BatchedResponse(TypedDict):
    """The answer to a `BatchedApprovalRequest`: one decision per action, in order."""

    decisions: list[Decision]
