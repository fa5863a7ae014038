"""The process a console statement runs in (`python -m services.sql.worker`), apart from the server's.

It reads one JSON request a line on stdin and answers one JSON line on stdout: first the
database to open, then statements. A statement that crashes SQLite ends this process only, never
the server that holds the seal and signing keys; it holds none of them (`pool` starts it with a
scrubbed environment). Not for deciding anything: the server's `pool` and `console` do that.
"""

from __future__ import annotations

import json
import resource
import signal
import sys
from typing import Any

HEAP_LIMIT_BYTES = 256 * 1024 * 1024
"""Most memory SQLite may hold in this process (a statement past it fails with 'out of memory')."""
ADDRESS_SPACE_BYTES = 4 * 1024 * 1024 * 1024
"""Most address space this process may map: a runaway result fails here, not in the machine's memory."""


def main() -> None:
    """Open the database the first line names, then answer each statement line until stdin closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server's Ctrl-C is for the server: stdin closes next
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))
    from services.errors import BusinessRuleError  # noqa: PLC0415  (after the limits: imports count too)
    from services.sql.statements import console_engine, run_statement  # noqa: PLC0415

    opening = json.loads(sys.stdin.readline() or "{}")
    engine = console_engine(opening["database_url"])
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            conn.exec_driver_sql(f"PRAGMA hard_heap_limit = {HEAP_LIMIT_BYTES}")
    _answer({"ready": True})
    for line in sys.stdin:
        request = json.loads(line)
        try:
            answer: dict[str, Any] = {"result": run_statement(engine, request)}
        except BusinessRuleError as refusal:
            answer = {"refused": str(refusal)}
        except MemoryError:
            answer = {
                "refused": "The statement needed more memory than the SQL console allows; nothing changed."
            }
        except Exception as error:  # noqa: BLE001  (any other failure is this statement's; the worker goes on)
            answer = {
                "refused": f"The SQL console could not run the statement: {type(error).__name__}: {error}"
            }
        _answer(answer)


def _answer(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, default=str) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
