"""The public API: what `hitl.__all__` lists resolves, and the docs' examples import only that.

A team copies the docs' examples into its agents; an import from an inner module there
(`hitl.policy.groups`) would tie the team's code to a module a later release may move.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import hitl

ROOT = Path(__file__).resolve().parents[3]
PYTHON_BLOCK = re.compile(r"^```python\n(?P<code>.*?)^```", re.MULTILINE | re.DOTALL)


def test_every_public_name_resolves_and_is_listed_once():
    """`hitl.__all__`: each name is an attribute of `hitl`; the lazily loaded ones are exactly `PUBLIC`."""
    assert set(hitl.__all__) == {*hitl.PUBLIC, "__version__"}
    for name in hitl.__all__:
        assert getattr(hitl, name) is not None, name
    assert hitl.Tiers("amount", "finance", ((500, "finance-leads"),))({"amount": 800}) == "finance-leads"


def test_the_docs_examples_import_the_layer_from_hitl_only():
    """every `from hitl... import` in the docs' Python examples is `from hitl import <a public name>`."""
    imports = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        for block in PYTHON_BLOCK.finditer(page.read_text()):
            tree = ast.parse(block["code"])
            imports += [
                (page.name, node.module, alias.name)
                for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "hitl"
                for alias in node.names
            ]
    assert imports, "the docs show no import of the layer"
    assert [(page, module, name) for page, module, name in imports if module != "hitl"] == []
    assert [(page, name) for page, _, name in imports if name not in hitl.__all__] == []
