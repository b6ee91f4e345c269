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
whatever the inserting pass put into others. A package's `__init__` is a helper too, imported
by the package's name where the imports resolve to it (`_package_importers`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.project_texts import parsed_module, texts_naming
from qlint.analysis.names.modules import module_stem as named_stem
from qlint.analysis.names.text_imports import imported_modules, may_import
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


class _Importer:
    """What the link question asks of a module importing the helper (plain data, kept on the
    helper's cache: a context holding other contexts would be a cycle). `imported`: the names
    its imports bind, by their last part; a package's importer, found from its text, is parsed
    for them only when asked (`_imports`). `retraces`: it spells an export, a lowering or a
    re-trace, which unlinks the helper whatever the inserting module."""

    __slots__ = ("imported", "path", "retraces", "stem", "text")

    def __init__(self, path: str, imported: frozenset[str] | None, text: str | None = None, retraces=False):
        self.path, self.imported, self.text, self.retraces = path, imported, text, retraces
        self.stem = os.path.splitext(os.path.basename(path))[0]


class _Found:
    """The importers a search found so far, in its order, and whether it read every candidate
    (kept on the helper's cache; the search itself is not kept: it reads through `reader`)."""

    __slots__ = ("complete", "importers")

    def __init__(self):
        self.importers: list[_Importer] = []
        self.complete = False


def linked_through_importers(inserting: FileContext, helper: FileContext, reader: FileContext) -> bool:
    """Whether `helper` is imported only by modules linked to `inserting` (above). `reader`: the
    module whose check asks (the inserting module or the helper), which reads the project."""
    if _READS_GRAPH.search(helper.text) or _RETRACES.search(helper.text):
        return False
    stem, imported, any_importer = module_stem(inserting), None, False
    for importer in _importers(helper, reader):
        if importer.retraces:
            return False
        any_importer = True
        if importer.path == inserting.path or _imports(importer, stem, reader):
            continue
        if imported is None:
            imported = imported_names(inserting) if inserting.tree is not None else frozenset()
        if importer.stem not in imported or importer.stem not in inserting.text:
            return False
    return any_importer


def may_link_through_importers(text: str, path: str, helper: FileContext) -> bool:
    """Whether the module at `path` holding `text` may be linked to `helper` through its
    importers (`linked_through_importers`), asked before it is parsed."""
    if _READS_GRAPH.search(helper.text):
        return False
    stem, any_importer = os.path.splitext(os.path.basename(path))[0], False
    for i in _importers(helper, helper):
        if i.retraces or not (i.path == path or i.stem in text or _imports(i, stem, helper)):
            return False
        any_importer = True
    return any_importer


def _importers(helper: FileContext, reader: FileContext) -> Iterator[_Importer]:
    """The project's modules importing `helper`, found as the question reads them: both
    questions stop at the first importer that unlinks the helper (one not linked to the
    inserting module, or one that re-traces), and in a project where the helper has many
    importers the first one found mostly does (torch's `_refs.nn.functional`, imported by
    five modules that link no pass). What was found is kept; a later question reads it first,
    and searches again for the rest only if none of it settled the answer."""
    found = helper.cache.get(_CACHE_KEY)
    if found is None:
        found = helper.cache[_CACHE_KEY] = _Found()
    yield from found.importers[:]
    if found.complete:
        return
    package = module_stem(helper) == "__init__"
    seen = {i.path for i in found.importers}
    for importer in (_package_importers if package else _module_importers)(helper, reader):
        if importer.path in seen:
            continue
        found.importers.append(importer)
        yield importer
        if importer.retraces:
            return  # the answer for every question: no need to read on
    found.complete = True


def _module_importers(helper: FileContext, reader: FileContext) -> Iterator[_Importer]:
    """`_importers` of a module, by its name's last part. Only a module whose text may import
    that name (`may_import`) is parsed to find out: most modules spelling `decompositions`
    spell it in prose or as an attribute (torch: 46 parsed for 6 importers)."""
    stem = module_stem(helper)
    own = os.path.abspath(helper.path)
    for path, text in texts_naming(reader, stem):
        if os.path.abspath(path) == own or not may_import(text, stem):
            continue
        module = parsed_module(reader, path, text)
        if module is None or stem not in imported_names(module):
            continue
        yield _Importer(path, imported_names(module), retraces=_RETRACES.search(text) is not None)


def _package_importers(helper: FileContext, reader: FileContext) -> Iterator[_Importer]:
    """`_importers` of a package's `__init__`, which no import names by its file's name: the
    modules whose imports name the package (`from pkg import functional`, `import
    pkg.functional as F`, `from pkg.functional import f`, relative ones too) and find it where
    the project's imports are looked up. By its whole name, not its last part as a module's: a
    package's name is a common word, which every import of a namesake spells (torch's
    `_refs.nn.functional`: 104 modules import a `functional`, five this one), and the modules
    importing one are read from their text, not parsed."""
    name, own = named_stem(helper.path), os.path.abspath(helper.path)
    real = os.path.realpath(own)
    for path, text in _naming_or_within(reader, name, os.path.dirname(own)):
        if os.path.abspath(path) == own:
            continue
        named = [m for m in imported_modules(text, path) if m.rpartition(".")[2] == name]
        if any(_found_at(reader, m, path, real) for m in named):
            retraces = _RETRACES.search(text) is not None
            yield _Importer(path, None, None if retraces else text, retraces)


def _naming_or_within(reader: FileContext, name: str, package: str) -> Iterator[tuple[str, str]]:
    """(path, text) of the modules whose text may import `name` (`may_import`), then of the
    others inside the package's directory, whose relative imports may name it without spelling
    it (`from . import f`). Those spelling the name after its parent package's (`nn.functional`
    of `import torch._refs.nn.functional`, `nn import functional`) come first, as they are
    read: an importer found there mostly settles the question (`_importers`), and the others
    spelling a namesake (torch: 590 modules spell `functional`) are then never looked at."""
    parent = os.path.basename(os.path.dirname(package))
    likely = (f"{parent}.{name}", f"{parent} import") if parent.isidentifier() else ()
    given: set[str] = set()
    later: list[str] = []
    for path, text in texts_naming(reader, name):
        if may_import(text, name):
            given.add(os.path.abspath(path))
            if not likely or any(n in text for n in likely):
                yield path, text
            else:
                later.append(path)  # its text is read again if asked: most searches stop first
    for path in later:
        text = reader.project.text(path)
        if text is not None:
            yield path, text
    for path, text in texts_naming(reader, "import", package):
        if os.path.abspath(path) not in given:
            yield path, text


def _found_at(reader: FileContext, module: str, requester: str, path: str) -> bool:
    found = reader.project.find_module_in_check(module, requester)
    return found is not None and os.path.realpath(found) == path


def _imports(importer: _Importer, name: str, reader: FileContext) -> bool:
    """Whether `importer`'s imports bind `name` (by its last part, as `imported_names`)."""
    if importer.imported is None:
        if not may_import(importer.text, name):
            return False
        module = parsed_module(reader, importer.path, importer.text)
        importer.imported = imported_names(module) if module is not None else frozenset()
    return name in importer.imported


__all__ = ["linked_through_importers", "may_link_through_importers"]
