"""Exported GraphModules a class keeps in `self.<attr>` and switches in another method (QL203).

`__init__` (or `quantize()`) stores `self.gm = prepare_pt2e(...)`; `calibrate()` later runs
`self.gm.eval()`, which raises on torch 2.13. The model flow reads each method alone: in
`calibrate` the attribute is one it has not seen set (`model_values.ATTRIBUTE`), and the
method names no graph source, so it is not read at all.

A field counts as a graph when every method of the class that assigns it leaves a graph
there on every path out (read from those methods' flows: `Env.vars["self.<attr>"]`), none
allows it (`allow_exported_model_train_eval(self.<attr>)` anywhere in the class keeps the
field quiet: the order of the methods' calls is not known), and no other class of the module
derives from this one (a subclass may store an eager module there). Only fields spelled
`self.<attr>.eval()`/`.train(` in the class are looked at, and fields handed as an argument
(`switch_off(self.gm)`, `run(self.gm, x)`) in a class that names a source of exported graphs:
a method handing one to a helper that switches that parameter (`FunctionFlow.field_handed`)
is reported at that call, as a graph handed to a switching helper is.
"""

from __future__ import annotations

import ast
from bisect import bisect_left

from qlint.analysis.flow.function_flows import HandedSwitch, ModeSwitch
from qlint.analysis.flow.graph_returns import GRAPH_SOURCES
from qlint.analysis.flow.inherited_methods import base_class
from qlint.analysis.flow.method_words import names_a_step
from qlint.analysis.flow.model_flow import file_flow, switchers
from qlint.analysis.flow.model_values import ATTRIBUTE, Origin, anchored
from qlint.analysis.flow.relevant_bodies import module_functions, segment, text_span
from qlint.analysis.flow.switched_callees import switched_receivers
from qlint.analysis.statement_walk import statement_lists
from qlint.analysis.tree_walk import walk_kinds
from qlint.lazy_patterns import lazy
from qlint.value_classes import replace

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# `_argument`'s spellings, every one in the text: `self.` and a name, then `,` or `)`. A name
# ends its run of word characters there, and no match overlaps another (none holds a dot
# after its name), so these are all the places `_argument` finds.
_SPELLED_ARGUMENT = lazy(r"self\.(\w+)[,)]")
# `self.<attr>` as an argument of a call: `f(self.gm)`, `f(self.gm, x)`, `f(x, self.gm)`.
_ARGUMENT = lazy(r"[(,]\s*self\.(\w+)\s*[,)]")


def field_switches(ctx, analyse) -> list[ModeSwitch | HandedSwitch]:
    """Switches of a graph field in a method that did not set it (each as a `ModeSwitch` whose
    origins are where the graph came from), and calls there that hand it to a helper that
    switches it (`HandedSwitch`). `analyse((body, class scope) list)` gives flows."""
    text = ctx.words  # as Python reads names: `self.gm.eval()` with a fullwidth `e` switches `gm`
    if "self." not in text:
        return []
    switched = {n[5:] for n in switched_receivers(text)[0] if n.startswith("self.") and n.count(".") == 1}
    handed = set(_ARGUMENT.findall(text)) if "(self." in text or ", self." in text else set()
    if not switched and not handed:
        return []
    methods: dict[int, list] = {}
    for f, cls in module_functions(ctx):
        if cls is not None and isinstance(f, _FUNCS):
            methods.setdefault(id(cls.node), []).append((f, cls))
    derived: set[str] | None = None  # a whole-tree walk: only once a class has such a field
    assigned: dict[int, frozenset[str]] = {}  # each method walked once, whatever the fields
    out: list[ModeSwitch | HandedSwitch] = []
    for members in methods.values():
        cls = members[0][1]
        text = segment(ctx, cls.node)
        fields = {name for name in switched if f"self.{name}." in text}
        in_class = _handed_in(ctx, cls.node) if handed else frozenset()
        if handed and any(s in text for s in GRAPH_SOURCES):
            fields |= handed & in_class
        # The bases of other modules are placed (their modules parsed, in the torch package
        # `nn.Module` and the test-case bases) only for a field some method of the class
        # switches or hands to a switching helper: `_switches_of` reads no other.
        foreign = _Foreign(ctx, cls.node)
        others = [n for n in handed - fields if n in in_class]
        if others and _imports_a_base(ctx, cls.node):
            # A field handed on in a class naming no graph source: only one a base of
            # another module sets is worth reading (most such classes are test cases).
            if _placing_first(ctx):
                others = [n for n in others if any(_setters(c, n, assigned) for _, c, _ in foreign.get())]
                fields |= {n for n in others if _read_here(ctx, n, text, members)}
            else:
                others = [n for n in others if _read_here(ctx, n, text, members)]
                fields |= {n for n in others if any(_setters(c, n, assigned) for _, c, _ in foreign.get())}
        if not fields:
            continue
        if ctx.words.count(cls.node.name) > 1:  # named only where defined: no class derives from it
            if derived is None:
                derived = _derived_names(ctx.tree)
            if cls.node.name in derived:
                continue
        inherited = _inherited(ctx, cls.node, methods)
        texts = [text, *(segment(ctx, base[0][1].node) for base in inherited)]
        for name in sorted(fields):
            if any(f"allow_exported_model_train_eval(self.{name})" in t for t in texts):
                continue
            out.extend(_switches_of(ctx, name, members, analyse, assigned, inherited, foreign))
    return out


