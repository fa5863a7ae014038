"""`python -m server.runtime.port_check PORT [VARIABLE]`: stop `make dev` with a line when PORT is taken.

`langgraph dev` would otherwise fail (or, in some versions, serve elsewhere) after printing the
address `make dev` announced; so would a server a project runs beside it (its port in VARIABLE,
`PORT` by default). Exit 0 when 127.0.0.1:PORT can be bound, 1 with the reason if not.
"""

from __future__ import annotations

import socket
import sys

HOST = "127.0.0.1"


def taken(port: int, host: str = HOST) -> str | None:
    """Why `host:port` cannot be served on, or None when it is free."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: only a live listener counts
        try:
            probe.bind((host, port))
        except OSError as error:
            return error.strerror or str(error)
    return None


def main(argv: list[str]) -> int:
    """Check the port named in `argv` (and the make variable that sets it); print why `make dev` stops."""
    variable = argv[1] if len(argv) == 2 and argv[1].isidentifier() else "PORT"  # noqa: PLR2004
    if len(argv) not in {1, 2} or not argv[0].isdigit() or not 0 < int(argv[0]) < 65536:  # noqa: PLR2004
        sys.stderr.write(f"{variable} must be a number from 1 to 65535 (got {' '.join(argv) or 'nothing'})\n")
        return 1
    port = int(argv[0])
    if (reason := taken(port)) is not None:
        sys.stderr.write(
            f"Port {port} on {HOST} is taken ({reason}): another server is running there.\n"
            f"Stop it, or serve on another port: make dev {variable}={port + 1}\n"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
