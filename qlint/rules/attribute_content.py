"""Whether a `self.<attr>` model holds what its one construction says, for `mode_free`.

A model kept in an attribute (`self.model = Lin()` in `__init__`, captured in `quantize()`)
is as mode-free as a local construction only when nothing else can reach it: no second
assignment, no part given to it (`add_module`, `setattr`, `self.model.bn = ...` but a
construction the class gives it, judged with it: `Built.given`), no hand-over
to a helper that may give it parts, no alias through which any of that may happen, and no
write of an attribute of that name anywhere else in the module (from outside the class, or
by a subclass). Any such use and the attribute's content is not known: the capture stays
reported. Subclasses and writes in other modules are not seen (as for an attribute put in
eval mode in `__init__`, which the mode analysis already trusts).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_apis import last_name, mode_call
from qlint.analysis.flow.model_flow import STORED, Origin
from qlint.analysis.node_memo import kept_on_node

# Calls that take a model without giving it parts (`model_changes.READS`) and methods that
# give it parts or hooks (`given_parts.CHANGES`): passed in to keep one list of each.


def kept_source(tree: ast.Module, origin: Origin, reads: frozenset[str], changes: frozenset[str]) -> Origin | None:
    """The construction in its class of the attribute read `origin` when nothing in the module
    can have replaced it or given it parts; else None."""
    source = origin.source
    cls = _class_of(tree, origin.node)
    if source is None or source.kind == STORED or cls is None or not origin.name.startswith("self."):
        # A stored `__init__` parameter is what the class's constructions pass, some perhaps in
        # other modules: the caller verdicts (`vouched_by_callers`) weigh those, not this.
        return None
    attr = origin.name.removeprefix("self.")
    kept = 0
    for node, parents in _uses(tree).get(attr, ()):
        if node is _BY_NAME:
            return None
        if not isinstance(node.ctx, ast.Load):
            if not _the_source(node, parents, cls, source):
                return None
            kept += 1
        elif not _read_only(node, parents, reads, changes) and not _given(node, parents, source):
            return None
    return source if kept == 1 else None


def _given(node: ast.Attribute, parents: tuple, source: Origin) -> bool:
    """`self.<attr>.<part> = <construction>`, one of the parts the flow read as given to the
    construction in its class (`Built.given`, `model_attrs.given_parts`): judged with it."""
    given = getattr(source.built, "given", ())
    if not given or len(parents) < 2:
        return False
    part, assign = parents[0], parents[1]
    return (
        isinstance(part, ast.Attribute)
        and part.value is node
        and isinstance(part.ctx, ast.Store)
        and isinstance(assign, (ast.Assign, ast.AnnAssign))
        and any(b.call is assign.value for b in given)
    )


def _class_of(tree: ast.Module, method: ast.AST) -> ast.ClassDef | None:
    """The class of the checked module whose body holds `method` (a method of another module's
    class is not judged: its module is not read here)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(s is method for s in node.body):
            return node
    return None


def _the_source(node: ast.Attribute, parents: tuple, cls: ast.ClassDef, source: Origin) -> bool:
    """`self.<attr> = <the construction>` (or `= <it>.eval()`) in a method of `cls`, the
    assignment's only target."""
    assign = parents[0]
    if not (
        isinstance(assign, ast.Assign)
        and assign.targets == [node]
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    ):
        return False
    methods = [s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not any(any(n is assign for n in ast.walk(m)) for m in methods):
        return False
    value = assign.value
    switched = mode_call(value)
    return value is source.node or (switched is not None and switched[0] is source.node)


def _read_only(node: ast.Attribute, parents: tuple, reads: frozenset[str], changes: frozenset[str]) -> bool:
    """A read of the model that cannot give it parts: called (`self.model(x)`), a method of it
    or of its parts called (`self.model.eval()`, `self.model.fc.parameters()`, not `add_module`
    or a hook), handed to a capture or a copy, compared. A store into a part, a hand-over to
    another call, or an alias (`m = self.model`, `return self.model`) may change it."""
    top, i = node, 0
    while i < len(parents) and isinstance(parents[i], (ast.Attribute, ast.Subscript)) and parents[i].value is top:
        top, i = parents[i], i + 1
    if not isinstance(top.ctx, ast.Load):
        return False  # `self.model.bn = ...`, `del self.model[0]`
    parent = parents[i] if i < len(parents) else None
    if isinstance(parent, ast.Call) and parent.func is top:
        return not (isinstance(top, ast.Attribute) and top is not node and top.attr in changes)
    if isinstance(parent, (ast.Starred, ast.keyword)):
        i += 1
        parent = parents[i] if i < len(parents) else None
    if isinstance(parent, ast.Call):
        return last_name(parent.func) in reads
    return isinstance(parent, ast.Compare)


_SETS = frozenset({"setattr", "add_module", "register_module", "set_submodule"})
_BY_NAME = ast.Attribute(value=ast.Name(id="", ctx=ast.Load()), attr="", ctx=ast.Store())  # a write by name


def _uses(tree: ast.Module) -> dict[str, list[tuple[ast.Attribute, tuple]]]:
    """Each attribute name -> its occurrences in the module, with their parents (nearest first,
    up to the statement). One walk per parse, asked only for attribute captures judged mode-free."""
    return kept_on_node(tree, "_qlint_attribute_uses", _index)


def _index(tree: ast.Module) -> dict[str, list[tuple[ast.Attribute, tuple]]]:
    found: dict[str, list[tuple[ast.Attribute, tuple]]] = {}
    # The module is no one's parent here: the index is kept on it (`node_memo`), and naming it
    # would be a cycle holding the whole tree. No verdict reads past a statement.
    stack: list[tuple[ast.AST, tuple]] = [(statement, ()) for statement in tree.body]
    while stack:
        node, parents = stack.pop()
        if isinstance(node, ast.Attribute):
            found.setdefault(node.attr, []).append((node, parents))
        elif isinstance(node, ast.Call) and last_name(node.func) in _SETS:
            # `setattr(self, "model", ...)`, `self.add_module("model", ...)`: a write by name.
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.setdefault(arg.value.split(".")[0], []).append((_BY_NAME, parents))
        inner = (node, *parents[:7])  # a longer chain of parts is not judged (not read only)
        for child in ast.iter_child_nodes(node):
            stack.append((child, inner))
    return found