class _Foreign:
    """`foreign_methods` of a class, placed at the first use."""

    def __init__(self, ctx, cls: ast.ClassDef) -> None:
        self.ctx, self.cls, self.found = ctx, cls, None

    def get(self) -> list:
        if self.found is None:
            self.found = foreign_methods(self.ctx, self.cls)
        return self.found


def _placing_first(ctx) -> bool:
    """Whether a class's bases of other modules are placed before asking which of its
    methods read a field: while `switchers` is still to be worked out in a module that
    prepares graphs, where it places every project class the module imports
    (`imported_class_methods`), those bases among them. ExecuTorch's qualcomm
    test_qnn_delegate.py: its test cases read 16 fields their base (imported) keeps as class
    attributes, which no method sets; the search of ~600 methods for the module's switchers
    was a third of QL203's time there, for no field. Elsewhere (the torch package: `nn.Module`
    and the test-case bases) the bases are placed only for a field a method reads."""
    return "model_flow.switchers" not in ctx.cache and ("prepare_pt2e" in ctx.words or "prepare_qat_pt2e" in ctx.words)


def _at_hand(ctx, foreign) -> list | None:
    """The bases of other modules of `foreign`'s class (`foreign_methods`) when knowing them
    costs no placement the question they answer would not make (`_placing_first`); else None."""
    if not isinstance(foreign, _Foreign):
        return list(foreign)
    if foreign.found is not None:
        return foreign.found
    if not _imports_a_base(ctx, foreign.cls):
        return []  # what `foreign_methods` finds then, placing nothing
    return foreign.get() if _placing_first(ctx) else None


def _read_here(ctx, name: str, text: str, members: list) -> bool:
    """Some method of the class (whose text is `text`) switches `self.<name>` or hands it to
    a switching helper."""
    attr = f"self.{name}"
    return _switches(ctx, text, attr) and any(_switches(ctx, segment(ctx, f), attr) for f, _ in members)


def _inherited(ctx, cls: ast.ClassDef, methods: dict[int, list]) -> list:
    """The methods (as `methods` holds them) of the classes of this module `cls` derives from,
    nearest first, each class once: they run on its instances too: a wrapper without its own `__init__` keeps the
    graph its base's `__init__` stored. A base named otherwise (another module's, `nn.Module`)
    is not read, as no class's unread bases are."""
    found: list = []
    pending = list(cls.bases)
    seen = {id(cls)}
    while pending:
        base = pending.pop(0)
        known = ctx.scope.classes.get(base.id) if isinstance(base, ast.Name) else None
        if known is None or id(known.node) in seen:
            continue
        seen.add(id(known.node))
        found.append(known)
        pending.extend(known.node.bases)
    return [methods[id(c.node)] for c in found if id(c.node) in methods]


