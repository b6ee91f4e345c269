"""A helper module linked to an inserting pass through the passes that import it (QL101, QL102).

`packet_consumers.linked_modules` takes a module keyed on a packet for a consumer of the nodes
another module inserts with it when one of the two imports the other: a pass written for those
nodes. Matching helpers are often factored out of such passes into a module of their own that
imports neither (pytorch-shir's `isel_utils`: the LeNet-5, VGG and tiny-YOLO instruction
selectors import it and `rewrites`, whose pass inserts the `shir_intrinsic` packets the helpers
match). The helper sees the nodes its importers hand it, and those are the graphs the
selectors are written for.

Such a helper module is linked to the inserting module when it reads no graph itself (no
`.graph`, no `.nodes`: it sees only the nodes its importers hand it), it is imported at all, and
every module of the project importing it is itself linked to the inserting module (imports it,
or is imported by it). A module walking a graph it is handed is a pass, and a pipeline that
imports it beside the inserting pass may run it on any graph, in any order: only a direct
import links a pass (`packet_consumers.linked_modules`). A helper any other module imports
may be handed anyone's nodes: a module exporting its own model and matching it with the same
helper sees the model's overloads. And neither the helper nor an importer may spell an export,
a lowering or a re-trace: a graph made or re-traced there holds the op as its overloads,
whatever the inserting pass put into others.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.project_scan import parsed_module, texts_naming
from qlint.analysis.names.text_imports import may_import
from qlint.lazy_patterns import lazy
from qlint.rules.packet_scan import imported_names, module_stem

# Calls whose graph holds overloads (a capture, a re-trace) or goes to someone else's code (a
# lowering), by their last name.
_RETRACES = lazy(
    r"\b(?:export|export_for_training|to_edge|to_edge_transform_and_lower|run_decompositions|"
    r"aot_export_module|aot_export_joint_simple|aot_module|aot_module_simplified|aot_function|"
    r"make_fx|compile_fx|compile_fx_inner)\s*\("
)
# A module reading a graph: the attribute that holds one, or its nodes.
_READS_GRAPH = lazy(r"\.\s*(?:graph|nodes)\b")
_CACHE_KEY = "helper_links.importers"


class _Importer(NamedTuple):
    """What the link question asks of a module importing the helper (plain data, kept on the
    helper's cache: a context holding other contexts would be a cycle)."""

    path: str
    stem: str
    imported: frozenset[str]


def linked_through_importers(inserting: FileContext, helper: FileContext, reader: FileContext) -> bool:
    """Whether `helper` is imported only by modules linked to `inserting` (above). `reader`: the
    module whose check asks (the inserting module or the helper), which reads the project."""
    if _READS_GRAPH.search(helper.text) or _RETRACES.search(helper.text):
        return False
    importers = _importers(helper, reader)
    if not importers:
        return False
    stem, imported = module_stem(inserting), None
    for importer in importers:
        if importer.path == inserting.path or stem in importer.imported:
            continue
        if imported is None:
            imported = imported_names(inserting) if inserting.tree is not None else frozenset()
        if importer.stem not in imported or importer.stem not in inserting.text:
            return False
    return True


def may_link_through_importers(text: str, path: str, helper: FileContext) -> bool:
    """Whether the module at `path` holding `text` may be linked to `helper` through its
    importers (`linked_through_importers`), asked before it is parsed."""
    if _READS_GRAPH.search(helper.text):
        return False
    importers = _importers(helper, helper)
    stem = os.path.splitext(os.path.basename(path))[0]
    return bool(importers) and all(i.path == path or stem in i.imported or i.stem in text for i in importers)


def _importers(helper: FileContext, reader: FileContext) -> tuple[_Importer, ...] | None:
    """The project's modules importing `helper` by its module name's last part; None when one
    of them spells an export, a lowering or a re-trace. Only a module whose text may import
    that name (`may_import`) is parsed to find out: most modules spelling `decompositions`
    spell it in prose or as an attribute (torch: 46 parsed for 6 importers). A package's
    `__init__` is a helper too, but no import binds that name: its search would find nothing
    (torch's `_refs.nn.functional`: 972 modules spell `__init__`, 118 parsed for nothing)."""
    found = helper.cache.get(_CACHE_KEY, False)
    if found is not False:
        return found
    stem = module_stem(helper)
    own = os.path.abspath(helper.path)
    importers: list[_Importer] | None = []
    for path, text in texts_naming(reader, stem) if stem != "__init__" else ():
        if os.path.abspath(path) == own or not may_import(text, stem):
            continue
        module = parsed_module(reader, path, text)
        if module is None or stem not in imported_names(module):
            continue
        if _RETRACES.search(text):
            importers = None
            break
        importers.append(_Importer(path, module_stem(module), imported_names(module)))
    helper.cache[_CACHE_KEY] = found = tuple(importers) if importers is not None else None
    return found


__all__ = ["linked_through_importers", "may_link_through_importers"]
