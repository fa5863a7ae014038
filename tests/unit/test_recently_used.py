"""`RecentlyUsed`: what it keeps, what it forgets first, and that threads may share it."""

from __future__ import annotations

import threading

from hitl.recently_used import RecentlyUsed


def test_it_forgets_the_least_recently_used_entry_beyond_its_capacity():
    kept: RecentlyUsed[str, int] = RecentlyUsed(2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.get("a") == 1  # "a" is now the most recently used
    kept.put("c", 3)
    assert (kept.get("a"), kept.get("b"), kept.get("c"), len(kept)) == (1, None, 3, 2)
    kept.put("a", 4)  # storing again replaces and marks used
    kept.put("d", 5)
    assert (kept.get("a"), kept.get("c"), kept.get("d")) == (4, None, 5)


def test_threads_storing_at_once_leave_it_within_its_capacity():
    kept: RecentlyUsed[int, int] = RecentlyUsed(50)

    def store(offset: int) -> None:
        for i in range(2000):
            kept.put(offset + i, i)
            kept.get(offset + i // 2)

    threads = [threading.Thread(target=store, args=(n * 10_000,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(kept) == 50
