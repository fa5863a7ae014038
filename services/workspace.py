"""The ops agent's files: one directory, reachable only through paths inside it.

Deep Agents' own file tools (`read_file`, `write_file`, ...) work on it through
`WorkspaceBackend`; deleting is ours (`services.file_deletions`), reviewed, and once per tool call.
A bad path (a NUL byte, a way out of the root) comes back as the tool's error, never as an
exception that ends the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deepagents.backends import FilesystemBackend
from deepagents.backends.protocol import (
    DeleteResult,
    EditResult,
    FileDownloadResponse,
    FileUploadResponse,
    GlobResult,
    GrepResult,
    LsResult,
    ReadResult,
    WriteResult,
)
from deepagents.backends.utils import validate_path

from services.errors import BusinessRuleError

if TYPE_CHECKING:
    from pathlib import Path

DELETE_REFUSED = "Files are deleted with the delete_file tool, which a person reviews."
NUL_IN_PATH = "path must not contain a NUL byte"
OUTSIDE = "path leads outside the workspace"


def has_nul(*paths: str | None) -> bool:
    """Whether any of `paths` holds a NUL byte, which no file system path may."""
    return any(path is not None and "\x00" in path for path in paths)


class WorkspaceBackend(FilesystemBackend):
    """Deep Agents' filesystem backend confined to the workspace, without its own `delete`.

    `virtual_mode=True`: every path is read as `/…` under the root; `..`, `~` and symlinks
    leading out are refused. The built-in `delete` tool is turned away, so the only way to
    delete is `delete_file`, which the policy gates.
    """

    def __init__(self, root: Path) -> None:
        """Serve the directory `root` (created on first write)."""
        super().__init__(root_dir=root, virtual_mode=True)

    def _resolve_path(self, key: str) -> Path:
        """The parent's resolution, its refusals raised as `OSError`, which every operation reports.

        The parent raises `ValueError` for a path leading out of the root (or holding a NUL
        byte), and some operations let that escape and end the run.
        """
        if has_nul(key):
            raise PermissionError(NUL_IN_PATH)
        try:
            return super()._resolve_path(key)
        except ValueError:
            raise PermissionError(OUTSIDE) from None

    def ls(self, path: str) -> LsResult:
        """List a directory; a NUL byte in `path` is refused."""
        return LsResult(error=NUL_IN_PATH) if has_nul(path) else super().ls(path)

    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        """Read a file; a NUL byte in `file_path` is refused."""
        return ReadResult(error=NUL_IN_PATH) if has_nul(file_path) else super().read(file_path, offset, limit)

    def write(self, file_path: str, content: str) -> WriteResult:
        """Write a new file; a NUL byte in `file_path` is refused."""
        return WriteResult(error=NUL_IN_PATH) if has_nul(file_path) else super().write(file_path, content)

    def edit(
        self,
        file_path: str,
        old_string: str,
        new_string: str,
        replace_all: bool = False,  # noqa: FBT001, FBT002  (the parent's signature)
    ) -> EditResult:
        """Edit a file; a NUL byte in `file_path` is refused."""
        if has_nul(file_path):
            return EditResult(error=NUL_IN_PATH)
        return super().edit(file_path, old_string, new_string, replace_all)

    def grep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        *,
        max_count: int | None = None,
        context_lines: int = 0,
    ) -> GrepResult:
        """Search files; a NUL byte in `path` or `glob` is refused."""
        if has_nul(path, glob):
            return GrepResult(error=NUL_IN_PATH, matches=[])
        return super().grep(pattern, path, glob, max_count=max_count, context_lines=context_lines)

    async def agrep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        *,
        max_count: int | None = None,
        context_lines: int = 0,
    ) -> GrepResult:
        """Search files; a NUL byte in `path` or `glob` is refused."""
        if has_nul(path, glob):
            return GrepResult(error=NUL_IN_PATH, matches=[])
        return await super().agrep(pattern, path, glob, max_count=max_count, context_lines=context_lines)

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        """Find files by pattern; a NUL byte in `pattern` or `path` is refused."""
        return GlobResult(error=NUL_IN_PATH) if has_nul(pattern, path) else super().glob(pattern, path)

    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        """Write files; each path with a NUL byte is refused as an invalid path."""
        fine = [(path, content) for path, content in files if not has_nul(path)]
        done = iter(super().upload_files(fine))
        return [
            FileUploadResponse(path="", error="invalid_path") if has_nul(path) else next(done)
            for path, _content in files
        ]

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        """Read files; each path with a NUL byte is refused as an invalid path."""
        done = iter(super().download_files([path for path in paths if not has_nul(path)]))
        return [
            FileDownloadResponse(path="", content=None, error="invalid_path") if has_nul(path) else next(done)
            for path in paths
        ]

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
            BusinessRuleError: the path leaves the workspace ('..', '~', a symlink out), holds
                a NUL byte, or cannot be resolved.
        """
        if has_nul(path):
            raise BusinessRuleError(NUL_IN_PATH)
        try:
            virtual = validate_path(path)
        except ValueError as error:
            msg = f"{path!r} is outside the workspace: {error}"
            raise BusinessRuleError(msg) from None
        try:
            real = (self.root / virtual.lstrip("/")).resolve()
        except (OSError, RuntimeError) as error:  # a symlink loop, a name too long, ...
            msg = f"{path!r} is not a usable path: {error}"
            raise BusinessRuleError(msg) from None
        if not real.is_relative_to(self.root):
            msg = f"{path!r} is outside the workspace (it leads to {real})."
            raise BusinessRuleError(msg)
        return real
