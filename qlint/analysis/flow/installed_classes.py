"""Model classes of installed packages, read from their source (never imported); and the
scope of an installed module, whose functions `installed_passes` reads the same way.

Tests build models from helper classes of other packages
(`torch.testing._internal.common_quantization.TestHelperModules.Conv2dThenConv1d`). Whether
such a model's mode can change its graph is written in the source installed beside the
project: the module file is found in the interpreter's site directories the way the import
system would find it, parsed, and its class read like one of the project's. The linter never
imports these packages (importing torch costs seconds, and the linter must not need it).

Asked when a message or the mode-free test needs a model's content, and when a construction
of a class-like name no project module defines decides its starting mode (`self.eval()` at
the end of `__init__`, as in ExecuTorch's installed `backends/qualcomm/tests/models.py`, whose
directory tree has no `__init__.py` at the top for the project lookup to follow).
The file read is a dependency of the check: upgrading the package refreshes cached results.
"""

from __future__ import annotations

import ast
import os
import sys
from functools import lru_cache

from qlint.analysis.graphs import file_keys
from qlint.analysis.names.import_paths import INSTALL_DIRS, site_dirs
from qlint.analysis.names.piecewise_parse import parse_by_definitions
from qlint.analysis.names.scope import ModuleScope
from qlint.analysis.names.summary import ModuleSummary
from qlint.short_digests import content_sha256_hex
from qlint.source import DecodeError, decode_source

# torch.nn's own classes are judged from an explicit table (`model_torch_nn`), not their source.
_TABLE_JUDGED = ("torch.nn.",)
_MAX_BYTES = 2_000_000
_MAX_REEXPORTS = 3

_SCOPES: dict[str, tuple[tuple | None, ModuleScope | None]] = {}


def installed_class(name: str | None, project, requester: str) -> tuple[ast.ClassDef, ModuleScope] | None:
    """The class `name` (`pkg.mod.Cls` or `pkg.mod.Outer.Inner`) as written in an installed
    package, with the scope of its module; None when it is not found there."""
    return _find(name, project, requester, 0)


def _find(name: str | None, project, requester: str, depth: int):
    if not name or "." not in name or name.startswith(_TABLE_JUDGED) or depth > _MAX_REEXPORTS:
        return None
    parts = name.split(".")
    if parts[0] in sys.stdlib_module_names or not parts[-1][:1].isupper():
        return None
    for cut in range(len(parts) - 1, 0, -1):
        path = module_file(".".join(parts[:cut]))
        if path is None:
            continue
        scope = _scope(path, ".".join(parts[:cut]), project, requester)
        if scope is None:
            return None
        head, rest = parts[cut], parts[cut + 1 :]
        if head in scope.classes:
            node = _nested(scope.classes[head].node, rest)
            return (node, scope) if node is not None else None
        if head in scope.imports:  # re-exported by the package (`from .models import Net`)
            return _find(".".join([scope.imports[head], *rest]), project, requester, depth + 1)
        return None
    return None


def installed_module(module: str, project, requester: str) -> ModuleScope | None:
    """The scope of the installed `module` (its summary; a function or class parsed when
    asked), None when no site directory holds it. The file read is a dependency of the
    check, as a class's is."""
    if module.partition(".")[0] in sys.stdlib_module_names:
        return None
    path = module_file(module)
    return _scope(path, module, project, requester) if path is not None else None


def _nested(node: ast.ClassDef, rest: list[str]) -> ast.ClassDef | None:
    for name in rest:
        node = next((s for s in node.body if isinstance(s, ast.ClassDef) and s.name == name), None)
        if node is None:
            return None
    return node


def installed_package(path: str) -> str | None:
    """The top-level package an installed file belongs to (the directory under site-packages)."""
    parts = os.path.abspath(path).split(os.sep)
    for i, part in enumerate(parts[:-2]):
        if part in INSTALL_DIRS:
            return parts[i + 1]
    return None


@lru_cache(maxsize=4096)
def module_file(module: str) -> str | None:
    """The source file of an installed module, from the site directories only (never the
    current directory or the project's own paths)."""
    parts = module.split(".")
    for directory in site_dirs():
        base = os.path.join(directory, *parts)
        for candidate in (base + ".py", os.path.join(base, "__init__.py")):
            if os.path.isfile(candidate):
                return candidate
    return None


def _scope(path: str, module: str, project, requester: str) -> ModuleScope | None:
    key = file_keys.content_key(project, path)
    known = _SCOPES.get(path)
    if known is not None and known[0] == key:
        project.record_read(requester, path, file_keys.digest(project, path, key))
        return known[1]
    scope = None
    data = file_keys.content_bytes(project, path, key, _MAX_BYTES)
    digest = "" if data is None else content_sha256_hex(data)
    file_keys.remember_digest(path, key, digest)
    project.record_read(requester, path, digest)
    if data is not None:
        scope = _summarised(path, module, data, digest, type(project).store)
    _SCOPES[path] = (key, scope)
    return scope


def _summarised(path: str, module: str, data: bytes, digest: str, store) -> ModuleScope | None:
    """The module's scope from its summary, which the summary store keeps between runs (a
    run of `qlint check` on one of ao's tests parsed torch's 3,300-line
    `common_quantization.py` again each time, for the one class the test builds)."""
    try:
        text = decode_source(data)
    except DecodeError:
        return None
    summary = store.get(path, digest, module) if store is not None else None
    if summary is None:
        made = _made(text, path, module, digest)
        if made is None:
            return None
        summary = ModuleSummary.from_data(made)
        if store is not None:
            store.put(path, summary)
    # Kept for the run as a summarised scope over the text, which parses the classes asked
    # for: the whole tree of torch's common_quantization.py (20,000 nodes, ~6 MiB) was kept
    # by every worker over ao, for the few classes its tests build.
    return summary.scope(path, lambda: text)


def _made(text: str, path: str, module: str, digest: str) -> dict | None:
    """The module's summary as plain data (None: it does not parse). Parsed here, not in a
    forked child: the child copied the pages of the heap it touched (a fork from a process that
    has checked for a while), and while it lived the run's peak counted both (ao, checked in
    one process: peak PSS 53-56 -> 50 MiB, peak RSS 101-104 -> 59 MiB; ExecuTorch, two
    processes: peak RSS 203-230 -> 181-194 MiB, PSS unchanged). The tree goes with the call;
    the summary keeps what the classes asked for need. Parsed in pieces (the same tree): it is
    parsed in the middle of a check, beside that file's tree and analyses, and the parser's own
    tree of torch's 113 KB common_quantization.py (5.4 MiB, beside the 5.3 MiB tree it builds)
    was the peak of a run over ao, while its 177 KB test_quantize_pt2e.py was checked."""
    try:
        tree = parse_by_definitions(text, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return ModuleSummary.of(tree, ModuleScope.build(tree, module, path), module, digest).to_data()


__all__ = ["installed_class", "installed_module", "installed_package", "module_file"]
