"""Helpers of other modules a module calls: functions it imports (`insert_op(...)`, also as
`gu.insert_op(...)`), methods its classes inherit from classes of other modules, methods of
the classes of other modules it constructs (`GraphBuilder(graph).insert(op)`). Whether an
imported name or base leads to a helper is remembered per import root across checks
(`forwarding_memos.IMPORTED`), and asked from a module's text alone by `imports_helper`. Each
function takes the helper search (`forwarding.Forwarding`) as `fw`.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterator

from qlint.analysis.graphs.called_names import attribute_pattern, calls_memo, may_call, may_call_attribute
from qlint.analysis.graphs.dotted_heads import heads_reaching
from qlint.analysis.graphs.forwarding_facts import RemoteModule
from qlint.analysis.graphs.forwarding_memos import IMPORTED
from qlint.analysis.graphs.forwarding_texts import called_attributes, class_names, is_torch, of_torch, text_names
from qlint.analysis.graphs.forwarding_trails import module_file, read_module, record, replay, shared_entry
from qlint.analysis.graphs.helper_gate import may_lead_to_helper
from qlint.analysis.graphs.helper_lookup import MAX_DEPTH, base_class, module_function
from qlint.analysis.graphs.word_trie import holds_any
from qlint.analysis.names.absent_packages import project_imports
from qlint.analysis.names.import_paths import lookup_root
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.names.scope import ModuleScope
from qlint.analysis.names.text_imports import class_bases_by_head, file_imports, imported_modules


def helper_names(
    fw,
    scope: ModuleScope,
    resolver: Resolver,
    called: Callable[[str], bool] | None = None,
    index=None,
    text: str | None = None,
) -> set[str]:
    """Names under which `scope` calls helpers of other modules: imported functions and
    methods its classes inherit from classes of other modules. With `called` (whether
    the module may call a name, see `called_names`), only imports it calls are asked about;
    with the project's `index` of wrapper names (`wrapper_index`), only those it holds."""
    fw.project = resolver.project
    fw.wrapper_index = index
    if index is not None:
        resolver.project.record_derived(scope.path, index.dependency, index.digest)
    # Names that cannot be helpers are passed over before the text is searched for calls of
    # them (most of a test module's imports come from torch and torchao).
    names = {
        name
        for name, full in scope.imports.items()
        if not _not_a_project_name(name, full)
        and (index is None or index.may_lead_to_function(full))
        and (called is None or called(name))
        and _imported_helper(fw, scope, name, full)
    }
    for cls in scope.classes.values():
        for base in cls.bases:
            if index is not None and not _may_lead_to_class(scope, base, index):
                continue
            names |= _base_helpers(fw, scope, base)
    if text is not None:
        names |= _attribute_helpers(fw, scope.path, scope.imports.items(), text, index)
    names |= _instance_helpers(fw, scope, called, index, text)
    return names


def _instance_helpers(fw, scope, called, index, text: str | None) -> set[str]:
    """The helper methods of the classes of other modules the module constructs
    (`GraphBuilder(graph).insert(op)`, `bl.GraphBuilder(graph)`): the names their calls
    go by. Only classes it calls, and with the index only those it holds."""
    found: set[str] = set()
    if not fw.instances:
        return found
    for parts in _constructed(fw, scope, scope.imports.items(), text, index, called):
        found |= _base_helpers(fw, scope, parts)
    return found


def _constructed(fw, scope, imports, text: str | None, index, called) -> Iterator[list[str]]:
    """The dotted names (`["GraphBuilder"]`, `["bl", "GraphBuilder"]`) under which the
    module may call a class of another module of the project: an imported name it calls,
    or an attribute called of an imported module, whose module defines a class of that
    name or re-exports it (a function of the name is no class to build). With the index,
    only the class names it holds, and none where the text spells none of them."""
    if index is not None and text is not None and not holds_any(text, index.classes):
        return
    for name, full in imports:
        if is_torch(full) or (text is not None and name not in text):
            continue
        project_name = not _not_a_project_name(name, full) and (index is None or index.may_lead_to_class(full))
        if project_name and (called is None or called(name)) and _may_be_class(fw, full, scope.path):
            yield [name]
        if text is None:
            continue
        for tail in sorted(called_attributes(text, name)):
            dotted = ".".join([full, *tail])
            if (index is None or index.may_lead_to_class(dotted)) and _may_be_class(fw, dotted, scope.path):
                yield [name, *tail]


