"""The worker processes the console's statements run in: started, asked, timed and replaced by the server.

Each worker (`services.sql.worker`) is a fresh interpreter, not a fork: it has none of the server's
memory (seal key, signing key, the layer's store) and an environment of `WORKER_ENVIRONMENT` only.
A worker that dies or outlives its deadline is killed and replaced; the statement it ran fails
with a clear error and the next one gets a new worker. Not for what a statement may do (`statements`).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from services.errors import BusinessRuleError

SIZE = 4
"""Most workers one server process keeps: statements beyond wait for one to be free."""
START_SECONDS = 60.0
"""How long a new worker may take to open the database (an interpreter start on a busy machine)."""
GRACE_SECONDS = 5.0
"""How long past a statement's own time limit the server waits before it kills the worker."""
MAX_ANSWER_BYTES = 8_000_000
"""Most bytes the server reads of one answer (a worker cuts its rows at a million)."""
WORKER_ENVIRONMENT = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "SQLITE_TMPDIR")
"""The server's variables a worker sees, with libpq's `PG*` ones (none of the layer's keys or tokens)."""
CODE_ROOT = Path(__file__).resolve().parents[2]


class WorkerLostError(BusinessRuleError):
    """A worker died or was killed while it ran a statement; `timed_out` says it was the deadline."""

    def __init__(self, message: str, *, timed_out: bool) -> None:
        """`message` for the person; `timed_out`: killed at the deadline rather than dead by itself."""
        super().__init__(message)
        self.timed_out = timed_out


class SqlWorkers:
    """Up to `SIZE` workers on one business database, each running one statement at a time."""

    def __init__(self, database_url: str, *, size: int = SIZE) -> None:
        """Workers on `database_url`, started when a statement first needs one."""
        self._database_url = database_url
        self._idle = _Idle()
        self._slots = threading.BoundedSemaphore(size)
        self._finalizer = weakref.finalize(self, self._idle.close)

    def ask(self, request: dict[str, Any], *, seconds: float) -> dict[str, Any]:
        """Run `request` in a worker and return its answer, or raise if the worker was lost.

        Raises:
            WorkerLostError: the worker died, or did not answer within `seconds` (then it was killed).
            BusinessRuleError: no worker could be started.
        """
        with self._slots:
            worker = self._idle.take() or _Worker(self._database_url)
            try:
                answer = worker.ask(request, seconds)
            except BaseException:
                worker.stop()
                raise
            self._idle.put(worker)
            return answer

    def pids(self) -> list[int]:
        """The process ids of the idle workers (for operators and tests)."""
        return self._idle.pids()

    def close(self) -> None:
        """Stop every worker: the idle ones now, a busy one when its statement returns."""
        self._finalizer()


class _Idle:
    """The workers waiting for a statement; once closed, a worker put back is stopped instead."""

    def __init__(self) -> None:
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._closed = False

    def take(self) -> _Worker | None:
        """An idle worker that is still alive (one that died while idle is put away)."""
        while True:
            with self._lock:
                worker = self._workers.pop() if self._workers else None
            if worker is None or worker.alive():
                return worker
            worker.stop()

    def put(self, worker: _Worker) -> None:
        with self._lock:
            if not self._closed:
                self._workers.append(worker)
                return
        worker.stop()

    def pids(self) -> list[int]:
        with self._lock:
            return [worker.pid for worker in self._workers]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            workers, self._workers = self._workers, []
        for worker in workers:
            worker.stop()


class _Worker:
    """One worker process and the pipe to it."""

    def __init__(self, database_url: str) -> None:
        environment = {k: v for k, v in os.environ.items() if k in WORKER_ENVIRONMENT or k.startswith("PG")}
        environment["PYTHONPATH"] = str(CODE_ROOT)
        self._process = subprocess.Popen(
            [sys.executable, "-s", "-m", "services.sql.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=environment,
            bufsize=0,
        )
        self.pid = self._process.pid
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._process.stdout, selectors.EVENT_READ)  # type: ignore[arg-type]
        try:
            ready = self.ask({"database_url": database_url}, START_SECONDS)
        except WorkerLostError as lost:
            self.stop()
            msg = f"The SQL console could not start its worker process: {lost}"
            raise BusinessRuleError(msg) from lost
        if ready != {"ready": True}:
            self.stop()
            msg = f"The SQL console's worker process did not start: {ready}"
            raise BusinessRuleError(msg)

    def ask(self, request: dict[str, Any], seconds: float) -> dict[str, Any]:
        """Send `request`, wait at most `seconds` for the one-line answer."""
        assert self._process.stdin is not None  # noqa: S101  (Popen made the pipe)
        try:
            self._process.stdin.write(json.dumps(request).encode() + b"\n")
        except BrokenPipeError:
            raise self._lost() from None
        answer = bytearray()
        deadline = time.monotonic() + seconds
        while not answer.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._selector.select(remaining):
                if self._process.poll() is None:
                    self._process.kill()
                    self._process.wait()
                    msg = f"The SQL worker did not answer within {seconds:.0f} s and was stopped."
                    raise WorkerLostError(msg, timed_out=True)
                raise self._lost()
            chunk = os.read(self._process.stdout.fileno(), 65_536)  # type: ignore[union-attr]
            if not chunk:
                raise self._lost()
            answer += chunk
            if len(answer) > MAX_ANSWER_BYTES:
                self._process.kill()
                msg = f"The SQL worker's answer passed {MAX_ANSWER_BYTES} bytes and was refused."
                raise WorkerLostError(msg, timed_out=False)
        return dict(json.loads(answer))

    def alive(self) -> bool:
        """Whether the process still runs."""
        return self._process.poll() is None

    def _lost(self) -> WorkerLostError:
        try:
            code = self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            code = self._process.wait()
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        return WorkerLostError(f"The SQL worker process ended ({how}).", timed_out=False)

    def stop(self) -> None:
        """End the process: stdin closes (it exits by itself), or a kill after a moment."""
        self._selector.close()
        for pipe in (self._process.stdin, self._process.stdout):
            if pipe is not None:
                pipe.close()
        try:
            self._process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
