"""The images the compose stack builds on and runs, made here from Debian's packages.

No image registry answers on these machines, but Debian's mirror does: a bookworm base from
`debootstrap`, imported into podman, and on it the three images compose takes as PYTHON_IMAGE,
POSTGRES_IMAGE and REDIS_IMAGE (`images/*.Containerfile`). Each is tagged with a hash of what it is
built from and kept, so a later run reuses it. Not for the replica image: compose builds that.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from deploy.check.podman import say

if TYPE_CHECKING:
    from deploy.check.podman import Podman

HERE = Path(__file__).resolve().parent / "images"
SUITE = "bookworm"
PREFIX = "hitl-check"
"""Every image, container, volume and network the check makes has a name starting with this."""
APT_SOURCES = (Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d"))
DEFAULT_MIRROR = "http://deb.debian.org/debian"


@dataclass(frozen=True)
class BaseImages:
    """The tags of the images the stack runs on: compose's PYTHON_IMAGE, POSTGRES_IMAGE, REDIS_IMAGE."""

    python: str
    postgres: str
    redis: str


def debian_sources(
    listing: Path = APT_SOURCES[0], folder: Path = APT_SOURCES[1]
) -> list[tuple[str, str, str]]:
    """The machine's Debian bookworm apt sources (uri, suite, components), in the order apt reads them."""
    files = [listing] if listing.is_file() else []
    if folder.is_dir():
        files += sorted(p for p in folder.iterdir() if p.suffix in {".list", ".sources"})
    found = []
    for path in files:
        text = path.read_text()
        if path.suffix == ".sources":
            for stanza in re.split(r"\n\s*\n", text):
                fields = dict(re.findall(r"^(\w[\w-]*):\s*(.+)$", stanza, re.MULTILINE))
                if "deb" not in fields.get("Types", "").split() or fields.get("Enabled", "yes") == "no":
                    continue
                found += [
                    (uri, suite, fields.get("Components", "main"))
                    for uri in fields.get("URIs", "").split()
                    for suite in fields.get("Suites", "").split()
                ]
        else:
            for line in text.splitlines():
                parts = re.sub(r"\[[^]]*\]", "", line).split()
                if parts[:1] == ["deb"] and len(parts) >= len(("deb", "uri", "suite")):
                    found.append((parts[1], parts[2], " ".join(parts[3:]) or "main"))
    return [
        (uri, suite, components)
        for uri, suite, components in found
        if suite.startswith(SUITE) and "debian" in uri
    ]


def digest(*parts: str | bytes) -> str:
    """A short hash of `parts`: the tag of an image built from them."""
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part if isinstance(part, bytes) else part.encode())
        hasher.update(b"\0")
    return hasher.hexdigest()[:16]


def base_image(podman: Podman) -> str:
    """The Debian bookworm base (`debootstrap --variant=minbase`) with the machine's Debian sources."""
    sources = debian_sources()
    mirror = next((uri for uri, suite, _ in sources if suite == SUITE), DEFAULT_MIRROR)
    listing = "".join(f"deb {uri} {suite} {components}\n" for uri, suite, components in sources)
    listing = listing or f"deb {mirror} {SUITE} main\n"
    tag = f"{PREFIX}-base:{digest('debootstrap --variant=minbase', SUITE, mirror, listing)}"
    if podman.exists("image", tag):
        say(f"base image {tag}: kept from an earlier run")
        return tag
    say(f"base image {tag}: debootstrap {SUITE} from {mirror} (about a minute)")
    with tempfile.TemporaryDirectory(prefix=f"{PREFIX}-rootfs-") as folder:
        root = Path(folder) / "rootfs"
        podman.run("debootstrap", "--variant=minbase", SUITE, root, mirror, timeout=1200)
        (root / "etc/apt/sources.list").write_text(listing)
        podman.import_folder(root, tag)
        shutil.rmtree(root, ignore_errors=True)
    return tag


def built_image(podman: Podman, base: str, name: str) -> str:
    """`images/NAME.Containerfile` built on `base`, tagged by what it is built from; its tag."""
    containerfile = HERE / f"{name}.Containerfile"
    context = sorted(
        p for p in HERE.iterdir() if p.name.startswith(f"{name}.") or p.name.startswith(f"{name}-")
    )
    tag = f"{PREFIX}-{name}:{digest(base, *(p.read_bytes() for p in context))}"
    if podman.exists("image", tag):
        say(f"{name} image {tag}: kept from an earlier run")
        return tag
    say(f"{name} image {tag}: building on {base}")
    podman.podman("build", "--build-arg", f"BASE={base}", "-t", tag, "-f", containerfile, HERE, timeout=1200)
    return tag


def base_images(podman: Podman) -> BaseImages:
    """The three images the stack runs on, made if missing."""
    base = base_image(podman)
    return BaseImages(
        python=built_image(podman, base, "python"),
        postgres=built_image(podman, base, "postgres"),
        redis=built_image(podman, base, "redis"),
    )