def _may_be_class(fw, full: str, requester: str) -> bool:
    """Whether the module `full` names (as `module.Name`) is of the project and defines a
    class `Name` or imports it (a re-export); read from its text (and a dependency)."""
    module, _, name = full.rpartition(".")
    path = module_file(fw, module, requester) if module else None
    if path is None:
        return False
    read_module(fw, fw.project, path)
    _, _, imports = text_names(fw.project, path)
    return name in imports or name in class_names(fw.project, path)


def _attribute_helpers(fw, path: str, imports, text: str, index, first: bool = False) -> set[str]:
    """Names of the helpers the module calls as functions of the modules it imports
    (`gu.insert_op(...)` after `import pkg.graph_utils as gu`): the attribute called, as
    `callee_name` gives it. With `first`, the search stops at the first one."""
    found: set[str] = set()
    if index is not None and text.isascii() and "\r" not in text:
        # A path leads to a function of the index only through a part the index holds (its
        # last, or a skipped directory: `attribute_names`), which a dotted name of the text
        # spells after a dot, starting at the import's name (`dotted_heads`, as `helper_gate`
        # reads it). The imports no such name starts at are not searched for paths: on
        # ExecuTorch most of those of the ~250 files QL102's import trigger gets this far.
        heads = frozenset(name for name, _ in imports)
        reaching = heads_reaching(text, attribute_pattern(index.attribute_names), heads)
        if reaching is not None:
            imports = [(name, full) for name, full in imports if name in reaching or index.may_lead_to_function(full)]
    elif index is not None and not may_call_attribute(text, index.attribute_names):
        # No dotted name of the text ends in a name the index holds, nor passes a skipped
        # directory: only an import naming such a directory itself may still lead to one.
        imports = [(name, full) for name, full in imports if index.may_lead_to_function(full)]
    for name, full in imports:
        if is_torch(full) or name not in text:
            continue
        for tail in sorted(called_attributes(text, name)):
            dotted = ".".join([full, *tail])
            if tail[-1] in found or (index is not None and not index.may_lead_to_function(dotted)):
                continue
            if _imported_helper(fw, RemoteModule(path, {tail[-1]: dotted}, {}, {}), tail[-1], dotted):
                found.add(tail[-1])
                if first:
                    return found
    return found


def helper_imports(project, path: str, text: str, index=None, instances: bool = True) -> list[tuple[str, str]]:
    """The imports (local name, dotted name) of the module with this text through which
    `imports_helper` may find a helper ([]: none can), read before a helper search is made
    for it (most files an import trigger asks import none). With the project's `index` of
    wrapper names (`wrapper_index`), only if the index lets one through (`helper_gate`; for a
    search that builds no class, without `instances`), asked again of the project's imports
    where the file has others.

    Imports of `torch` lead to none: every way asks the search of one of its functions or
    classes (`_imported_helper`: `_not_a_project_name`), of a path called on it or of a
    class built from it (`is_torch`), or of a base class under it (`helper_lookup.base_class`),
    and each answers nothing without a lookup. Nor do those of packages no import root holds
    (`absent_packages`). The ways of one import do not depend on the others, but for the
    class a name built is looked up as (`_constructs_a_helper_class`)."""
    imports = file_imports(text, path)
    if not imports:
        return []
    if index is not None:
        # The names it did not hold are answered by it: a dependency of the result.
        project.record_derived(path, index.dependency, index.digest)
        if instances and not may_lead_to_helper(text, imports, index):
            return []
    live = [(name, full) for name, full in imports if not of_torch(full)]
    if len(live) == len(imports):
        live = imports
    if index is not None and not instances and (not live or not may_lead_to_helper(text, live, index, instances)):
        # Asked of the imports not of torch alone: a dotted name starting at `torch`
        # (`torch.nn.Module`) leads to no helper, whatever name of the index it ends in.
        return []
    kept = project_imports(project, live, path)
    if index is not None and kept is not live and kept:
        # The gate again, of the project's imports alone (the search is asked of no others):
        # `subprocess.run(...)` is no call of the index's `run` (on ExecuTorch, most files
        # QL101's import trigger asks it leads to, and 25 of the 59 ASCII ones QL102's let
        # through).
        return kept if may_lead_to_helper(text, kept, index, instances) else []
    return kept


