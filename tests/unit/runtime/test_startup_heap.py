"""The server's startup objects leave the garbage collector's full passes; new garbage is still collected.

Run in a fresh interpreter that loads the graphs as the server does, so this process's heap is untouched.
"""

from __future__ import annotations

import json

from tests.fresh_interpreter import last_line

PROBE = """
import gc, json
import agents.support, agents.travel, agents.ops
from server.runtime import startup_heap
tracked = len(gc.get_objects())
frozen = startup_heap.freeze()
left = len(gc.get_objects())
class Node:
    pass
gc.disable()  # all 1000 cycles wait for the one collection below
for _ in range(1000):
    a, b = Node(), Node()
    a.other, b.other = b, a
    del a, b
collected = gc.collect()
print(json.dumps({"tracked": tracked, "frozen": frozen, "left": left, "collected": collected}))
"""


def test_freeze_keeps_the_loaded_graphs_out_of_full_collections() -> None:
    found = json.loads(last_line(PROBE))
    assert found["frozen"] >= 0.9 * found["tracked"]  # what startup made (minus its garbage)
    assert found["left"] < 1000  # a full collection now walks only what came after
    assert found["collected"] >= 2000  # cycles made after the freeze are still freed
