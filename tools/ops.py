"""Ops tools: read rows, run SQL against the business database, delete a workspace file.

Writing and reading files are Deep Agents' own tools over the same workspace
(`services.workspace.WorkspaceBackend`); the ops policy decides which of these pause.
A customer (requester) reads only their own rows through `read_data`; ad-hoc SQL reads,
which no one reviews and no owner filter can follow, are for staff.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from pydantic import BaseModel, Field

from services.errors import BusinessRuleError
from services.records import Comparison  # noqa: TC001  (pydantic reads it at runtime)
from services.sql import is_read_only
from tools.owners import records_owner
from tools.results import as_json, refusals_as_tool_errors

if TYPE_CHECKING:
    from collections.abc import Callable

    from services.registry import Services
    from services.workspace import Workspace


class Filter(BaseModel):
    """One condition of `read_data`: `column op value`."""

    column: str = Field(description="Column name, e.g. delivered_on.")
    op: Comparison = Field(description="Comparison.")
    value: str | float | int | bool | None = Field(description="Value to compare with.")


class DataRequest(BaseModel):
    """Arguments of `read_data`."""

    table: str = Field(description="Table name, e.g. orders.")
    where: list[Filter] = Field(default_factory=list, description="Conditions, all of which must hold.")
    limit: int = Field(default=100, ge=1, le=500, description="Most rows to return.")


class SqlStatement(BaseModel):
    """Arguments of `execute_sql`."""

    query: str = Field(description="One SQL statement; SELECTs run at once, others wait for a person.")
    tool_call_id: Annotated[str, InjectedToolCallId]


class FileToDelete(BaseModel):
    """Arguments of `delete_file`."""

    path: str = Field(description="Path inside the workspace, e.g. /tmp/old.log.")
    tool_call_id: Annotated[str, InjectedToolCallId]


def build_ops_tools(services: Callable[[], Services], workspace: Workspace) -> list[BaseTool]:
    """The `ops` agent's own tools, acting on `services()` and on files under `workspace`."""

    @tool(args_schema=DataRequest)
    @refusals_as_tool_errors
    def read_data(table: str, where: list[Filter] | None = None, limit: int = 100) -> str:
        """Read rows of a business table (orders, flights, bookings, ...), optionally filtered."""
        conditions = [f.model_dump() if isinstance(f, Filter) else f for f in where or []]
        rows = services().records.read(table, conditions, limit, owner=records_owner())  # type: ignore[arg-type]
        return as_json({"table": table, "count": len(rows), "rows": rows})

    @tool(args_schema=SqlStatement)
    @refusals_as_tool_errors
    def execute_sql(query: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Run one SQL statement against the business database."""
        if (owner := records_owner()) is not None and is_read_only(query):
            msg = (
                f"SQL reads are for staff (reviewer, supervisor); {owner} can use read_data, "
                "which shows their own orders and bookings."
            )
            raise BusinessRuleError(msg)
        return as_json(services().sql.run(query, tool_call_id=tool_call_id))

    @tool(args_schema=FileToDelete)
    @refusals_as_tool_errors
    def delete_file(path: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Delete one file in the workspace."""
        deletion = services().file_deletions.delete(workspace, path, tool_call_id=tool_call_id)
        return as_json({"deleted": deletion["path"]})

    tools: list[BaseTool] = [read_data, execute_sql, delete_file]
    for each in tools:
        each.handle_tool_error = True
    return tools
