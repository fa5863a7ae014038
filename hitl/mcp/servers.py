"""The MCP servers an agent declares: a name for its tools, and which settings hold its URL and headers.

A declaration names settings, never values: the URL and each header (a token, say) are read from the
agent's settings (the environment, `.env`), so a server's address comes from the deployment's
configuration only, never from a model's or a user's text, and no secret sits in code. The name gives
each tool a stable policy name (`crm.delete_contact`) and the name the model calls it by
(`crm_delete_contact`); a request's `Limits`, and the `ServerProblem` a failed one ends in. Not for
connecting (`hitl.mcp.connection`) or listing (`hitl.mcp.listing`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import SecretStr

from hitl.policy.groups import OWNER, check_decider

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from hitl.policy.gates import Policy, ToolGate
    from hitl.settings import Settings

SERVER_NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")
"""A server's name: lowercase letters, digits and '-' (not '_' nor '.', which separate it from its tools)."""
SETTING_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")
HEADER_NAME = re.compile(r"[A-Za-z0-9-]{1,100}")
RESERVED_HEADERS = frozenset(
    {"host", "content-length", "content-type", "accept", "transfer-encoding", "connection"}
)
"""Headers the transport writes itself; a declaration may not set them (nor any `Mcp-*` one)."""
MODEL_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What a model provider takes as a tool's name (OpenAI's rule, the narrowest)."""


class ServerProblem(Exception):  # noqa: N818  (a server's problem, told to the model and the operator)
    """A server that could not be reached, did not answer in time, answered too much or not MCP."""


@dataclass(frozen=True)
class Limits:
    """How long one request to a server may take, and how many bytes of its answer are read."""

    timeout_seconds: float
    max_response_bytes: int


@dataclass(frozen=True)
class McpServer:
    """One MCP server an agent or subagent uses, served over streamable HTTP.

    Attributes:
        name: what its tools are known by: `crm` makes `crm.delete_contact` (policy) and
            `crm_delete_contact` (the model's tool). Lowercase letters, digits, '-'.
        url_setting: the setting (environment variable) holding its URL, e.g. `CRM_MCP_URL`: a
            field of the agent's settings class, read when the agent is built. Never a URL itself.
        header_settings: header -> the setting holding its value
            (`{"Authorization": "CRM_MCP_AUTHORIZATION"}`).
        answered_by: who answers the server's questions mid-call (elicitations): `owner` (the thread's
            owner, by default) or a group.
        timeout_seconds: how long one request to it may take; None: `MCP_TIMEOUT_SECONDS`.
    """

    name: str
    url_setting: str
    header_settings: Mapping[str, str] = field(default_factory=dict)
    answered_by: str = OWNER
    timeout_seconds: float | None = None

    def __post_init__(self) -> None:
        """Refuse a declaration that could carry a value where a setting's name belongs.

        Raises:
            ValueError: naming the part and what it must be.
        """
        where = f"MCP server {self.name!r}"
        if not isinstance(self.name, str) or not SERVER_NAME.fullmatch(self.name):
            msg = f"{where}: a name is lowercase letters, digits and '-', starting with a letter (at most 32)"
            raise ValueError(msg)
        _setting_name(where, "url_setting", self.url_setting)
        for header, setting in self.header_settings.items():
            if not isinstance(header, str) or not HEADER_NAME.fullmatch(header):
                msg = f"{where}: header {header!r} is not a header name"
                raise ValueError(msg)
            if header.lower() in RESERVED_HEADERS or header.lower().startswith("mcp-"):
                msg = f"{where}: header {header!r} is the transport's own; it may not be set"
                raise ValueError(msg)
            _setting_name(where, f"header_settings[{header!r}]", setting)
        check_decider(f"{where} answered_by", self.answered_by)
        if self.timeout_seconds is not None and not (
            isinstance(self.timeout_seconds, int | float) and self.timeout_seconds > 0
        ):
            msg = f"{where}: timeout_seconds must be a positive number (got {self.timeout_seconds!r})"
            raise ValueError(msg)

    def policy_name(self, tool: str) -> str:
        """What a policy calls the server's `tool`: `crm.delete_contact`."""
        return f"{self.name}.{tool}"

    def tool_name(self, tool: str) -> str:
        """What the model calls the server's `tool`: `crm_delete_contact` (other characters become '_')."""
        return f"{self.name}_{re.sub(r'[^A-Za-z0-9_-]', '_', tool)}"

    def owns(self, tool_name: str) -> bool:
        """Whether a tool the model calls `tool_name` is one of this server's (by its prefix)."""
        return tool_name.startswith(f"{self.name}_")


