"""The approval layer stays readable: small modules, and no folder with more than a dozen parts.

The rules, for `hitl/` and `server/` (the scaffold's templates are files to copy, not modules):
- a module has at most 400 lines (as `wc -l` counts them);
- a module of more than 300 lines says why it is one concept: its docstring contains the words
  "one concept" (any case, any spacing, e.g. "... is one concept: the gate's state machine");
- a folder holds at most 12 entries: files and packages, `__init__.py` included, `__pycache__` not.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
LAYER = ("hitl", "server")
MOST_LINES = 400
LINES_WITHOUT_A_REASON = 300
MOST_ENTRIES = 12
ONE_CONCEPT = re.compile(r"\bone\s+concept\b", re.IGNORECASE)
MODULES = sorted(
    path
    for folder in LAYER
    for path in (ROOT / folder).rglob("*.py")
    if "templates" not in path.relative_to(ROOT).parts
)
FOLDERS = sorted(
    path
    for folder in LAYER
    for path in [ROOT / folder, *(ROOT / folder).rglob("*")]
    if path.is_dir() and path.name != "__pycache__" and "__pycache__" not in path.parts
)


def relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


def lines(path: Path) -> int:
    """The module's line count, as `wc -l` gives it for a file ending in a newline."""
    return len(path.read_text().splitlines())


def says_one_concept(path: Path) -> bool:
    """Whether the module's docstring says why it is one concept (see the module docstring)."""
    docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
    return ONE_CONCEPT.search(docstring) is not None


def test_the_rules_tell_a_reason_from_none(tmp_path):
    """a docstring saying "one concept" passes; one without it, or with the words only in code, does not."""
    reasoned = tmp_path / "reasoned.py"
    reasoned.write_text('"""The gate.\n\nIt is one\nconcept: a state machine."""\n')
    silent = tmp_path / "silent.py"
    silent.write_text('"""The gate."""\n\nNOTE = "one concept"\n')
    assert says_one_concept(reasoned)
    assert not says_one_concept(silent)


@pytest.mark.parametrize("path", MODULES, ids=relative)
def test_a_module_is_small_or_says_why_it_is_one_concept(path):
    """at most 400 lines; over 300 only with "one concept" in the module's docstring."""
    count = lines(path)
    assert count <= MOST_LINES, f"{relative(path)} has {count} lines (at most {MOST_LINES})"
    assert count <= LINES_WITHOUT_A_REASON or says_one_concept(path), (
        f"{relative(path)} has {count} lines: split it, or say in its docstring why it is one concept"
    )


@pytest.mark.parametrize("folder", FOLDERS, ids=relative)
def test_a_folder_holds_at_most_a_dozen_parts(folder):
    """files and packages side by side, `__init__.py` included and `__pycache__` not: 12 at most."""
    entries = sorted(p.name for p in folder.iterdir() if p.name != "__pycache__")
    assert len(entries) <= MOST_ENTRIES, f"{relative(folder)} holds {len(entries)}: {', '.join(entries)}"
