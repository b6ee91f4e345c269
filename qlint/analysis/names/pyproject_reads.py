"""What a `pyproject.toml` declares for setuptools: `[tool.setuptools.package-dir]` and
`[tool.setuptools.packages.find] where` (ExecuTorch maps `executorch` onto `src/executorch`).
Imported only when a file spells one of the keys: the TOML parser's import is ~11 ms of a
one-file check."""

from __future__ import annotations

import sys

from qlint.analysis.names.package_dir_keys import package_key


def pyproject_declarations(raw: bytes) -> tuple[tuple[str, str, bool], ...]:
    """(package name or "", directory as written, whether a `where` root) of the TOML text `raw`."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10 needs the backport
        import tomli as tomllib
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except ValueError:  # not UTF-8 or not TOML (both errors are ValueErrors)
        return ()
    tool = data.get("tool", {})
    setuptools = tool.get("setuptools", {}) if isinstance(tool, dict) else {}
    setuptools = setuptools if isinstance(setuptools, dict) else {}
    found: list[tuple[str, str, bool]] = []
    package_dir = setuptools.get("package-dir", {})
    for written, target in package_dir.items() if isinstance(package_dir, dict) else ():
        name = package_key(written)
        if isinstance(target, str) and name is not None:
            found.append((name, target, False))
    find = setuptools.get("packages", {})
    find = find.get("find", {}) if isinstance(find, dict) else {}
    where = find.get("where", []) if isinstance(find, dict) else []
    for target in where if isinstance(where, list) else []:
        if isinstance(target, str):
            found.append(("", target, True))
    return tuple(found)


__all__ = ["pyproject_declarations"]
