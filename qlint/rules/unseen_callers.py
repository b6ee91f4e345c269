"""Whether QL102's insertion runs on a graph that goes back to callers outside the project
(`packet_distinguishers`): the function or class holding it, or one running it (through its
module's definitions, then one module further), is an entry point nothing in the project
uses, so users hand it their graph and get it back, to matchers keyed on the overloads
exported graphs carry; or it is an Inductor post-grad pass; or its module is outside any
package qlint can map, whose callers are unknown. A test the runner collects is no entry
point: it hands its graphs to the project's own code.

Also the searches other readings of QL102 share: the other modules of the project spelling
a name (`texts_naming`), and those using it (`users_elsewhere`).
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.never_called import enclosing_definitions
from qlint.analysis.graphs.project_scan import scan_root
from qlint.analysis.graphs.project_texts import parsed_module, texts_spelling

__all__ = ["Consumer", "texts_naming", "unseen_callers", "users_elsewhere"]

# (who tells the packet from its overload, for the message; why, for its help)
Consumer = tuple[str, str]

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# `scan_memo`'s question: a module that spells the name that follows, as a word.
_NAMES = "ql102-names:"
_INDUCTOR_PASSES = frozenset(
    {"post_grad_custom_pre_pass", "post_grad_custom_post_pass", "joint_custom_pre_pass", "joint_custom_post_pass"}
)
# `FileContext.cache` keys: the entry-point verdict per outermost definition, a module's
# `_TopNames`, the other modules parsed for the search.
_UNSEEN_KEY = "ql102.unseen-callers"
_TOP_NAMES_KEY = "ql102.top-names"
_PARSED_KEY = "ql102.parsed-users"
_NAMING_KEY = "ql102.naming"


def unseen_callers(ctx: FileContext, chain: list[ast.AST]) -> Consumer | None:
    """A function or class that runs the insertion is one nothing in the project runs: users
    call it with their graph and get it back. Followed from the definition holding the insertion
    through the module's own functions and classes that use it, and then through those of the
    other modules that use one of them: an entry point among them that no code uses (not the
    module's other code, not another module; an import or `__all__` naming it hands it on to
    users, which is no use) is where the graph comes from and goes back to. A pass the project
    runs only from code it runs itself hands the graph to the project's own pipeline."""
    if not chain:
        return (
            "the module's code edits a graph it does not show the consumers of",
            "the graph's consumers, and whether they key on overloads, are not in this module",
        )
    outer = getattr(chain[0], "name", "")
    memo = ctx.cache.setdefault(_UNSEEN_KEY, {})
    if outer not in memo:
        memo[outer] = None if _collected_test(ctx, chain[0]) else _first_entry(ctx, outer)
    return memo[outer]


def _collected_test(ctx: FileContext, outer: ast.AST) -> bool:
    """The definition holding the insertion is a test the runner collects from a test module
    (a `Test*` class or a `...TestCase` subclass, a `test*` function): nobody imports it from
    there to hand it a graph, so no user's matcher sees what it inserts. It runs on the graphs
    the test makes and hands them to the project's own code (coreai-torch's `TestRound`
    rewrites an exported `round` node to the packet to check that its converter lowers it).
    A helper of the module the runner does not collect is still judged by its callers."""
    from qlint.analysis.graphs.test_collection import called_by_runner, is_test_module
    from qlint.analysis.names.package_map import project_root

    root = scan_root(ctx.path) or project_root(ctx.path)
    if root is None or not is_test_module(ctx.path, root):
        return False
    if isinstance(outer, ast.ClassDef):
        return outer.name.startswith("Test") or any(_test_case_base(b) for b in outer.bases)
    return isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)) and called_by_runner(outer.name, False)


def _test_case_base(base: ast.expr) -> bool:
    """`unittest.TestCase`, or a base of the project's named so (`QuantizationTestCase`)."""
    name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else ""
    return name.endswith("TestCase")


def _first_entry(ctx: FileContext, outer: str) -> Consumer | None:
    if scan_root(ctx.path) is None:
        # Outside any package (or in a tree whose package qlint cannot map) no other module is
        # seen: the callers, and their matchers keyed on overloads, are unknown.
        return f"`{outer}`'s callers are unknown", _unread_package(ctx.path)
    here = _top_names(ctx)
    holders = here.holders(outer)
    # One read of the project for the names of every insertion's definitions in the module
    # (those asked later find theirs in the table): each read is of the whole project.
    _naming(ctx, holders.union(*(here.holders(o) for o in _inserting_outers(ctx))))
    for name in sorted(holders):
        users = users_elsewhere(ctx, name)
        if any(_top_names(m).post_grad(name) for m in [ctx, *(m for m, _ in users)]):
            return (
                f"`{name}` is an Inductor post-grad pass",
                "Inductor's pattern matchers and lowerings after its post-grad passes are keyed on overloads",
            )
        if here.used(name, {name}):
            continue
        if not users:
            return _entry(name)
        for module, binding in users:
            names = _top_names(module)
            theirs = names.holders(*binding)
            _naming(ctx, theirs)
            entry = next((h for h in sorted(theirs) if _unused(ctx, module, names, h)), None)
            if entry is not None:
                return _entry(entry)
    return None


