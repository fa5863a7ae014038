"""What every `hitl` command shares: its server options, the client it makes, and how it speaks.

Errors are one line on stderr and a non-zero exit (`fail`, `server_error`); `--json` prints the
server's data for scripts (`emit`). Not for the commands themselves (`queue`, `decide`, `reports`).
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import httpx
import typer
from langgraph_sdk import get_sync_client
from rich.console import Console

if TYPE_CHECKING:
    from langgraph_sdk.client import SyncLangGraphClient

out = Console()
err = Console(stderr=True)

Url = Annotated[str, typer.Option(envvar="HITL_URL", help="Server address.")]
Token = Annotated[str, typer.Option(envvar="HITL_TOKEN", help="Your bearer token.")]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
DEFAULT_URL = "http://127.0.0.1:2024"


def fail(message: str) -> NoReturn:
    """Print one clear line and exit 1."""
    err.print(f"[red]error:[/red] {message}", highlight=False)
    raise typer.Exit(1)


def connect(url: str, token: str) -> SyncLangGraphClient:
    """A client of the server at `url`, acting with `token`."""
    if not token:
        fail("no token: pass --token or set HITL_TOKEN")
    return get_sync_client(url=url, headers={"Authorization": f"Bearer {token}"})


def server_error(error: httpx.HTTPError) -> NoReturn:
    """Turn an HTTP error into the server's own one-line explanation."""
    if isinstance(error, httpx.HTTPStatusError):
        detail = " ".join(getattr(error, "__notes__", [])) or error.response.text
        with contextlib.suppress(ValueError, AttributeError):
            detail = json.loads(detail).get("detail", detail)
        fail(f"{error.response.status_code}: {detail}")
    fail(f"cannot reach the server: {error}")


def emit(data: Any, as_json: bool) -> bool:  # noqa: ANN401, FBT001
    """Print `data` as JSON when asked; returns whether it did."""
    if as_json:
        out.print_json(json.dumps(data, default=str))
    return as_json


def json_object(text: str, what: str) -> dict[str, Any]:
    """`text` as a JSON object; else one line saying what `what` is wrong with, and exit 1."""
    try:
        value = json.loads(text)
    except ValueError as error:
        fail(f"{what} is not valid JSON: {error}")
    if not isinstance(value, dict):
        fail(f"{what} must be a JSON object")
    return value


def progress(approvals: object) -> str | None:
    """A quorum's progress in words: '1 of 2 approvals: supervisor1'; None for a call one person decides."""
    if not isinstance(approvals, dict) or not isinstance(required := approvals.get("required"), int):
        return None
    people = [str(p) for p in approvals.get("approved_by") or []]
    return f"{len(people)} of {required} approvals" + (f": {', '.join(people)}" if people else "")