def _switches_of(
    ctx, name: str, members: list, analyse, assigned: dict, inherited: list = (), foreign=()
) -> list[ModeSwitch | HandedSwitch]:
    attr = f"self.{name}"
    # Every method that may set it, the bases' included (an override that does not set the
    # field either calls the base's or leaves the field unset: counting the base's setter
    # asks only that it, too, leave a graph).
    chain = [*members, *(m for base in inherited for m in base)]
    setters = [(f, cls) for f, cls in chain if attr in segment(ctx, f) and name in _assigned(f, assigned)]
    if not setters:
        # Set by no method here: unless a base of another module sets it, nothing does, and
        # the answer below is none whichever methods read it, the costlier question.
        placed = _at_hand(ctx, foreign)
        if placed is not None and not any(_setters(c, name, assigned) for _, c, _ in placed):
            return []
    # Methods that switch the field, or hand it to a function that may switch it.
    readers = [(f, cls) for f, cls in members if _switches(ctx, segment(ctx, f), attr)]
    if not readers:
        return []
    foreign = foreign.get() if isinstance(foreign, _Foreign) else foreign
    if any(name in allowed_fields(c) for _, c, _ in foreign):
        return []  # allowed in a base of another module
    flows = analyse(setters) if setters else []
    if len(flows) != len(setters):
        return []  # a setter the flow does not read
    # A base of another module's setters, read in that module's analysis; their graphs
    # anchored at the base as this class names it (positions there mean nothing here).
    setters_elsewhere = [(owner, f, c, at) for owner, c, at in foreign for f in _setters(c, name, assigned)]
    # A setter that names no capture or PT2E step, itself or through its helpers, stores no
    # graph: the field is no graph, and the setters are not analysed (ExecuTorch's test bases).
    if not all(names_a_step(owner, f) for owner, f, _, _ in setters_elsewhere):
        return []
    elsewhere = [(owner.function(f, c), owner.scope.path, at) for owner, f, c, at in setters_elsewhere]
    if not flows and not elsewhere:
        return []  # nothing sets it
    if any(flow is None for flow, _, _ in elsewhere):
        return []
    origins: set[Origin] = set()
    for flow, path, at in [*((f, None, None) for f in flows), *elsewhere]:
        ends = [env for env, _ in flow.returns]
        values = [env.vars.get(attr) for env in ends]
        # A deep copy of a graph has the plain module's `eval`/`train` again (`handed_switches`).
        if not ends or any(
            v is None or not v.is_graph or v in env.patched or v in env.copied
            for v, env in zip(values, ends, strict=True)
        ):
            return []
        for v in values:
            origins |= v.origins if path is None else {anchored(o, at, path) for o in v.origins}
    out: list[ModeSwitch | HandedSwitch] = []
    for flow in analyse(readers):
        for switch in flow.switches:
            kinds = {(o.kind, o.name) for o in switch.origins}
            if kinds == {(ATTRIBUTE, attr)} and not switch.patched:
                out.append(replace(switch, origins=frozenset(origins)))
        for found in flow.field_handed.values():
            kinds = {(o.kind, o.name) for o in found.origins}
            if kinds == {(ATTRIBUTE, attr)}:  # the callee's flags were read at the call
                out.append(replace(found, origins=frozenset(origins)))
    return out


def foreign_methods(ctx, cls: ast.ClassDef) -> list:
    """(the `ModelFlow` of its module, its class scope, the base expression here) for each
    class of another project module that `cls` derives from, nearest first, each once: a
    subclass without its own `__init__` keeps the graph that base's `__init__` stored. Bases
    are placed as `inherited_methods` places them (a name of the module, an import of a
    project module); one placed nowhere (a library's) is not read, as in `_inherited`."""
    if not any(isinstance(b, ast.Name) and b.id in ctx.scope.imports for b in _bases_below(ctx, cls)):
        return []
    here = file_flow(ctx)
    found: list = []
    seen = {id(cls)}
    pending = [(here, base, base) for base in cls.bases]
    while pending:
        owner, base, at = pending.pop(0)
        placed = base_class(owner, base)
        if placed is None or id(placed[1].node) in seen:
            continue
        other, scope = placed
        seen.add(id(scope.node))
        if other is not here:
            found.append((other, scope, at))
        pending.extend((other, b, at) for b in scope.bases)
    return found


def allowed_fields(cls) -> frozenset[str]:
    """The fields `allow_exported_model_train_eval(self.<name>)` allows somewhere in the class
    scope `cls` (another module's: its text is not at hand, its tree is), one walk per class
    (kept on its scope, which every check of the run that reads the module shares)."""
    found = cls.__dict__.get(_ALLOWED)
    if found is None or found[0] is not cls.node:
        names = set()
        for node in walk_kinds(cls.node, _CALLS):
            if node.args and _called(node.func) == "allow_exported_model_train_eval":
                first = node.args[0]
                if isinstance(first, ast.Attribute) and getattr(first.value, "id", "") == "self":
                    names.add(first.attr)
        found = cls.__dict__[_ALLOWED] = (cls.node, frozenset(names))
    return found[1]


