"""What another module contributes to a check, as plain data: a `ModuleSummary`.

Rules read other project modules only through a `ModuleScope`: its imports, and by name
its constants, functions and classes (bodies that call graphs, model flows and op
collections then read). A summary keeps the imports and, for every bound name, where its
statements are (first line, `def`/statement line, last line, column). It is computed once
per module content, kept in memory and on disk (`qlint.summary_cache`), and
turned back into a `ModuleScope` whose tables answer "is `x` bound here" from the summary
alone and parse only the statements a rule asks for, from the module's text. Checking one
file after an edit therefore parses that file and a few statements of its imports, not
every module it imports. Beyond bindings, a summary carries facts other checks need about
the module (`qlint.analysis.names.summary_facts`), so they never walk its tree.

Column offsets are kept exactly (a statement nested in a module-level `if`/`try` is parsed
inside an `if 1:` of its own indentation) and line numbers are shifted back, so every node
has the position it has in the whole module: findings and related locations in other files
are the same as from a whole-module parse. A statement that cannot be parsed alone (it
shares a line with another one that continues further) falls back to a parse of the module.
"""

from __future__ import annotations

import ast
from array import array
from collections.abc import Callable, Iterator, Mapping
from itertools import accumulate, count
from operator import add
from typing import Any

from qlint.analysis.names.live_trees import LIVE
from qlint.analysis.names.live_trees import parse as live_parse
from qlint.analysis.names.module_bindings import binding_statements
from qlint.analysis.names.recent_trees import RECENT
from qlint.analysis.names.scope import ClassScope, ModuleScope, assignments
from qlint.analysis.tree_walk import first_row
from qlint.lazy_patterns import lazy
from qlint.value_classes import field, value_class

# (first line, the statement's own line, last line, column): the first line is a
# decorator's for a decorated definition.
Loc = tuple[int, int, int, int]
_LINES = lazy(r"[^\r\n]*(?:\r\n|\r|\n)")  # the line breaks `ast` counts


def _loc(stmt: ast.stmt) -> Loc:
    return (first_row(stmt), stmt.lineno, stmt.end_lineno or stmt.lineno, stmt.col_offset)


@value_class
class ModuleSummary:
    module: str | None
    digest: str
    broken: bool = False  # the module does not parse: it binds nothing, but is still a dependency
    imports: dict[str, str] = field(default_factory=dict)
    imported_modules: list[str] = field(default_factory=list)
    # `ModuleScope.import_fallbacks`: functions written as stand-ins for a failed import.
    import_fallbacks: list[str] = field(default_factory=list)
    functions: dict[str, Loc] = field(default_factory=dict)
    classes: dict[str, Loc] = field(default_factory=dict)
    assigns: dict[str, list[Loc]] = field(default_factory=dict)
    # Facts other checks read about this module, by `SummaryFact.key` (see `summary_facts`):
    # computed from the same parse, as plain data.
    facts: dict[str, Any] = field(default_factory=dict)
    # Each class's own method names (`ClassScope.methods`, in order): a check that asks only
    # which methods another module's class has (`class_method_names`) reads them here. Parsing
    # the classes for it was most of a warm one-file check's parses (ExecuTorch's
    # qualcomm/tests/utils.py: 16 classes, 122 KB of source, three times the file's own).
    methods: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, tree: ast.Module | None, scope: ModuleScope | None, module: str | None, digest: str) -> ModuleSummary:
        """The summary of a parsed module (`tree` None: it does not parse)."""
        if tree is None or scope is None:
            return cls(module, digest, broken=True)
        out = cls(
            module,
            digest,
            imports=dict(scope.imports),
            imported_modules=sorted(scope.imported_modules),
            import_fallbacks=sorted(scope.import_fallbacks),
        )
        # The same walk and the same "last definition wins" as `ModuleScope.build`.
        for stmt in binding_statements(tree.body):
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                continue
            # A name a later import (or `def`/`class`) shadows is none of them (`ModuleScope._bind`).
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if stmt.name in scope.functions:
                    out.functions[stmt.name] = _loc(stmt)
            elif isinstance(stmt, ast.ClassDef):
                if stmt.name in scope.classes:
                    out.classes[stmt.name] = _loc(stmt)
                    out.methods[stmt.name] = list(ClassScope.build(stmt).methods)
            else:
                for name, _ in assignments(stmt):
                    locs = out.assigns.setdefault(name, [])
                    if not locs or locs[-1] != _loc(stmt):  # `a, a = 1, 2`: one statement
                        locs.append(_loc(stmt))
        return out

    # ----------------------------------------------------------------- plain data

    def to_data(self) -> dict[str, Any]:
        return {
            "module": self.module,
            "digest": self.digest,
            "broken": self.broken,
            "imports": self.imports,
            "imported": self.imported_modules,
            "fallbacks": self.import_fallbacks,
            "functions": {k: list(v) for k, v in self.functions.items()},
            "classes": {k: list(v) for k, v in self.classes.items()},
            "assigns": {k: [list(v) for v in vs] for k, vs in self.assigns.items()},
            "facts": dict(self.facts),
            "methods": self.methods,
        }

    @classmethod
    def from_data(cls, data: Any) -> ModuleSummary:
        """The inverse of `to_data`; raises TypeError on anything it would not have written."""
        if not isinstance(data, dict):
            raise TypeError("not a summary")
        module, digest, broken = data["module"], data["digest"], data["broken"]
        if not (module is None or isinstance(module, str)) or not isinstance(digest, str) or type(broken) is not bool:
            raise TypeError("bad summary header")
        imports = _str_map(data["imports"])
        imported = data["imported"]
        if not isinstance(imported, list) or not all(isinstance(m, str) for m in imported):
            raise TypeError("bad imported modules")
        fallbacks = data["fallbacks"]
        if not isinstance(fallbacks, list) or not all(isinstance(m, str) for m in fallbacks):
            raise TypeError("bad import fallbacks")
        functions = {k: _as_loc(v) for k, v in _named(data["functions"]).items()}
        classes = {k: _as_loc(v) for k, v in _named(data["classes"]).items()}
        assigns = {}
        for name, locs in _named(data["assigns"]).items():
            if not isinstance(locs, list) or not locs:
                raise TypeError("bad assignment list")
            assigns[name] = [_as_loc(v) for v in locs]
        facts = dict(_named(data["facts"]))  # each fact's `load` checks its own value
        methods = _named(data["methods"])
        if methods.keys() != classes.keys() or not all(
            isinstance(names, list) and all(isinstance(n, str) for n in names) for names in methods.values()
        ):
            raise TypeError("bad method names")
        return cls(module, digest, broken, imports, imported, fallbacks, functions, classes, assigns, facts, methods)

    # ----------------------------------------------------------------- back to a scope

    def scope(self, path: str, text: Callable[[], str | None]) -> ModuleScope | None:
        """A `ModuleScope` that parses statements from `text()` (the module's content, which
        the caller has checked against `digest`) when a rule first asks for them."""
        if self.broken:
            return None
        source = _StatementSource(path, self.module, text, self.digest)
        return ModuleScope(
            self.module,
            path,
            imports=dict(self.imports),
            assigns=_LazyTable(self.assigns, source.assigned),  # type: ignore[arg-type]
            functions=_LazyTable(self.functions, source.function),  # type: ignore[arg-type]
            classes=_ClassTable(self.classes, source.klass, self.methods),  # type: ignore[arg-type]
            imported_modules=set(self.imported_modules),
            import_fallbacks=set(self.import_fallbacks),
        )


