"""What the model-content reading (`class_contents`) asks of a class or function body's
syntax, from one walk of it, kept on the node.

Reading what a model holds asked each class body six to nine whole walks (its calls,
`self.training` reads, dynamic tricks, nested classes and functions, tensor stores, and
three for the torch.nn classes it names) and walked every call again under each call that
holds it; the content of a module's classes is read again at every check (a new parse),
and that of an installed class whenever a capture of one is judged. The answers depend on
the tree alone, so one walk gives them all and the node keeps them while it lives.
"""

from __future__ import annotations

import ast
from collections import Counter

from qlint.analysis.flow.delegating_evals import delegated_field
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# A class overriding these sets its mode or attributes in ways the reading does not follow.
_OWN_MODE = ("train", "eval", "__setattr__", "__getattr__")
_KEY = "_qlint_content_syntax"


class ContentSyntax:
    """`calls`: every call under the node, first met first, as walking each call of the
    `ast.walk` order in turn meets them (each once); `walked_calls`: the calls in `ast.walk`
    order; `classes`: the classes written inside
    by name (the last one written wins, as a dict built in walk order has it); `functions`:
    names of the functions written inside; `tensors`: ids of calls stored only into a
    tensor's `.data`; `references`: the capitalised names and attributes read but not
    called nor tested in a comparison (torch.nn classes handed on, built later); the
    `self.training` reads, and
    whether a class sets its mode or modules in ways not followed (`dynamic`)."""

    __slots__ = (
        "calls",
        "classes",
        "dynamic",
        "functions",
        "reads_any_training",
        "reads_training",
        "references",
        "tensors",
        "walked_calls",
    )

    def __init__(self, node: ast.AST):
        nodes = walk(node)  # `ast.walk`'s order, without the tokens none of these asks about
        found = [n for n in nodes if isinstance(n, ast.Call)]
        self.walked_calls = found  # in `ast.walk` order: what a function's reading goes through
        self.calls = _first_met(found)  # what a class's reading goes through
        inside = nodes[1:]
        self.classes = {n.name: n for n in inside if isinstance(n, ast.ClassDef)}
        self.functions = frozenset(n.name for n in inside if isinstance(n, _FUNCTIONS))
        self.tensors = _tensor_values(inside)
        self.reads_training = any(_reads_training(n) for n in nodes)
        self.reads_any_training = any(_reads_any_training(n) for n in nodes)
        self.dynamic = isinstance(node, ast.ClassDef) and _dynamic(node, nodes)
        self.references = _references(nodes, found)


def content_syntax(node: ast.AST) -> ContentSyntax:
    return kept_on_node(node, _KEY, ContentSyntax)


def calls_under(roots: list[ast.AST]) -> list[ast.Call]:
    """The calls under `roots` in the order walking each root's `ast.walk` in turn first meets
    them, each once (a call under an earlier root is met with it)."""
    return _first_met(roots)


def _first_met(roots: list[ast.AST]) -> list[ast.Call]:
    seen: set[int] = set()
    out: list[ast.Call] = []
    for root in roots:
        if id(root) in seen:
            continue  # met under an earlier root, with everything below it
        for n in walk(root):
            if isinstance(n, ast.Call) and id(n) not in seen:
                seen.add(id(n))
                out.append(n)
    return out


def _tensor_values(nodes: list[ast.AST]) -> frozenset[int]:
    """Calls whose result is stored only as a tensor's `.data` (`self.fc.weight.data = init(...)`):
    that setter takes tensors alone, so whatever the callee is, it puts no module in the model.
    Unless it is handed the model itself (`init(self)`), which it could change."""
    out: set[int] = set()
    for node in nodes:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        if not all(isinstance(t, ast.Attribute) and t.attr == "data" for t in node.targets):
            continue
        handed = [*node.value.args, *(kw.value for kw in node.value.keywords)]
        if not any(isinstance(a, ast.Name) and a.id == "self" for a in handed):
            out.add(id(node.value))
    return frozenset(out)


def _reads_training(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "training"
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
        and isinstance(node.ctx, ast.Load)
    )


def _reads_any_training(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "training" and isinstance(node.ctx, ast.Load)


def _dynamic(cls: ast.ClassDef, nodes: list[ast.AST]) -> bool:
    """Mode or modules set in ways the walk does not read: its own `train()`/`eval()`, `.training`
    of another object, `setattr` / `add_module` of a value not built in the call."""
    for node in nodes:
        # (`def eval(self): return self.model.eval()` is read: `delegating_evals`)
        if (
            isinstance(node, ast.FunctionDef)
            and node.name in _OWN_MODE
            and node in cls.body
            and not delegated_field(node)
        ):
            return True
        if _reads_any_training(node) and not _reads_training(node):
            return True
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            named = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if named in ("setattr", "add_module", "register_module") and not isinstance(node.args[-1], ast.Call):
                return True
    return False


def _references(nodes: list[ast.AST], calls: list[ast.Call]) -> tuple[ast.expr, ...]:
    """Capitalised names and attributes read and not called, nor the classes an
    `isinstance(m, nn.BatchNorm2d)` tests against (a weight initialiser builds nothing), nor
    those a comparison tests (`_compared`)."""
    called = {id(n.func) for n in calls} | _compared(nodes)
    called |= {
        id(t)
        for n in calls
        if isinstance(n.func, ast.Name) and n.func.id in ("isinstance", "issubclass")
        for a in n.args[1:]
        for t in walk(a)
    }
    out = []
    for ref in nodes:
        if id(ref) in called or not isinstance(ref, (ast.Attribute, ast.Name)) or not isinstance(ref.ctx, ast.Load):
            continue
        last = ref.attr if isinstance(ref, ast.Attribute) else ref.id
        if last[:1].isupper():
            out.append(ref)
    return tuple(out)


def _compared(nodes: list[ast.AST]) -> set[int]:
    """The classes a comparison reads, which it tests and builds nothing from: an operand
    (`type(m) is nn.Dropout`), an element of a literal operand (`type(m) in (nn.BatchNorm2d,)`),
    or an element of a literal bound to a name that is read in comparisons only (torch's
    `GraphModule.to_folder`: `safe_reprs = [nn.Linear, nn.BatchNorm2d, ...]`, then
    `type(module) in safe_reprs`). A name read anywhere else (iterated, handed to a call) may
    build what it holds."""
    operands: list[ast.expr] = []
    loads: Counter[str] = Counter()
    stores: Counter[str] = Counter()  # stores and deletions: each must be a literal's assignment
    bound: dict[str, list[ast.expr]] = {}
    for node in nodes:
        if isinstance(node, ast.Compare):
            operands.append(node.left)
            operands.extend(node.comparators)
        elif isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else stores)[node.id] += 1
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound.setdefault(node.targets[0].id, []).append(node.value)
    out = {id(e) for o in operands for e in _tested_elements(o)}
    compared = Counter(o.id for o in operands if isinstance(o, ast.Name))
    for name, count in compared.items():
        values = bound.get(name, [])
        if loads[name] != count or not values or len(values) != stores[name]:
            continue
        if all(isinstance(v, (ast.List, ast.Tuple, ast.Set)) for v in values):
            out |= {id(e) for v in values for e in _tested_elements(v)}
    return out


def _tested_elements(operand: ast.expr) -> list[ast.expr]:
    if isinstance(operand, (ast.Name, ast.Attribute)):
        return [operand]
    if isinstance(operand, (ast.List, ast.Tuple, ast.Set)):
        return [e for e in operand.elts if isinstance(e, (ast.Name, ast.Attribute))]
    return []
