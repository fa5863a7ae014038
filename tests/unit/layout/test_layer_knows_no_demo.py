"""The frame knows no tenant: the approval layer imports nothing of the demo and names none of it.

`hitl/` and `server/` (and the web app's code outside `web/src/demo`) may not import `agents`,
`subagents`, `tools` or `services`, nor name a demo agent or tool (in code, strings, docstrings
or comments) or a demo table (as a string). The demo plugs into the layer as your agents do.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DEMO_PACKAGES = frozenset({"agents", "subagents", "tools", "services"})
DEMO_AGENTS = frozenset(
    {"support", "travel", "ops", "refund_specialist", "booking_agent", "file_manager", "deployer"}
)
DEMO_TOOLS = frozenset(
    {
        "get_order",
        "get_refund_policy",
        "issue_refund",
        "send_email",
        "ask_user",
        "search_flights",
        "book_flight",
        "cancel_booking",
        "read_data",
        "execute_sql",
        "delete_file",
        "request_approval",
        "lookup_invoice",
        "payment_method",
        "void_invoice",
        "issue_credit_note",
    }
)
DEMO_SERVERS = frozenset({"billing"})
"""The demo's MCP servers: the layer names none (its examples use another name)."""
DEMO_TABLES = frozenset(
    {
        "orders",
        "refunds",
        "outbox",
        "flights",
        "bookings",
        "sql_runs",
        "file_deletions",
        "invoices",
        "credit_notes",
    }
)
NAMED = re.compile(
    r"(?<![\w./-])("
    + "|".join(sorted(DEMO_AGENTS | DEMO_TOOLS | DEMO_SERVERS, key=len, reverse=True))
    + r")(?![\w-])"
)
WEB_NAMED = re.compile(
    r"\b(" + "|".join(sorted(DEMO_TOOLS | {"flight-booking", "FlightBooking"}, key=len)) + r")\b"
)
LAYER = sorted(
    p for folder in ("hitl", "server") for p in (ROOT / folder).rglob("*.py") if "templates" not in p.parts
)


def relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", LAYER, ids=relative)
def test_the_layer_imports_nothing_of_the_demo(path):
    """no `import agents...`, `from services...` (at any depth, also inside functions)."""
    imported = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            imported += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.append(node.module)
    assert [m for m in imported if m.split(".")[0] in DEMO_PACKAGES] == []


@pytest.mark.parametrize("path", LAYER, ids=relative)
def test_the_layer_names_no_demo_agent_tool_or_table(path):
    """no demo agent or tool in a name, a string or a comment; no demo table as a string."""
    found = []
    before = None
    for token in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        dotted = (
            before is not None and before.string == "."
        )  # another package's module: langgraph_runtime.ops
        before = token
        if (
            token.type == tokenize.NAME
            and token.string in DEMO_AGENTS | DEMO_TOOLS | DEMO_SERVERS
            and not dotted
        ):
            found.append((token.start[0], token.string))
        elif token.type == tokenize.STRING:
            try:
                value = ast.literal_eval(token.string)
            except (ValueError, SyntaxError):  # an f-string: its text as written
                value = token.string
            if isinstance(value, str):
                found += [(token.start[0], name) for name in NAMED.findall(value)]
                if value in DEMO_TABLES:
                    found.append((token.start[0], value))
        elif token.type == tokenize.COMMENT:
            found += [(token.start[0], name) for name in NAMED.findall(token.string)]
    assert found == []


def test_the_web_apps_core_names_no_demo_tool_or_form():
    """web/src outside web/src/demo (and the generated types): no demo tool or form, no agent list."""
    found = []
    for path in sorted((ROOT / "web" / "src").rglob("*.ts*")):
        if "demo" in path.parts or path.name == "generated.ts":
            continue
        text = path.read_text()
        found += [(relative(path), name) for name in WEB_NAMED.findall(text)]
        found += [(relative(path), agent) for agent in DEMO_AGENTS if f'"{agent}"' in text]
    assert found == []
