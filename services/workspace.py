"""The ops agent's files: one directory, reachable only through paths inside it.

Deep Agents' own file tools (`read_file`, `write_file`, ...) work on it through
`WorkspaceBackend`; deleting is ours (`FileDeletions`), reviewed, and once per tool call.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypedDict

from deepagents.backends import FilesystemBackend
from deepagents.backends.protocol import DeleteResult
from deepagents.backends.utils import validate_path
from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError

from services.database import file_deletions
from services.errors import BusinessRuleError

if TYPE_CHECKING:
    from pathlib import Path

    from sqlalchemy import Connection, Engine

DELETE_REFUSED = "Files are deleted with the delete_file tool, which a person reviews."


class WorkspaceBackend(FilesystemBackend):
    """Deep Agents' filesystem backend confined to the workspace, without its own `delete`.

    `virtual_mode=True`: every path is read as `/…` under the root; `..`, `~` and symlinks
    leading out are refused. The built-in `delete` tool is turned away, so the only way to
    delete is `delete_file`, which the policy gates.
    """

    def __init__(self, root: Path) -> None:
        """Serve the directory `root` (created on first write)."""
        super().__init__(root_dir=root, virtual_mode=True)

    def delete(self, file_path: str) -> DeleteResult:  # noqa: ARG002  (refused whatever the path)
        """Refuse: deleting goes through `delete_file`."""
        return DeleteResult(error=DELETE_REFUSED)

    async def adelete(self, file_path: str) -> DeleteResult:  # noqa: ARG002
        """Refuse: deleting goes through `delete_file`."""
        return DeleteResult(error=DELETE_REFUSED)


class Workspace:
    """The directory the ops agent's files live in."""

    def __init__(self, root: Path) -> None:
        """Use the directory `root`; it need not exist yet."""
        self.root = root.resolve()

    def backend(self) -> WorkspaceBackend:
        """The Deep Agents backend for the built-in file tools."""
        return WorkspaceBackend(self.root)

    def resolve(self, path: str) -> Path:
        """The real file behind the workspace path `path` ('/tmp/old.log' or 'tmp/old.log').

        Raises:
            BusinessRuleError: the path leaves the workspace ('..', '~', a symlink out).
        """
        try:
            virtual = validate_path(path)
        except ValueError as error:
            msg = f"{path!r} is outside the workspace: {error}"
            raise BusinessRuleError(msg) from None
        real = (self.root / virtual.lstrip("/")).resolve()
        if not real.is_relative_to(self.root):
            msg = f"{path!r} is outside the workspace (it leads to {real})."
            raise BusinessRuleError(msg)
        return real


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
