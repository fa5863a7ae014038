"""The ops agent's SQL console over the business database (`console`), and the walls around it.

Every statement runs in a worker process (`pool`, `worker`) under its dialect's allowlist
(`sqlite_rules`, `postgres_rules`) and limits (`statements`); the server's own process never runs one.
"""

from services.sql.console import (
    MAX_ROWS,
    READ_TIMEOUT_MS,
    WRITE_TIMEOUT_MS,
    SqlConsole,
    SqlResult,
    is_read_only,
)

__all__ = ["MAX_ROWS", "READ_TIMEOUT_MS", "WRITE_TIMEOUT_MS", "SqlConsole", "SqlResult", "is_read_only"]