def imports_helper(
    fw, project, path: str, text: str, index=None, imports: list[tuple[str, str]] | None = None, named: bool = False
) -> bool:
    """Whether the module with this text may call a helper of another module: it imports
    a function that forwards to a sink, or a class with a method that does (which it may
    subclass, also as `mod.Base`). Asked from the text alone (a prefilter), with the
    answers `helper_names` gives and caches. Only imported names the text may call are
    asked about, as `find_helpers` asks (`called_names`): a function never called inserts
    nothing, and the check would not look it up either. With the project's `index` of
    wrapper names (`wrapper_index`), only the names it holds are. `imports`: what
    `helper_imports` answered for this text, when the caller asked it first. `named`: only
    through the names imported (a function called by its name, a class subclassed by its
    name), not through a path called on one (`gu.insert_op(...)`, `class P(gu.Rewriter)`)."""
    fw.project = project
    fw.wrapper_index = index
    if imports is None:
        imports = helper_imports(project, path, text, index)
    if not imports:
        return False
    heads = class_bases_by_head(text)
    scope = RemoteModule(path, {}, {}, {}, _TextModules(text, path))
    called = calls_memo(text)
    for name, full in imports:
        if _not_a_project_name(name, full) and name not in heads:
            continue  # answered without reading the text (most of torch's own imports)
        function = index is None or index.may_lead_to_function(full)
        bases = [
            parts
            for parts in heads.get(name, ())
            if (index is None or index.may_lead_to_class(".".join([full, *parts[1:]])))
            and not (named and len(parts) > 1)
        ]
        if not function and not bases:
            continue
        if function and name not in called:
            called[name] = may_call(text, name)
        if not (function and called[name]) and not bases:
            continue
        scope.imports = {name: full}
        if function and called[name] and _imported_helper(fw, scope, name, full):
            return True
        if any(_base_helpers(fw, scope, list(parts)) for parts in bases):
            return True
    if named:
        return False
    # `gu.insert_op(...)`: the text names the imported module, then the function.
    if _attribute_helpers(fw, path, imports, text, index, first=True):
        return True
    return _constructs_a_helper_class(fw, path, imports, text, index, called)


def _constructs_a_helper_class(fw, path: str, imports, text: str, index, called: dict[str, bool]) -> bool:
    """`imports_helper` for classes the module constructs (`GraphBuilder(graph)`,
    `bl.GraphBuilder(graph)`) whose helper methods it calls by name (`.insert(...)`).
    `imports`: those `helper_imports` kept; a class built is looked up under the name's
    last import of all (one the search leaves out, of torch, binds it to no helper class)."""
    if not fw.instances:
        return False
    scope = RemoteModule(path, dict(file_imports(text, path)), {}, {}, _TextModules(text, path))

    def calls(name: str) -> bool:
        if name not in called:
            called[name] = may_call(text, name)
        return called[name]

    for parts in _constructed(fw, scope, imports, text, index, calls):
        if any(calls(method) for method in sorted(_base_helpers(fw, scope, parts))):
            return True
    return False


class _TextModules:
    """The modules the text's imports name (`text_imports.imported_modules`, a superset of the
    parse's), read when first asked: `package_paths` asks them only of a path through a
    package (`pkg.checks.Base`), whether the module's import sets the package's attribute."""

    def __init__(self, text: str, path: str):
        self._text, self._path = text, path
        self._modules: set[str] | None = None

    def __contains__(self, module: object) -> bool:
        if self._modules is None:
            self._modules = imported_modules(self._text, self._path)
        return module in self._modules