def _unread_package(path: str) -> str:
    """Why no other module is seen, naming the module as Python imports it: through a directory
    without `__init__.py` inside a package (`pkg.passes.insert`, PEP 420), which qlint reads as
    no package, or as a top-level module of its own directory (or not at all)."""
    from qlint.analysis.names.modules import module_name_for, namespace_import
    from qlint.analysis.names.package_map import project_root

    unknown = "so its callers and the matchers keyed on overloads they hand the graph to are unknown"
    top = project_root(path)
    found = namespace_import(path, top) if top is not None else None
    if found is not None:
        dotted, directory = found
        where = os.path.relpath(directory, top)
        return (
            f"Python imports this module as `{dotted}`, but `{where}` has no `__init__.py` and qlint reads no "
            f"package through it, {unknown}"
        )
    name = module_name_for(path)
    how = f"it imports as top-level `{name}`" if name else "its file name is no module name: it is not imported"
    return f"qlint sees no package around this module ({how}), {unknown}"


def _inserting_outers(ctx: FileContext) -> set[str]:
    """The outermost definitions holding the module's insertions."""
    from qlint.rules.module_insertions import insertions

    outers = set()
    for _, node in insertions(ctx):
        chain = enclosing_definitions(ctx.tree, node.lineno)
        if chain:
            outers.add(getattr(chain[0][1], "name", ""))
    return outers


def _entry(name: str) -> Consumer:
    return (
        f"nothing in the project runs `{name}`",
        "the graph goes back to its users, whose matchers are keyed on the overloads exported graphs carry",
    )


class _TopNames:
    """Per top-level statement of a module: the names it binds (a function's, a class's, an
    assignment's) and the names it reads (a name, an attribute); one walk of the module serves
    every question the entry-point search asks of it."""

    def __init__(self, tree: ast.Module):
        self.rows: list[tuple[frozenset[str], frozenset[str], ast.stmt]] = []
        for stmt in tree.body:
            read = frozenset(
                n.id if isinstance(n, ast.Name) else n.attr
                for n in ast.walk(stmt)
                if isinstance(n, (ast.Name, ast.Attribute))
            )
            self.rows.append((frozenset(_bound(stmt)), read, stmt))

    def _statements(self, skip: set[str]):
        """The statements other than those binding `skip`, and `__all__`'s (it hands names on)."""
        return ((b, r, s) for b, r, s in self.rows if not (b & skip) and "__all__" not in b)

    def holders(self, *names: str) -> set[str]:
        """`names` and what the statements that read one bind, transitively."""
        holders = set(names)
        grew = True
        while grew:
            more = {n for b, r, _ in self._statements(holders) if r & holders for n in b} - holders
            holders |= more
            grew = bool(more)
        return holders

    def used(self, name: str, skip: set[str]) -> bool:
        """A statement other than those binding `skip` reads `name`."""
        return any(name in r for _, r, _ in self._statements(skip))

    def binding(self, name: str) -> list[str]:
        """What the statements reading `name` bind (none: module-level code, run on import)."""
        return sorted(n for b, r, _ in self._statements(set()) if name in r for n in b)

    def post_grad(self, name: str) -> bool:
        """A statement sets one of Inductor's post-grad (or joint) custom passes to `name`
        (`inductor_config.post_grad_custom_post_pass = rewrite`): it runs on AOT's graph of
        overloads, before Inductor's own passes."""
        return any(
            isinstance(s, ast.Assign)
            and name in r
            and any(isinstance(t, ast.Attribute) and t.attr in _INDUCTOR_PASSES for t in s.targets)
            for _, r, s in self.rows
        )


def _top_names(module: FileContext) -> _TopNames:
    found = module.cache.get(_TOP_NAMES_KEY)
    if found is None:
        found = module.cache[_TOP_NAMES_KEY] = _TopNames(module.tree)
    return found


def _bound(stmt: ast.stmt) -> set[str]:
    """The names a top-level statement defines: a function's, a class's, an assignment's."""
    if isinstance(stmt, (*_FUNCS, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return {t.id for t in targets if isinstance(t, ast.Name)}
    return set()


def users_elsewhere(ctx: FileContext, name: str) -> list[tuple[FileContext, list[str]]]:
    """The other modules of the project that use `name`, each with what its top-level
    statements that do bind (none: its module-level code calls it, which runs on import)."""
    parsed = ctx.cache.setdefault(_PARSED_KEY, {})
    found = []
    for path, text in texts_naming(ctx, name):
        if path not in parsed:
            parsed[path] = parsed_module(ctx, path, text)
        module = parsed[path]
        if module is not None and _top_names(module).used(name, set()):
            found.append((module, _top_names(module).binding(name)))
    return found


def _unused(ctx: FileContext, module: FileContext, names: _TopNames, name: str) -> bool:
    """Nothing in `module` but its own definition uses `name`, and no other module of the
    project spells it."""
    if names.used(name, {name}):
        return False
    elsewhere = os.path.abspath(module.path)
    return all(os.path.abspath(p) == elsewhere for p, _ in texts_naming(ctx, name))


def texts_naming(ctx: FileContext, name: str) -> list[tuple[str, str]]:
    """(path, text) of each other module of the project spelling `name` as a word."""
    _naming(ctx, {name})
    return ctx.cache[_NAMING_KEY][name]


def _naming(ctx: FileContext, names: set[str]) -> None:
    """Finds the other modules spelling each of `names` not yet asked in this check, reading
    each module once for all of them; what each module answered is kept between runs
    (`scan_memo`), so a later run reads only those that spell one."""
    table = ctx.cache.setdefault(_NAMING_KEY, {})
    pending = tuple(sorted(n for n in names if n not in table))
    if not pending:
        return
    for name in pending:
        table[name] = []
    for path, text, spelled in texts_spelling(ctx, pending, question=_NAMES):
        for name in spelled:
            table[name].append((path, text))
