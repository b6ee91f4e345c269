"""Which names of a function body hold a model that is given parts or hooks there: a store on
it or on what it holds (`model.fc = head`, `model[0] = ...`, `setattr(model, ...)`), or a call
of a method that gives it some (`model.add_module(...)`, `model.register_forward_hook(...)`).

Two readings of the same stores. The lax one (`changed_roots`, node by node) is what the capture
rules weigh a capture by (`model_changes.BodyIndex`): there a number or a string set on a
model is no part, and the body's own code is walked apart from the functions written in it,
which are bodies of their own. The strict one (`given_names`) is what reading a loop over a
model's direct children as its switch must rule out (`direct_children`): anything that may
leave the model holding more than its build made, so every store counts (a plain value, a
`del`, an unpacking), so do the methods of torch.nn's containers that add a module
(`model.layers.append(...)`), and so does the code of functions written in the body, which
may run on the model at any time.
"""

from __future__ import annotations

import ast

from qlint.analysis.node_memo import kept_on_node

# Methods that give a model parts or hooks.
CHANGES = frozenset(
    {"add_module", "register_module", "set_submodule", "register_forward_hook", "register_forward_pre_hook", "apply"}
)
# With the methods of torch.nn's containers that add a submodule (`nn.ModuleList.append`,
# `nn.ModuleDict.update`, `nn.Sequential.insert`, ...): the strict reading's calls.
ADDING = CHANGES | {"append", "extend", "insert", "update", "__setattr__", "__setitem__"}


def changed_roots(node: ast.AST) -> list[str]:
    """The names whose model this node gives parts or hooks (`m.fc = ...`, `setattr(m, ...)`)."""
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        # A number or a string set on it (`model.model_name = "vit"`) is no part.
        plain = _plain_value(node.value)
        return [
            r
            for t in targets
            if isinstance(t, (ast.Attribute, ast.Subscript))
            and not (plain and isinstance(t, ast.Attribute))
            and (r := model_root(t)) is not None
        ]
    if isinstance(node, ast.Call):
        return _called_roots(node, CHANGES)
    return []


def given_names(fn: ast.AST) -> frozenset[str]:
    """The names of `fn` whose model may be given a part, strictly read (see above); read once
    per body, when a loop over a model's children is weighed."""
    return kept_on_node(fn, _GIVEN, _given_names)


def given_to(fn: ast.AST, over: ast.expr) -> bool:
    """Whether `fn` may give the model named as `over` (`model`, `model.body`, `model.layers[0]`)
    a part, strictly read; a model reached otherwise (through a call) may be given one anywhere."""
    while isinstance(over, (ast.Attribute, ast.Subscript)):
        over = over.value
    return not isinstance(over, ast.Name) or over.id in given_names(fn)


def model_root(node: ast.AST) -> str | None:
    """`model` of `model`, `model.body`, `model.layers[0]`, `getattr(model, name)`."""
    while True:
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif _getattr_call(node):
            node = node.args[0]  # `getattr(model, name)`: a part of `model`, as `model.bn` is
        else:
            return node.id if isinstance(node, ast.Name) else None


_GIVEN = "_qlint_given_names"


def _given_names(fn: ast.AST) -> frozenset[str]:
    out: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Load):
            root = model_root(node.value)
            if root is not None:
                out.add(root)
        elif isinstance(node, ast.Call):
            out.update(_called_roots(node, ADDING))
    return frozenset(out)


def _called_roots(call: ast.Call, methods: frozenset[str]) -> list[str]:
    """The name whose model `call` gives a part: `setattr(model, ...)`, or one of `methods`
    called on it or on what it holds."""
    func = call.func
    if isinstance(func, ast.Name) and func.id == "setattr":
        root = model_root(call.args[0]) if call.args else None
    elif isinstance(func, ast.Attribute) and func.attr in methods:
        root = model_root(func.value)
    else:
        return []
    return [root] if root is not None else []


def _plain_value(value: ast.expr | None) -> bool:
    """A constant, an f-string, or a tuple of those: never a module (None removes a part)."""
    if isinstance(value, ast.Tuple):
        return all(_plain_value(e) for e in value.elts)
    return isinstance(value, (ast.Constant, ast.JoinedStr))


def _getattr_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) in (2, 3)
        and not node.keywords
    )


__all__ = ["ADDING", "CHANGES", "changed_roots", "given_names", "given_to", "model_root"]