_ALLOWED = "_qlint_allowed_fields"
_CALLS = frozenset({ast.Call})


def _called(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _setters(cls, name: str, assigned: dict) -> list:
    return [f for f in cls.methods.values() if name in _assigned(f, assigned)]


def _bases_below(ctx, cls: ast.ClassDef) -> list[ast.expr]:
    """The bases of `cls` and of the classes of this module it derives from."""
    out, pending, seen = [], list(cls.bases), {id(cls)}
    while pending:
        base = pending.pop(0)
        out.append(base)
        known = ctx.scope.classes.get(base.id) if isinstance(base, ast.Name) else None
        if known is not None and id(known.node) not in seen:
            seen.add(id(known.node))
            pending.extend(known.node.bases)
    return out


def _imports_a_base(ctx, cls: ast.ClassDef) -> bool:
    return any(isinstance(b, ast.Name) and b.id in ctx.scope.imports for b in _bases_below(ctx, cls))


# The nodes that bind a target (`Assign`'s targets, the `target` of the others): what
# `_assigned` reads, found without walking every expression of a setter (ExecuTorch's test
# bases: 13 M of the ~850 M instructions of a one-file check of its qualcomm tests/utils.py).
_BINDERS = frozenset(
    {ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr, ast.comprehension}
)


def _assigned(func: ast.AST, memo: dict[int, frozenset[str]]) -> frozenset[str]:
    """The names `self.<name> = ...` (also augmented or annotated) sets in `func`."""
    found = memo.get(id(func))
    if found is None:
        names = set()
        for node in walk_kinds(func, _BINDERS):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    names.add(t.attr)
        found = memo[id(func)] = frozenset(names)
    return found


def _switches(ctx, text: str, attr: str) -> bool:
    """`text` switches `attr` or hands it to a function of `switchers` (computed only then:
    in a module that prepares graphs they are the project's imported helpers, placed)."""
    if f"{attr}.eval()" in text or f"{attr}.train(" in text:
        return True
    return _argument(text, attr[5:]) and any(f"{name}(" in text for name in switchers(ctx))


def _argument(text: str, name: str) -> bool:
    return f"self.{name})" in text or f"self.{name}," in text


_HANDED_AT = "graph_fields.handed_at"


def _handed_in(ctx, node: ast.AST) -> frozenset[str]:
    """The names `_argument` finds in the text of `node` (`segment`): from where the module's
    text spells one (one search per check), those starting within its rows (a spelling holds
    no line break, so one starting there ends there). A test module's classes are asked for
    each name handed on anywhere in it (ExecuTorch's qualcomm test_qnn_delegate.py: ~150
    names, two searches each of a 450 KB class)."""
    found = ctx.cache.get(_HANDED_AT)
    if found is None:
        matches = _SPELLED_ARGUMENT.finditer(ctx.words)  # at `text_span`'s offsets
        found = ctx.cache[_HANDED_AT] = [(m.start(), m.group(1)) for m in matches]
    start, end = text_span(ctx, node)
    first = bisect_left(found, (start,))
    last = bisect_left(found, (end,), first)
    return frozenset(name for _, name in found[first:last])


def _derived_names(tree: ast.Module) -> set[str]:
    """Names used as a base class somewhere in the module, from each statement's own, kept
    on it: an editor's next check reuses the unchanged statements, so only those holding the
    edit are looked into again (a test module defines a class in most of its test methods,
    all of them in one test case class)."""
    out: set[str] = set()
    for stmt in tree.body:
        out |= _base_names(stmt)
    return out


_BASE_NAMES = "_qlint_graph_fields_base_names"


def _base_names(stmt: ast.stmt) -> frozenset[str]:
    """The names the class statements in `stmt` (itself included, at any depth) derive from."""
    found = stmt.__dict__.get(_BASE_NAMES)
    if found is None:
        out = set()
        if isinstance(stmt, ast.ClassDef):
            for base in stmt.bases:
                if isinstance(base, ast.Name):
                    out.add(base.id)
                elif isinstance(base, ast.Attribute):
                    out.add(base.attr)
        for block in statement_lists(stmt):
            for inner in block:
                out |= _base_names(inner)
        found = stmt.__dict__[_BASE_NAMES] = frozenset(out)
    return found


__all__ = ["field_switches"]