def _by_loc(tree: ast.Module) -> dict[Loc, ast.stmt]:
    """The statements a summary locates (`ModuleSummary.of`'s walk), by location."""
    return {_loc(stmt): stmt for stmt in binding_statements(tree.body)}


def _named(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise TypeError("not a table of names")
    return value


def _str_map(value: Any) -> dict[str, str]:
    table = _named(value)
    if not all(isinstance(v, str) for v in table.values()):
        raise TypeError("not a table of strings")
    return dict(table)


def _as_loc(value: Any) -> Loc:
    if not isinstance(value, list) or len(value) != 4 or not all(type(x) is int and x >= 0 for x in value):
        raise TypeError(f"not a location: {value!r}")
    first, line, last, col = value
    if not 1 <= first <= line <= last:
        raise TypeError(f"not a location: {value!r}")
    return (first, line, last, col)


class _LazyTable(Mapping):
    """Names from the summary; each value built on first access and then kept (so a rule
    sees the same node object every time, as with an eagerly built scope)."""

    def __init__(self, locs: Mapping[str, Any], build: Callable[[str, Any], Any]):
        self._locs = locs
        self._build = build
        self._built: dict[str, Any] = {}
        # Told of every value taken (the checked module's functions and classes, which the
        # analyses of its callers record reading: `ProjectIndex.watch_bodies`).
        self.watch: Callable[[Any], None] | None = None

    def __getitem__(self, name: str) -> Any:
        value = self._built.get(name)
        if value is None:
            value = self._built[name] = self._build(name, self._locs[name])
        if self.watch is not None:
            self.watch(value)
        return value

    def __contains__(self, name: object) -> bool:
        return name in self._locs

    def __iter__(self) -> Iterator[str]:
        return iter(self._locs)

    def __len__(self) -> int:
        return len(self._locs)


class _ClassTable(_LazyTable):
    """A summarised module's classes, which also know each class's method names unbuilt."""

    def __init__(self, locs: Mapping[str, Loc], build: Callable[[str, Any], Any], methods: Mapping[str, list[str]]):
        super().__init__(locs, build)
        self._methods = methods

    def method_names(self, name: str) -> list[str] | None:
        """The summary's method names of class `name`, or None where taking the class is the
        answer: a class built already, or a table whose takings are watched (the checked
        module's: `body_reads`, which records reading all of a class's methods)."""
        if self.watch is not None or name in self._built:
            return None
        return self._methods.get(name)


def held_entry(table: Mapping[str, Any], name: str) -> Any:
    """What `table` (a scope's functions, classes or methods) holds for `name` already, without
    building it from a summary or telling a watcher: for questions of identity (is this node
    the module's own function?), which read no body."""
    if isinstance(table, _LazyTable):
        return table._built.get(name)
    return dict.get(table, name)  # a watched table's own `get` would record a read


def class_method_names(scope: ModuleScope, name: str) -> list[str]:
    """The own method names of the class `name` of `scope` (as `scope.classes[name].methods`
    lists them), from the module's summary when its scope comes from one: the class is not
    parsed for them."""
    names = getattr(scope.classes, "method_names", None)
    known = names(name) if names is not None else None
    return list(known) if known is not None else list(scope.classes[name].methods)


class _StatementSource:
    """Parses single module-level statements out of a module's text, by location."""

    def __init__(self, path: str, module: str | None, text: Callable[[], str | None], digest: str = ""):
        self.path = path
        self.module = module
        self._text = text
        self._digest = digest  # of the text: a tree parsed whole from it may still be kept
        # The text and where each of its lines starts (a kept module's text as one string:
        # a list of line strings cost ~57 bytes more per line, for every module read).
        self._lines: tuple[str, array] | None = None
        self._statements: dict[Loc, ast.stmt | None] = {}
        self._whole: ModuleScope | None = None
        self._whole_tree: ast.Module | None = None

    def function(self, name: str, loc: Loc) -> ast.FunctionDef | ast.AsyncFunctionDef:
        stmt = self.statement(loc)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
            return stmt
        return self.whole().functions[name]

    def klass(self, name: str, loc: Loc) -> ClassScope:
        stmt = self.statement(loc)
        if isinstance(stmt, ast.ClassDef) and stmt.name == name:
            return ClassScope.build(stmt)
        return self.whole().classes[name]

    def assigned(self, name: str, locs: list[Loc]) -> list[ast.expr]:
        values: list[ast.expr] = []
        for loc in locs:
            stmt = self.statement(loc)
            found = [v for n, v in assignments(stmt) if n == name] if stmt is not None else []
            if not found:
                return self.whole().assigns[name]
            values.extend(found)
        return values

    def statement(self, loc: Loc) -> ast.stmt | None:
        if loc not in self._statements:
            kept = RECENT.statement(self.path, self._digest, loc, _by_loc) if self._digest else None
            if kept is None:
                # A whole tree of this text that another reader holds (the engine's of the
                # checked file, a summary's kept for its check or a caller search).
                lines = self._source_lines()
                kept = LIVE.statement(self.path, lines[0], loc, _by_loc) if lines is not None else None
            self._statements[loc] = kept if kept is not None else self._parse(loc)
        return self._statements[loc]

    def _parse(self, loc: Loc) -> ast.stmt | None:
        first, line, last, col = loc
        lines = self._source_lines()
        if lines is None or last >= len(lines[1]):
            return None
        text, starts = lines
        chunk = text[starts[first - 1] : starts[last]]
        nested = chunk[:1] in (" ", "\t", "\f")
        if nested and first < 2:
            return None  # no line above for the `if 1:` (the module would not parse either)
        # Blank lines put the statement on its own rows (cheaper than renumbering every node
        # after the parse); a nested one goes in an `if 1:` to keep its own columns.
        source = "\n" * (first - 2) + "if 1:\n" + chunk if nested else "\n" * (first - 1) + chunk
        try:
            tree = ast.parse(source, filename=self.path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        body = tree.body[0].body if nested and tree.body and isinstance(tree.body[0], ast.If) else tree.body
        return next((s for s in body if s.lineno == line and s.col_offset == col), None)

    def _source_lines(self) -> tuple[str, array] | None:
        """The text and the offsets at which its lines start, with its length last (line n
        is `text[starts[n - 1] : starts[n]]`)."""
        if self._lines is None:
            text = self._text()
            if text is None:
                return None
            starts = array("q", [0])
            if "\r" in text:
                starts.extend(m.end() for m in _LINES.finditer(text))
            else:
                # Where `\n` is the only break, the lines `_LINES` matches end after each one:
                # their lengths summed, plus one per break, all in C (a match object per line
                # cost ~3,600 instructions: 6 M for the two modules ExecuTorch's edited
                # qualcomm tests/utils.py reads statements of).
                starts.extend(map(add, accumulate(map(len, text.split("\n")[:-1])), count(1)))
            if starts[-1] < len(text):  # a last line without a line break
                starts.append(len(text))
            self._lines = (text, starts)
        return self._lines

    def whole(self) -> ModuleScope:
        """The eagerly built scope: for statements that cannot be parsed alone."""
        if self._whole is None:
            text = self._text()
            try:
                tree = live_parse(text or "", self.path)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = ast.Module(body=[], type_ignores=[])
            self._whole = ModuleScope.build(tree, self.module, self.path)
        return self._whole