def _imported_helper(fw, scope, name: str, full: str) -> bool:
    if _not_a_project_name(name, full):
        return False
    # Files of one project import the same names over and over: whether a name is a
    # helper is remembered (briefly, as for the texts it depends on) per import root,
    # where a file is found without looking the module up again, and per module file it
    # is imported from, which the import roots of a tree share (ExecuTorch: 275 roots):
    # everything read past that file is read from its own path, whoever imports it.
    root = lookup_root(full, scope.path)
    rooted = (full, root, fw.kind)
    known = shared_entry(fw, IMPORTED, rooted)
    if known is not None:
        replay(fw, known[1])
        return bool(known[0])
    module, _, attr = full.rpartition(".")
    path = module_file(fw, module, scope.path) if module else None
    shared = (path, attr, fw.kind) if path is not None else None
    known = shared_entry(fw, IMPORTED, shared) if shared is not None else None
    if known is not None:
        replay(fw, known[1])
    else:
        fw.trails.append([])
        helper = module_function(fw, None, scope, name, 0)
        is_helper = bool(
            helper is not None and helper.scope is not scope and fw.forwarded_params(helper.func, helper.scope, None)
        )
        known = (is_helper, tuple(dict.fromkeys(fw.trails.pop())))
        if shared is not None:
            IMPORTED[shared] = known
    if len(IMPORTED) > 50_000:
        IMPORTED.clear()
    # Per import root, the answer holds while the name's module is the file found here.
    lookup = (("find", module, root), path)
    IMPORTED[rooted] = (known[0], known[1] if not module or lookup in known[1] else (*known[1], lookup))
    return bool(known[0])


def _base_helpers(fw, scope: ModuleScope | RemoteModule, base: ast.expr | list[str]) -> frozenset[str]:
    """Helper methods a class inherits through `base` (an expression, or its dotted
    parts). A base imported from another module is looked up once per import root (like
    imported functions), not once per file that subclasses it."""
    parts = base if isinstance(base, list) else dotted_parts(base)
    local = not parts or (len(parts) == 1 and parts[0] in scope.classes)
    head = None if local else scope.imports.get(parts[0])
    if head is None or len(parts) > 2:
        # A path through a package (`pkg.checks.Base`) runs or not by the modules the module
        # itself imports (`package_paths`): no answer of one module for another.
        return frozenset(_inherited_helpers(fw, scope, base, 0))
    key = ("base", ".".join([head, *parts[1:]]), lookup_root(head, scope.path), fw.kind)
    known = shared_entry(fw, IMPORTED, key)
    if known is not None:
        replay(fw, known[1])
        return known[0]
    fw.trails.append([])
    names = frozenset(_inherited_helpers(fw, scope, base, 0))
    if len(IMPORTED) > 50_000:
        IMPORTED.clear()
    trail = tuple(dict.fromkeys(fw.trails.pop()))
    if fw.trails:
        fw.trails[-1].extend(trail)
    record(fw, trail)
    IMPORTED[key] = (names, trail)
    return names


def _inherited_helpers(fw, scope, base: ast.expr | list[str], depth: int) -> set[str]:
    found = base_class(fw, None, scope, base, depth)
    if found is None or depth > MAX_DEPTH:
        return set()
    other, cls = found
    # Asked outside any fact being worked out (no trail to hand on, no answer in progress),
    # a class's answer at a depth is final for the check: `helper_names` asks it again for
    # every subclass of the module, down each chain of bases (torch's _inductor/ir.py: ~100
    # classes, 9,120 `forwarded_params` asks for ~400 methods).
    settled = not fw.trails and not fw.asking
    key = (id(cls), id(other), depth)
    if settled:
        known = fw.inherited.get(key)
        if known is not None and known[0] is cls and known[1] is other:
            return set(known[2])
    names = {n for n, m in cls.methods.items() if fw.forwarded_params(m, other, cls)}
    for b in cls.bases:
        names |= _inherited_helpers(fw, other, b, depth + 1)
    if settled:
        fw.inherited[key] = (cls, other, frozenset(names))  # kept alive: their ids name no others
    return names


@functools.lru_cache(maxsize=4096)
def _not_a_project_name(name: str, full: str) -> bool:
    """A name bound by `import x` (no attribute of a module) or imported from a `torch*`
    package: not asked about as a helper (as `helper_names` has always decided)."""
    return name == full or full.startswith("torch")


def _may_lead_to_class(scope, base: ast.expr, index) -> bool:
    """Whether a class base may name a class of another module with a helper method, by the
    project's index (a base of this module is followed as before)."""
    parts = dotted_parts(base)
    if not parts or (len(parts) == 1 and parts[0] in scope.classes):
        return True
    head = scope.imports.get(parts[0])
    return head is None or index.may_lead_to_class(".".join([head, *parts[1:]]))
