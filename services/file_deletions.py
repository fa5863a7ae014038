"""Deleting workspace files: once per tool call, each deletion remembered in the business database.

The ops agent's `delete_file` acts through `FileDeletions`, which a person reviews first. Kept apart
from `services.workspace` (Deep Agents' file backend), so the business services open without
importing Deep Agents.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypedDict

from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError

from services.database import file_deletions
from services.errors import BusinessRuleError

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

    from services.workspace import Workspace


class Deletion(TypedDict):
    """A file deleted by one tool call."""

    tool_call_id: str
    path: str
    created_at: str


class FileDeletions:
    """Deletes workspace files, once per tool call, and remembers each in the business database."""

    def __init__(self, engine: Engine) -> None:
        """Use the business database behind `engine`."""
        self._engine = engine

    def delete(self, workspace: Workspace, path: str, *, tool_call_id: str) -> Deletion:
        """Delete the file `path` in `workspace`; a replay of the same tool call returns the first deletion.

        Raises:
            BusinessRuleError: the path is outside the workspace, missing, or a directory.
        """
        with self._engine.connect() as conn:
            if (done := _by_tool_call(conn, tool_call_id)) is not None:
                return done
        real = workspace.resolve(path)
        if real.is_dir():
            msg = f"{path!r} is a directory; delete_file deletes single files."
            raise BusinessRuleError(msg)
        if not real.exists():
            with self._engine.connect() as conn:
                if (done := _by_tool_call(conn, tool_call_id)) is not None:  # deleted a moment ago
                    return done
            msg = f"There is no file {path!r} in the workspace."
            raise BusinessRuleError(msg)
        real.unlink()
        deletion = Deletion(
            tool_call_id=tool_call_id,
            path="/" + real.relative_to(workspace.root).as_posix(),
            created_at=datetime.now(UTC).isoformat(),
        )
        try:
            with self._engine.begin() as conn:
                conn.execute(insert(file_deletions).values(**deletion))
        except IntegrityError:  # the same tool call, resumed twice at once, recorded it first
            with self._engine.connect() as conn:
                done = _by_tool_call(conn, tool_call_id)
            if done is None:
                raise
            return done
        return deletion

    def count(self) -> int:
        """How many files have been deleted."""
        with self._engine.connect() as conn:
            return int(conn.scalar(select(func.count()).select_from(file_deletions)) or 0)


def _by_tool_call(conn: Connection, tool_call_id: str) -> Deletion | None:
    query = select(file_deletions).where(file_deletions.c.tool_call_id == tool_call_id)
    row = conn.execute(query).mappings().first()
    return None if row is None else Deletion(**row)  # type: ignore[typeddict-item]
