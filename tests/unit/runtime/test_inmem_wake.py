"""`langgraph dev`'s scheduler wakes when a run is put (engine_compat), and the engine still looks as patched.

The embedded runtime polls for runs every 0.5 s and takes only runs created before its poll
began; the workaround wakes the poll on `Runs.put` and lets the next poll look at once. If a
langgraph-runtime-inmem upgrade changes what it patches, the first test fails here, by name.
"""

from __future__ import annotations

import os

from tests.fresh_interpreter import last_line

ENGINE = {
    **os.environ,
    "DATABASE_URI": ":memory:",
    "REDIS_URI": "fake",
    "MIGRATIONS_PATH": "__inmem",
    "LANGGRAPH_RUNTIME_EDITION": "inmem",
}
"""What `langgraph dev` sets before it loads the embedded runtime."""


def test_the_embedded_scheduler_still_polls_as_the_workaround_expects():
    """Runs.next takes `now` before one `asyncio.sleep(0.5)`, Runs.put is an async staticmethod."""
    said = last_line(
        "import inspect\n"
        "from langgraph_runtime_inmem import ops\n"
        "source = inspect.getsource(ops.Runs.next)\n"
        "order = source.index('now = datetime.now(UTC)') < source.index('await asyncio.sleep(0.5)')\n"
        "assert order, 'the poll takes now before its pause'\n"
        "assert inspect.getsource(ops).count('asyncio.sleep(0.5)') == 1, 'one poll pause'\n"
        "assert 'created_at' in source and '< now' in source, 'runs created before the poll'\n"
        "assert isinstance(inspect.getattr_static(ops.Runs, 'put'), staticmethod), 'put is static'\n"
        "assert inspect.iscoroutinefunction(ops.Runs.put), 'put is async'\n"
        "assert ops.asyncio.__name__ == 'asyncio'\n"
        "print('as expected')\n",
        ENGINE,
    )
    assert said == "as expected"


def test_a_put_wakes_the_poll_and_lets_the_next_look_at_once():
    """patched: a sleeping poll returns when a run is put; the poll after it does not pause."""
    said = last_line(
        "import asyncio\n"
        "import langgraph_runtime  # the server picks its runtime first\n"
        "from langgraph_runtime_inmem import ops\n"
        "from server.runtime import engine_compat\n"
        "assert 'inmem_wake_on_put' in engine_compat.apply()\n"
        "assert engine_compat.apply().count('inmem_wake_on_put') == 1\n"
        "waker = ops.asyncio.sleep.__self__\n"
        "async def main():\n"
        "    await ops.asyncio.sleep(0.5)  # the first poll looks at once\n"
        "    waiting = asyncio.ensure_future(ops.asyncio.sleep(0.5))\n"
        "    for _ in range(3):\n"
        "        await asyncio.sleep(0)\n"
        "    assert not waiting.done(), 'an idle poll pauses'\n"
        "    waker.wake()  # what Runs.put does once the run is stored\n"
        "    for _ in range(3):\n"
        "        await asyncio.sleep(0)\n"
        "    assert waiting.done(), 'a put wakes it'\n"
        "    again = asyncio.ensure_future(ops.asyncio.sleep(0.5))\n"
        "    await asyncio.sleep(0)\n"
        "    assert again.done(), 'the next poll looks at once'\n"
        "    print('woken')\n"
        "asyncio.run(main())\n",
        ENGINE,
    )
    assert said == "woken"
