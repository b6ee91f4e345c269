"""Rules of installed plugins: any distribution with an entry point in the `qlint.rules` group
that names a `Rule` subclass (or a list or tuple of them), found without `importlib.metadata`
when no distribution on sys.path declares the group (`may_declare`).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from qlint.rule_origins import Origin, RegistryError
from qlint.rules.base import Rule

if TYPE_CHECKING:
    from importlib import metadata

ENTRY_POINT_GROUP = "qlint.rules"


def plugin_entry_points(group: str) -> list[metadata.EntryPoint]:
    if not may_declare(group):
        return []
    from importlib import metadata

    # Sorted: the order rules are listed and checked in must not depend on sys.path order.
    found = metadata.entry_points(group=group)
    return sorted(found, key=lambda ep: (origin_of(ep).package.lower(), ep.name))


def may_declare(group: str) -> bool:
    """False only when no distribution in a sys.path directory declares the group, read from
    their `entry_points.txt` as bytes. Most runs have no plugin, and `importlib.metadata`
    costs a tenth of a short run's start-up (it imports `email` and parses every package's
    metadata). Anything on sys.path that is not a plain directory (a zip) gets the full scan.
    Names by `os.listdir` and files by `os.open`, not `os.scandir` and text-mode `open`: the
    interpreter's site-packages holds hundreds of entries and most distributions have no
    `entry_points.txt` (here 6.7 M -> 3.7 M instructions, a twentieth of a cached
    `qlint check FILE` above Python's own start-up)."""
    header = f"[{group}]".encode()
    for entry in sys.path:
        directory = entry or "."
        try:
            names = os.listdir(directory)
        except NotADirectoryError:
            return True
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")) and _declares(
                os.path.join(directory, name, "entry_points.txt"), header
            ):
                return True
    return False


def _declares(path: str, header: bytes) -> bool:
    """Whether the file at `path` holds `header` and is UTF-8 text, as a text-mode read finds
    it (an ASCII header is the same bytes in UTF-8; a file that does not decode is passed
    over); False when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    chunks = []
    try:
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    except OSError:
        return False
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if header not in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def origin_of(entry_point: metadata.EntryPoint) -> Origin:
    dist = getattr(entry_point, "dist", None)
    package = dist.metadata["Name"] if dist is not None else "an unknown package"
    version = dist.version if dist is not None else "?"
    return Origin(package, version, f"{entry_point.name} = {entry_point.value}")


def plugin_rules(entry_point: metadata.EntryPoint, origin: Origin) -> list[type[Rule]]:
    where = f"plugin {origin.package} ({ENTRY_POINT_GROUP} entry point `{origin.entry_point}`)"
    try:
        loaded = entry_point.load()
    except Exception as exc:
        raise RegistryError(f"{where} cannot be loaded: {type(exc).__name__}: {exc}") from exc
    classes = list(loaded) if isinstance(loaded, (list, tuple)) else [loaded]
    for cls in classes:
        if not (isinstance(cls, type) and issubclass(cls, Rule)):
            raise RegistryError(f"{where} names {cls!r}, which is not a subclass of qlint.rules.base.Rule")
    return classes
