"""Tools from MCP servers, under the same gate as the agent's own, and their questions answered in the inbox.

An agent or subagent declares the servers it uses (`McpServer`: a name, and the settings that hold
its URL and headers) in its own module and passes them as `create_deep_agent(mcp_servers=[...])`;
its `interrupt_on` names their tools `server.tool`. `servers` reads declarations, `listing` checks
what a server lists, `gating` says which calls pause, `toolbox` offers and runs the tools behind the
gate, `calls` runs one call round by round, `questions` asks a server's questions of a person,
`receipts` reads the schema an approval names, and `connection` is the one adapter of the `mcp` SDK.
"""

from __future__ import annotations

from hitl.mcp.servers import McpServer

__all__ = ["McpServer"]
