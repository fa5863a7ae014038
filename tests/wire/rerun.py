"""Collect tests of another module once more, here: the same test, the fixtures of this folder.

Pytest collects every `test_*` function and fixture found in a module's namespace, wherever it
was defined; a function keeps its own module's globals (helpers, constants, `pytestmark` aside).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import ModuleType


def collect_again(*modules: ModuleType) -> dict[str, object]:
    """Every public name of `modules` (tests, their fixtures, marks), for `globals().update(...)`.

    Raises:
        ValueError: when two modules have a test of the same name (one would hide the other).
    """
    found: dict[str, object] = {}
    for module in modules:
        for name, value in vars(module).items():
            if name.startswith("_") or name == "pytestmark":
                continue
            if name.startswith("test_") and found.get(name, value) is not value:
                msg = f"{name} is defined in more than one of {[m.__name__ for m in modules]}"
                raise ValueError(msg)
            found[name] = value
    return found
