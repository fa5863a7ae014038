"""The scripted ops behaviour: archive old orders, run SQL, write/read/delete files, deploy.

One request may hold several jobs ("archive ..., delete them from the table and delete the
file tmp/old.log"); every gated call they need goes out in one model turn.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hitl.model.scripted.script import Call, Reply

if TYPE_CHECKING:
    from hitl.model.scripted.conversation import Conversation, ToolResult

OPS_TOOLS = frozenset({"read_data", "execute_sql", "delete_file", "request_approval"})
PATH = r"[\w./~-]*\w"
FILE_PATH = r"[\w~-]*[./][\w./~-]*\w"
"""A path without the word 'file' before it must look like one (a dot or a slash)."""
DELEGATE = re.compile(r"^.*?\b(?P<who>file manager|general[- ]purpose agent)\b\s*(?:to\s+)?", re.IGNORECASE)
DEPLOY = re.compile(
    r"\b(?:deploy|ship|release|roll\s+out|push)\s+(?:version\s+|release\s+|v)?(?P<version>\d[\w.-]*\w|\d)"
    r"\s+(?:to|on|in|into)\s+(?P<env>[\w-]+)",
    re.IGNORECASE,
)
ENVIRONMENTS = {"prod": "production", "stage": "staging"}
ARCHIVE = re.compile(
    r"\barchive\s+(?:(?:all|every|the|old)\s+)*orders?\s+(?:that\s+(?:are|were)\s+)?"
    r"(?:older\s+than|(?:(?:from|placed|delivered|made)\s+)?before|prior\s+to)\s+(?:the\s+year\s+)?"
    rf"(?P<year>\d{{4}})(?:\s+(?:into|to|in)\s+(?:the\s+file\s+)?(?P<file>{PATH}))?",
    re.IGNORECASE,
)
DELETE_ROWS = re.compile(
    r"\b(?:delete|remove|drop|purge)\s+(?:them|those(?:\s+(?:rows|orders))?|the\s+(?:archived\s+)?(?:rows|orders))\b",
    re.IGNORECASE,
)
DELETE_FILES = re.compile(
    r"\b(?:delete|remove|erase|get\s+rid\s+of)\s+(?:the\s+)?"
    rf"(?:(?:[\w-]+\s+)?files?\s+(?P<paths>{PATH}(?:(?:\s*,\s*|\s+and\s+){PATH})*)"
    rf"|(?P<bare>{FILE_PATH}(?:(?:\s*,\s*|\s+and\s+){FILE_PATH})*))",
    re.IGNORECASE,
)
QUOTED = r"(?:'(?P<a>.*?)'|\"(?P<b>.*?)\"|“(?P<c>.*?)”|‘(?P<d>.*?)’)"  # noqa: RUF001  (curly quotes are what people paste)
WRITE = re.compile(
    rf"\b(?:write|put|save|store)\s+(?:the\s+(?:text|line|words)\s+)?{QUOTED}\s+(?:to|into|in)\s+"
    rf"(?:the\s+file\s+)?(?P<path>{PATH})",
    re.IGNORECASE,
)
READ = re.compile(
    r"\b(?:(?:read|show|open|print|display)\s+(?:me\s+)?(?:the\s+)?(?:contents?\s+of\s+)?"
    rf"(?:(?:the\s+)?file\s+(?P<path>{PATH})|(?P<bare>{FILE_PATH}))"
    rf"|what(?:'s|\s+is)\s+in\s+(?:the\s+file\s+)?(?P<asked>{PATH}))",
    re.IGNORECASE,
)
SQL = re.compile(
    r"\b(?:run|execute)\s+(?:this|the\s+following|the)?\s*(?:sql|query)(?:\s+(?:statement|query))?"
    r"\s*(?:please\s*)?:\s*(?P<sql>.+)$",
    re.IGNORECASE | re.DOTALL,
)
SUBAGENTS = {
    "file_manager": "The file manager",
    "deployer": "The deployer",
    "general-purpose": "The general-purpose agent",
}
HELP = (
    "I look after data and files. Try 'Archive orders older than 2025 into orders_archive.csv and "
    "delete them from the table', 'Delete the file tmp/old.log' or 'Deploy version 1.4 to production'."
)


@dataclass(frozen=True)
class OpsRequest:
    """The jobs an ops request asks for, read from its words."""

    archive_year: str | None
    archive_file: str
    delete_rows: bool
    deletes: tuple[str, ...]
    write: tuple[str, str] | None
    read: str | None
    sql: str | None

    @classmethod
    def read_text(cls, text: str) -> OpsRequest:
        """Parse a request such as 'Delete the files tmp/a.log and tmp/b.log'."""
        archive = ARCHIVE.search(text)
        deletes = DELETE_FILES.search(text)
        write = WRITE.search(text)
        read = READ.search(text)
        sql = SQL.search(text)
        return cls(
            archive_year=archive["year"] if archive else None,
            archive_file=_workspace_path(archive["file"] or "orders_archive.csv") if archive else "",
            delete_rows=bool(archive and DELETE_ROWS.search(text)),
            deletes=_paths(deletes["paths"] or deletes["bare"]) if deletes else (),
            write=(_quoted(write), _workspace_path(write["path"])) if write else None,
            read=_workspace_path(read["path"] or read["bare"] or read["asked"]) if read else None,
            sql=sql["sql"].strip() if sql else None,
        )


def ops_script(chat: Conversation) -> Reply | None:
    """Answer an ops request, one step per model call."""
    if not chat.tools & OPS_TOOLS:
        return None
    if "task" in chat.tools and (helper := DELEGATE.match(chat.request)):
        who = "file_manager" if helper["who"].lower() == "file manager" else "general-purpose"
        return _delegate(chat, who, chat.request[helper.end() :])
    if deploy := DEPLOY.search(chat.request):
        environment = ENVIRONMENTS.get(deploy["env"].lower(), deploy["env"])
        if "request_approval" in chat.tools:
            return _deploy(chat, deploy["version"], environment)
        if "task" in chat.tools:
            return _delegate(chat, "deployer", chat.request)
    request = OpsRequest.read_text(chat.request)
    if request.sql is not None and "execute_sql" in chat.tools:
        return _sql(chat, request.sql)
    return _jobs(chat, request)


def _jobs(chat: Conversation, request: OpsRequest) -> Reply:
    """Archive (read first), then every file and SQL call at once, then one summary."""
    if request.archive_year is not None and "read_data" in chat.tools:
        rows = chat.last("read_data")
        if rows is None:
            where = [{"column": "delivered_on", "op": "<", "value": f"{request.archive_year}-01-01"}]
            return [Call("read_data", {"table": "orders", "where": where})]
        if not rows.ok:
            return f"I could not read the orders: {rows.content}"
    if pending := _pending_calls(chat, request):
        return pending
    words = [_outcome(r) for r in chat.results if r.name != "read_data"]
    if request.archive_year is not None and not _archived_rows(chat):
        words.insert(0, f"There are no orders older than {request.archive_year} to archive.")
    return " ".join(words) if words else HELP


def _pending_calls(chat: Conversation, request: OpsRequest) -> list[Call]:
    """Every call the request still needs, in one turn."""
    wanted: list[Call] = []
    if rows := _archived_rows(chat):
        wanted.append(Call("write_file", {"file_path": request.archive_file, "content": _as_csv(rows)}))
        if request.delete_rows:
            ids = ", ".join(f"'{row['order_id']}'" for row in rows)
            delete = f"DELETE FROM orders WHERE order_id IN ({ids})"  # noqa: S608  (the model writes SQL; a person reviews it)
            wanted.append(Call("execute_sql", {"query": delete}))
    if request.write is not None:
        text, path = request.write
        wanted.append(Call("write_file", {"file_path": path, "content": f"{text}\n"}))
    if request.read is not None:
        wanted.append(Call("read_file", {"file_path": request.read}))
    wanted += [Call("delete_file", {"path": path}) for path in request.deletes]
    return [c for c in wanted if c.name in chat.tools and not _done(chat, c)]


def _done(chat: Conversation, call: Call) -> bool:
    key = next(iter(call.args))
    return any(r.name == call.name and r.args.get(key) == call.args[key] for r in chat.results)


def _archived_rows(chat: Conversation) -> list[dict[str, Any]]:
    rows = chat.last("read_data")
    return list((rows.data or {}).get("rows", [])) if rows is not None and rows.ok else []


def _as_csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _paths(listed: str) -> tuple[str, ...]:
    return tuple(re.split(r"\s*,\s*|\s+and\s+", listed))


def _quoted(match: re.Match[str]) -> str:
    return next(text for text in match.group("a", "b", "c", "d") if text is not None)


def _workspace_path(path: str) -> str:
    return "/" + path.removeprefix("/")


def _delegate(chat: Conversation, subagent: str, task: str) -> Reply:
    done = chat.last("task")
    if done is None:
        return [Call("task", {"description": task.strip(), "subagent_type": subagent})]
    return f"{SUBAGENTS[subagent]} reports: {done.content}"


def _deploy(chat: Conversation, version: str, environment: str) -> Reply:
    action = f"Deploy version {version} to {environment}"
    answer = chat.last("request_approval")
    if answer is None:
        message = f"Version {version} passed its checks and is ready for {environment}. Please sign it off."
        return [Call("request_approval", {"action": action, "message": message})]
    data = answer.data
    if not answer.ok or data is None:
        return f"I could not get a sign-off for: {action}. {answer.content}"
    verdict = "was approved" if data["approved"] else "was not approved"
    reason = f" ({data['reason']})" if data.get("reason") else ""
    return f"{action} {verdict}{reason}."


def _sql(chat: Conversation, statement: str) -> Reply:
    result = chat.last("execute_sql")
    if result is None:
        return [Call("execute_sql", {"query": statement})]
    return _outcome(result)


def _outcome(result: ToolResult) -> str:  # noqa: PLR0911  (one sentence per tool and outcome)
    target = result.args.get("file_path") or result.args.get("path") or ""
    if not result.ok:
        return f"{result.name} did not run: {result.content}"
    data = result.data
    last_line = result.content.strip().rsplit("\n", 1)[-1]
    edited = " (as a reviewer edited it)" if "Executed instead" in result.content else ""
    if result.name == "execute_sql" and data is not None:
        if data["read_only"]:
            return f"The query returned {data['rowcount']} row(s): {data['rows']}."
        return f"The statement changed {data['rowcount']} row(s)."
    if result.name == "delete_file" and data is not None:
        return f"Deleted {data['deleted']}{edited}."
    if result.name == "write_file" and last_line.startswith("Updated file "):
        return f"Wrote {last_line.removeprefix('Updated file ')}{edited}."
    if result.name == "read_file":
        text = re.sub(r"^@@[^\n]*@@\n", "", result.content.strip())
        return f"{target} reads: {text}"
    return f"For {result.name} {target} the reviewer answered: {result.content}".replace("  ", " ")