def _setting_name(where: str, part: str, value: object) -> None:
    if not isinstance(value, str) or not SETTING_NAME.fullmatch(value):
        msg = (
            f"{where}: {part} names the setting that holds the value (e.g. CRM_MCP_URL), "
            f"never the value itself (got {value!r})"
        )
        raise ValueError(msg)


@dataclass(frozen=True)
class Endpoint:
    """A declared server as this deployment configures it: where to reach it and with which headers."""

    server: McpServer
    url: str
    """Empty when the setting is: the server is not configured here, and none of its tools is offered."""
    headers: dict[str, str]

    @property
    def configured(self) -> bool:
        """Whether the deployment gives this server a URL."""
        return bool(self.url)


def endpoint_of(server: McpServer, settings: Settings) -> Endpoint:
    """Read `server`'s URL and headers from `settings`.

    Raises:
        ValueError: a named setting the settings class does not have, a URL that is not http(s)
            with a host (or that carries a user or password), a header value that is not one line.
    """
    url = _read(server, settings, server.url_setting)
    if url:
        parts = urlsplit(url)
        if parts.scheme not in {"http", "https"} or not parts.hostname or parts.username or parts.password:
            msg = (
                f"MCP server {server.name!r}: {server.url_setting.upper()} must be an http(s) URL with a host"
                " "
                f"and no user or password (got {url!r})"
            )
            raise ValueError(msg)
    headers = {}
    for header, setting in server.header_settings.items():
        value = _read(server, settings, setting)
        if not value.isprintable():
            msg = f"MCP server {server.name!r}: {setting.upper()} must be one line of printable text"
            raise ValueError(msg)
        if value:
            headers[header] = value
    return Endpoint(server=server, url=url, headers=headers)


def _read(server: McpServer, settings: Settings, setting: str) -> str:
    field_name = setting.lower()
    if field_name not in type(settings).model_fields:
        msg = (
            f"MCP server {server.name!r} names the setting {setting.upper()}, which "
            f"{type(settings).__name__} does not have: add it as a field (with its description) "
            "and to .env.example"
        )
        raise ValueError(msg)
    value: Any = getattr(settings, field_name)
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    if not isinstance(value, str):
        msg = f"MCP server {server.name!r}: {setting.upper()} must be text (got {type(value).__name__})"
        raise ValueError(msg)  # noqa: TRY004  (a wrong configuration, reported as such)
    return value.strip()


def check_names(agent: str, servers: Iterable[McpServer], tool_names: Iterable[str]) -> None:
    """Refuse two servers of one name, and a local tool named like a server's tool (`crm_...`).

    Raises:
        ValueError: naming the agent and the clash.
    """
    seen: dict[str, McpServer] = {}
    for server in servers:
        if server.name in seen and seen[server.name] != server:
            msg = f"{agent!r} declares two different MCP servers named {server.name!r}"
            raise ValueError(msg)
        seen[server.name] = server
    clashes = sorted(name for name in tool_names for server in seen.values() if server.owns(name))
    if clashes:
        msg = (
            f"{agent!r}: tools {', '.join(clashes)} are named like an MCP server's tools (its name and '_'); "
            "rename them or the server"
        )
        raise ValueError(msg)


def mcp_policy(policy: Policy, servers: Sequence[McpServer], *, agent: str) -> Policy:
    """`policy` with each MCP tool's policy name (`crm.delete_contact`) turned into its tool's name.

    Raises:
        ValueError: a name with a '.' whose server the agent does not declare, or an MCP tool named
            the model's way (`crm_delete_contact`) instead of the policy's.
    """
    by_name = {s.name: s for s in servers}
    declared = ", ".join(sorted(by_name)) or "none"
    result: dict[str, ToolGate] = {}
    for key, gate in policy.items():
        server_name, dot, tool = key.partition(".")
        if dot:
            server = by_name.get(server_name)
            if server is None or not tool:
                msg = (
                    f"interrupt_on of {agent!r} names {key!r}, but {agent!r} declares no MCP server "
                    f"{server_name!r} (its MCP servers: {declared})"
                )
                raise ValueError(msg)
            result[server.tool_name(tool)] = gate
        elif owner := next((s for s in servers if s.owns(key)), None):
            msg = (
                f"interrupt_on of {agent!r} names {key!r}: name an MCP server's tool by server and tool, "
                f"{owner.policy_name(key.removeprefix(owner.name + '_'))!r}"
            )
            raise ValueError(msg)
        else:
            result[key] = gate
    return result
