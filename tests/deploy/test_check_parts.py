"""The parts of `make deploy-check` that need no container: what it reads from the machine and fills in.

Its containers run in `make deploy-check` itself (deploy/README.md, "What was run here").
"""

from __future__ import annotations

import re
from pathlib import Path

from deploy.check.images import debian_sources
from deploy.check.stack import pip_index_settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def test_the_check_fills_only_settings_a_user_finds_in_env_example():
    """deploy.check: every deploy/.env line it fills in is in deploy/.env.example."""
    source = (ROOT / "deploy" / "check" / "stack.py").read_text()
    filled = set(re.findall(r'^ {16}"(\w+)": ', source, re.MULTILINE))
    documented = set(re.findall(r"^(\w+)=", (DEPLOY / ".env.example").read_text(), re.MULTILINE))
    assert {"HITL_USERS", "HITL_SEAL_KEY", "HITL_DB_PASSWORD", "PYTHON_IMAGE"} <= filled
    assert filled <= documented, filled - documented


def test_the_build_gets_the_machines_pip_index_and_ca_bundle_but_no_local_folder(tmp_path):
    """deploy.check: from `pip config list`, index URLs and the CA bundle; file:// indexes are left out."""
    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    listed = (
        f":env:.cert='{bundle}'\n"
        ":env:.default-timeout='180'\n"
        "global.extra-index-url='file:///opt/pypi/simple https://mirror.example/simple'\n"
        "global.find-links='/opt/wheels'\n"
        "global.index-url='https://pypi.example/simple'\n"
    )
    conf, cert = pip_index_settings(listed)
    assert conf.splitlines() == [
        "[global]",
        "index-url = https://pypi.example/simple",
        "extra-index-url = https://mirror.example/simple",
        "default-timeout = 180",
    ]
    assert cert == str(bundle)
    assert pip_index_settings(":env:.cert='/no/such/bundle'\n") == ("[global]\n", "")


def test_the_base_is_made_from_the_machines_debian_sources(tmp_path):
    """deploy.check: bookworm sources of deb822 and one-line files, in apt's order; other suites left out."""
    folder = tmp_path / "sources.list.d"
    folder.mkdir()
    (folder / "debian.sources").write_text(
        "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\n\n"
        "Types: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\n"
        "Components: main\n"
    )
    (folder / "node.sources.disabled").write_text(
        "Types: deb\nURIs: https://nodes.example\nSuites: nodistro\n"
    )
    (folder / "other.list").write_text("deb [arch=amd64] https://other.example/apt stable main\n")
    listing = tmp_path / "sources.list"
    listing.write_text("# none\n")
    assert debian_sources(listing, folder) == [
        ("http://deb.debian.org/debian", "bookworm", "main"),
        ("http://deb.debian.org/debian", "bookworm-updates", "main"),
        ("http://deb.debian.org/debian-security", "bookworm-security", "main"),
    ]
