"""The revision of an agent's policy: a hash a receipt carries to say which rules decided it.

Each gate is described as data (its decisions, who decides, limits, quorum, deadline) and
functions by their qualified name and the plain values they close over (a limit read from the
settings); the SHA-256 of the canonical JSON of that description is the revision. Two servers
with the same code and limits give the same revision; a changed limit or rule gives another.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hitl.policy.overrides import PolicyCatalog

PLAIN = (str, int, float, bool, type(None))


def _described(value: object) -> object:
    """`value` as JSON: data as is, a function by name and the plain values it closes over."""
    if isinstance(value, PLAIN):
        return value
    if isinstance(value, (tuple, list, frozenset, set)):
        items = [_described(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _described(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if callable(value):
        cells = getattr(value, "__closure__", None) or ()
        closed = [c.cell_contents for c in cells if isinstance(c.cell_contents, PLAIN)]
        name = f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', type(value).__name__)}"
        return {"function": name, "with": closed}
    return repr(value)


def revision(catalog: PolicyCatalog | None) -> str:
    """SHA-256 of the canonical description of every gate in `catalog` ('' for an agent without one)."""
    if catalog is None:
        return ""
    described = {
        "agent": catalog.agent,
        "tools": sorted(catalog.tools),
        "gates": {tool: [_described(g) for g in gates] for tool, gates in sorted(catalog.gates.items())},
    }
    text = json.dumps(described, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()
