"""The `ops` graph: data and files, one interrupt per gated call (`interrupt_mode="per_call"`).

`graph` is what `langgraph.json` serves; `make_graph` builds the same agent for scripts
and tests. Files live under `WORKSPACE_DIR`; Deep Agents' file tools work there through
`WorkspaceBackend`, and nothing outside it is reachable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents.offline import OPS
from agents.ops_policy import ops_policy
from agents.settings import DemoSettings, demo_settings
from hitl.deep_agent import SubagentSpec, build_deep_agent
from services.registry import Services, default_services
from services.workspace import Workspace
from subagents.deployer import deployer
from subagents.file_manager import file_manager
from tools.ops import build_ops_tools

if TYPE_CHECKING:
    from collections.abc import Callable

    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.types import Checkpointer


NAME = "ops"
DESCRIPTION_PREFIX = "ops asks before changing data or files"
SYSTEM_PROMPT = (
    "You are an operations agent for the shop's data and files. Read data freely; writes to the "
    "database and to files wait for a reviewer. Hand file chores to file_manager and deployments "
    "to deployer."
)


def make_graph(
    *,
    model: BaseChatModel | None = None,
    checkpointer: Checkpointer | None = None,
    services: Services | None = None,
    settings: DemoSettings | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The `ops` agent; defaults (model, workspace) come from the settings."""
    settings = settings or demo_settings()
    workspace = Workspace(settings.workspace_dir)
    tools, subagents = _parts(
        (lambda: services) if services else default_services, workspace, settings.ops_decider_group
    )
    return build_deep_agent(
        NAME,
        settings=settings,
        model=model,
        system_prompt=SYSTEM_PROMPT,
        tools=tools,
        interrupt_on=ops_policy(settings.ops_decider_group),
        subagents=subagents,
        interrupt_mode="per_call",
        checkpointer=checkpointer,
        backend=workspace.backend(),
        description_prefix=DESCRIPTION_PREFIX,
        offline=OPS,
        run_by=("reviewer", "supervisor"),
    )


def _parts(
    services: Callable[[], Services], workspace: Workspace, decider: str
) -> tuple[list[BaseTool], list[SubagentSpec]]:
    tools = build_ops_tools(services, workspace)
    return tools, [file_manager(tools, decider), deployer(decider)]


graph = make_graph()
