"""Declaring an MCP server: the names of settings, never values; names that cannot clash; policy names."""

from __future__ import annotations

import pytest
from pydantic import Field, SecretStr

from hitl.mcp.servers import McpServer, check_names, endpoint_of, mcp_policy
from hitl.policy.gates import ToolGate
from hitl.settings import Settings


class CrmSettings(Settings):
    """A team's settings: where its CRM's MCP server is, and its token."""

    crm_mcp_url: str = Field(default="")
    crm_mcp_token: SecretStr = Field(default=SecretStr(""))


CRM = McpServer("crm", url_setting="CRM_MCP_URL", header_settings={"Authorization": "CRM_MCP_TOKEN"})
GATE = ToolGate(allowed_decisions=("approve", "reject"))


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        ({"name": "CRM", "url_setting": "CRM_MCP_URL"}, "lowercase letters"),
        ({"name": "crm_x", "url_setting": "CRM_MCP_URL"}, "lowercase letters"),
        ({"name": "crm", "url_setting": "http://10.0.0.1/mcp"}, "never the value itself"),
        (
            {"name": "crm", "url_setting": "CRM_MCP_URL", "header_settings": {"Authorization": "Bearer abc"}},
            "never",
        ),
        ({"name": "crm", "url_setting": "CRM_MCP_URL", "header_settings": {"Host": "X"}}, "transport's own"),
        (
            {"name": "crm", "url_setting": "CRM_MCP_URL", "header_settings": {"Mcp-Session-Id": "X"}},
            "transport's",
        ),
        ({"name": "crm", "url_setting": "CRM_MCP_URL", "answered_by": "Finance Team"}, "decider"),
        ({"name": "crm", "url_setting": "CRM_MCP_URL", "timeout_seconds": 0}, "positive"),
    ],
)
def test_a_declaration_with_a_value_where_a_setting_belongs_is_refused(kwargs, said):
    """McpServer: a literal URL or token, a reserved header, a bad name or decider: ValueError naming it."""
    with pytest.raises(ValueError, match=said):
        McpServer(**kwargs)


def test_the_url_and_headers_come_from_the_settings():
    """endpoint_of: the URL and a SecretStr token read from the settings; an empty URL is 'not configured'."""
    settings = CrmSettings(crm_mcp_url="https://crm.internal/mcp", crm_mcp_token=SecretStr("Bearer t0k"))
    endpoint = endpoint_of(CRM, settings)
    assert (endpoint.url, endpoint.headers, endpoint.configured) == (
        "https://crm.internal/mcp",
        {"Authorization": "Bearer t0k"},
        True,
    )
    assert not endpoint_of(CRM, CrmSettings()).configured


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("file:///etc/passwd", "http\\(s\\) URL"),
        ("ftp://crm/mcp", "http\\(s\\) URL"),
        ("https://user:pw@crm/mcp", "no user or password"),
        ("server.py", "http\\(s\\) URL"),
    ],
)
def test_a_url_that_is_not_http_is_refused(url, said):
    """endpoint_of: a file, another scheme, credentials in the URL, a script path: refused, never run."""
    with pytest.raises(ValueError, match=said):
        endpoint_of(CRM, CrmSettings(crm_mcp_url=url))


def test_a_setting_the_settings_class_lacks_is_named():
    """endpoint_of: a typo'd setting stops the build, naming it and where to add it."""
    with pytest.raises(ValueError, match=r"CRM_MCP_URL, which Settings does not have"):
        endpoint_of(CRM, Settings())


def test_policy_names_become_tool_names_and_typos_stop_the_build():
    """mcp_policy: crm.delete_contact becomes crm_delete_contact; a server not declared or crm_x: refused."""
    assert set(mcp_policy({"crm.delete_contact": GATE, "local": GATE}, [CRM], agent="a")) == {
        "crm_delete_contact",
        "local",
    }
    with pytest.raises(ValueError, match="declares no MCP server 'crn'"):
        mcp_policy({"crn.delete_contact": GATE}, [CRM], agent="a")
    with pytest.raises(ValueError, match=r"'crm\.delete_contact'"):
        mcp_policy({"crm_delete_contact": GATE}, [CRM], agent="a")


def test_names_that_could_clash_are_refused():
    """check_names: two servers of one name; a local tool named like a server's tool."""
    other = McpServer("crm", url_setting="OTHER_URL")
    with pytest.raises(ValueError, match="two different MCP servers named 'crm'"):
        check_names("a", [CRM, other], [])
    with pytest.raises(ValueError, match="crm_report"):
        check_names("a", [CRM], ["crm_report"])
    check_names("a", [CRM, CRM], ["report"])
