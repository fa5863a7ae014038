"""Opening one new SQLite business database from several processes at once: created once, no error.

The dev server and a test (or two server workers) may open a fresh file in the same instant;
both see the tables missing and both CREATE them. Each process here opens the file the moment
a shared start file appears.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OPENER = """
import sys, time
from pathlib import Path
from services.registry import Services
go = Path(sys.argv[2])
print("ready", flush=True)
while not go.exists():
    time.sleep(0.001)
Services.open(sys.argv[1])
print("opened")
"""
"""Imports first and says so, then opens the database the moment the start file appears."""


def test_three_processes_open_a_new_database_at_once(database_url, tmp_path):
    """race on CREATE TABLE: 3 processes open one new database at once (SQLite: 3 new files); none fails."""
    urls = [database_url]
    if database_url.startswith("sqlite"):
        urls += [f"sqlite:///{tmp_path / f'again-{n}.db'}" for n in range(2)]
    for round_, url in enumerate(urls):
        go = tmp_path / f"go-{round_}"
        racers = [
            subprocess.Popen(
                [sys.executable, "-c", OPENER, url, str(go)],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(3)
        ]
        for racer in racers:  # every interpreter has imported and waits on the start file
            assert racer.stdout is not None
            assert racer.stdout.readline().strip() == "ready", racer.communicate(timeout=60)[1][-2000:]
        go.touch()
        for racer in racers:
            out, err = racer.communicate(timeout=60)
            assert (racer.returncode, out.strip()) == (0, "opened"), err[-2000:]
