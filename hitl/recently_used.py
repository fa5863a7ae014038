"""`RecentlyUsed`: a bounded map that forgets its least recently used entry first, shared between threads.

For what the layer works out once and looks up often (answer contracts, review texts, verified
receipts): a lookup marks the entry used; storing beyond the capacity forgets the oldest.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class RecentlyUsed(Generic[K, V]):
    """At most `capacity` entries, the least recently used forgotten first; every call holds its own lock."""

    def __init__(self, capacity: int) -> None:
        """An empty map keeping up to `capacity` entries."""
        self.capacity = capacity
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value under `key`, marked as just used; None when absent."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: K, value: V) -> None:
        """Keep `value` under `key` as the most recently used, forgetting the oldest beyond the capacity."""
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        """How many entries are kept."""
        return len(self._entries)
