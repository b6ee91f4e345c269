"""Import roots a project's `setup.py` or `setup.cfg` declares for setuptools, read statically.

EVT's package sits under `python/`, installed by `python/setup.py` with `package_dir={"": "."}`:
a script in `benchmark/` imports `gtl` from there, and only the setup script says so. What is
read, and only when spelled as literals (the setup script is parsed, never run):

- `setup(package_dir={...})` (or `dict(...)`): `""` names the root the packages sit under, a
  package name the directory that package is, a subpackage's (`pkg.sub`, or ExecuTorch's
  `executorch/backends`) the directory that subpackage is (`package_dir_keys`);
- `setup(packages=find_packages("src"))` / `find_packages(where=...)` /
  `find_namespace_packages(...)`: the directory packages are found under;
- `setup.cfg`: `[options] package_dir` (`=src`, `pkg = lib/pkg` lines) and
  `[options.packages.find] where`.

A value computed at run time (a variable, a call, `**kwargs`) is not followed: whatever it
names stays unknown, as if nothing were declared. Each declaration is
`(package name or "", directory relative to the setup script's, whether a find root)`, as
`package_map` reads `pyproject.toml`.
"""

from __future__ import annotations

import ast

from qlint.analysis.names.package_dir_keys import package_key
from qlint.lazy_patterns import lazy

Declaration = tuple[str, str, bool]

# The keyword spellings that can declare something: a setup script without one is not parsed
# (ExecuTorch's is 120 kB, ~40 ms to parse, and declares neither: its `find_namespace_packages`
# sits in a helper whose result `setup()` is handed). `find_packages()` with no directory
# finds packages beside the script, which only a script in a subdirectory makes news of.
# Each pattern starts with its literal, which `re` looks for first (~0.1 ms over ExecuTorch's
# script, against ~0.8 ms for one alternation behind `\b`).
_PACKAGE_DIR = lazy(rb"package_dir\s*=\s*(?:\{|dict\s*\()")
_FIND = rb"packages\s*=\s*(?:setuptools\s*\.\s*)?find_(?:namespace_)?packages\s*\("
_FIND_ANY = lazy(_FIND)
_FIND_WHERE = lazy(_FIND + rb"\s*(?:['\"]|where\b)")
_FINDERS = frozenset({"find_packages", "find_namespace_packages"})


def may_declare(raw: bytes, beside_root: bool) -> bool:
    """Whether the setup script `raw` spells a keyword that may declare something.
    `beside_root`: the script sits at the project root, where `find_packages()` without a
    directory names the root itself (already an import root)."""
    if _PACKAGE_DIR.search(raw):
        return True
    return bool((_FIND_WHERE if beside_root else _FIND_ANY).search(raw))


def setup_py_declarations(raw: bytes, beside_root: bool) -> tuple[Declaration, ...]:
    """What the `setup()` calls of the setup script `raw` declare (`beside_root` as for
    `may_declare`)."""
    if not may_declare(raw, beside_root):
        return ()
    try:
        tree = ast.parse(raw)
    except (SyntaxError, ValueError):  # not Python this interpreter reads, or NUL bytes
        return ()
    found: list[Declaration] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node.func) == "setup":
            for keyword in node.keywords:
                if keyword.arg == "package_dir":
                    found += _package_dir(keyword.value)
                elif keyword.arg == "packages":
                    found += _find_root(keyword.value)
    return tuple(dict.fromkeys(found))


def _called(func: ast.expr) -> str | None:
    """`setup` for `setup(...)` and `setuptools.setup(...)` (any module's `.setup`: a setup
    script imports the one it calls)."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _package_dir(value: ast.expr) -> list[Declaration]:
    pairs: list[tuple[ast.expr | None, ast.expr]] = []
    if isinstance(value, ast.Dict):
        pairs = list(zip(value.keys, value.values, strict=True))
    elif isinstance(value, ast.Call) and _called(value.func) == "dict" and not value.args:
        pairs = [(ast.Constant(k.arg) if k.arg else None, k.value) for k in value.keywords]
    found = []
    for key, target in pairs:
        written, directory = _literal(key), _literal(target)
        name = package_key(written) if written is not None else None
        if name is not None and directory is not None:
            found.append((name, directory or ".", False))
    return found


def _find_root(value: ast.expr) -> list[Declaration]:
    if not (isinstance(value, ast.Call) and _called(value.func) in _FINDERS):
        return []
    where = value.args[0] if value.args else next((k.value for k in value.keywords if k.arg == "where"), None)
    if where is None:
        return [("", ".", True)]
    directory = _literal(where)
    return [("", directory or ".", True)] if directory is not None else []


def _literal(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def setup_cfg_declarations(raw: bytes) -> tuple[Declaration, ...]:
    """What `setup.cfg` declares: `[options] package_dir` and `[options.packages.find] where`."""
    if b"package_dir" not in raw and b"where" not in raw:
        return ()
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(raw.decode("utf-8"))
    except (UnicodeDecodeError, configparser.Error):
        return ()
    found: list[Declaration] = []
    for line in parser.get("options", "package_dir", fallback="").splitlines():
        written, sep, directory = line.partition("=")
        name, directory = package_key(written.strip()), directory.strip()
        if sep and name is not None and directory:
            found.append((name, directory, False))
    where = parser.get("options.packages.find", "where", fallback="").strip()
    if where:
        found.append(("", where, True))
    return tuple(dict.fromkeys(found))


__all__ = ["Declaration", "may_declare", "setup_cfg_declarations", "setup_py_declarations"]
