"""Whether anything can read what one `convert_pt2e` call converts.

`convert_pt2e` rewrites the graph it is given in place and returns a module over that same
graph, and `prepare_pt2e` does the same with its input, so the converted model is reachable
through the result and through every name that held the prepared model or the graph it was
made from. When the convert is a statement of a function whose graph came from a fresh
capture in that function (`torch.export.export(...).module()`, `capture_pre_autograd_graph`;
the eager model and the program keep their weights and outputs: measured on torch 2.13 /
torchao 0.18 with a folded conv-bn) and no local name is read after it, nothing can run the
converted model: a reproduction or smoke script that only checks that prepare and convert
go through. Its quantization parameters cannot matter, so a missing calibration there is not
a bug.

Kept narrow on purpose: a convert inside a loop (the next pass may read it), in a function
with closures or `global`/`nonlocal` over its locals, or calling `locals()`/`vars()`/
`eval()`/`exec()`, and a graph that came from a parameter, an attribute or any other call
(which someone else may hold), are all treated as read.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from qlint.analysis import tree_walk
from qlint.analysis.flow.model_apis import api_kind, argument, classify_call
from qlint.analysis.names.scope import parameter_args

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_INTROSPECTION = frozenset({"locals", "vars", "eval", "exec"})
_PROGRAMS = frozenset({"capture", "load_program"})  # calls that make a new ExportedProgram
_LINEAGE = frozenset({"prepare", "convert"})  # rebinding the same graph under its own name

Qualname = Callable[[ast.expr], "str | None"]


def unread_after(func: ast.AST, convert: ast.Call, prepare: ast.Call, qualname: Qualname) -> bool:
    """Whether no code can read the model `convert` (a `convert_pt2e` call in `func`) converts,
    the model having been prepared by `prepare` (a `prepare_pt2e` call in `func`)."""
    if not isinstance(func, _FUNCTIONS):
        return False  # a module's names can be imported and read from elsewhere
    parents = tree_walk.parents(func)
    statement = parents.get(id(convert))
    if not _bare_statement(statement, convert) or not _directly_in(func, statement, parents):
        return False
    if not _fresh(argument(prepare, 0, ("model",)), func, qualname):
        return False
    # Every name the body binds, however (unpacking, loops, `with ... as`, `:=`), and the
    # parameters: any of them may hold the graph by now.
    local = {n.id for n in _own_nodes(func) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    local |= {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
    end = (statement.end_lineno, statement.end_col_offset)
    for node in ast.walk(func):
        if node is func:
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return False
        if isinstance(node, _SCOPES) and any(_reads(n, local) for n in ast.walk(node)):
            return False  # a closure may read a local whenever it is called
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _INTROSPECTION:
            return False
        if _reads(node, local) and (node.lineno, node.col_offset) > end:
            return False
    return True


def _reads(node: ast.AST, local: set[str]) -> bool:
    return isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in local


def _bare_statement(statement: ast.AST | None, convert: ast.Call) -> bool:
    """`convert_pt2e(m)` or `name = convert_pt2e(m)`: nothing else takes the result."""
    if isinstance(statement, ast.Expr):
        return statement.value is convert
    if isinstance(statement, ast.Assign):
        return statement.value is convert and all(isinstance(t, ast.Name) for t in statement.targets)
    if isinstance(statement, ast.AnnAssign):
        return statement.value is convert and isinstance(statement.target, ast.Name)
    return False


def _directly_in(func: ast.AST, statement: ast.AST, parents: tree_walk.Parents) -> bool:
    """The statement runs once per call of `func`: no loop or nested scope around it."""
    node = parents.get(id(statement))
    while node is not None and node is not func:
        if isinstance(node, (*_LOOPS, *_SCOPES)):
            return False
        node = parents.get(id(node))
    return node is func


def _fresh(model: ast.expr | None, func: ast.AST, qualname: Qualname) -> bool:
    """The graph handed to `prepare_pt2e` was made in this function and nothing else holds it:
    `program.module()` of a program captured or loaded here, or a GraphModule capture."""
    if isinstance(model, ast.Call):
        return _new_graph(model, func, qualname)
    values = _values(model, func)
    return values is not None and all(
        _new_graph(v, func, qualname) or api_kind(v, qualname) in _LINEAGE for v in values
    )


def _new_graph(call: ast.Call, func: ast.AST, qualname: Qualname) -> bool:
    callee = call.func
    if isinstance(callee, ast.Attribute) and callee.attr == "module" and not call.args and not call.keywords:
        program = callee.value
        if isinstance(program, ast.Call):
            return api_kind(program, qualname) in _PROGRAMS
        values = _values(program, func)
        return values is not None and all(api_kind(v, qualname) in _PROGRAMS for v in values)
    api = classify_call(qualname(callee), callee)
    return api is not None and api.kind == "capture" and api.returns_module


def _values(name: ast.expr, func: ast.AST) -> list[ast.Call] | None:
    """The calls a local name is bound to, when every binding is `name = call(...)`; None when
    it is a parameter or is bound any other way (unpacking, a loop, `with ... as`, `:=`)."""
    if not isinstance(name, ast.Name) or _is_parameter(name.id, func):
        return None
    own = _own_nodes(func)
    stores = [n for n in own if isinstance(n, ast.Name) and n.id == name.id and not isinstance(n.ctx, ast.Load)]
    values = []
    for statement in own:
        if isinstance(statement, ast.Assign) and any(t is s for t in statement.targets for s in stores):
            if len(statement.targets) != 1 or not isinstance(statement.value, ast.Call):
                return None
            values.append(statement.value)
        elif isinstance(statement, ast.AnnAssign) and any(statement.target is s for s in stores):
            if not isinstance(statement.value, ast.Call):
                return None
            values.append(statement.value)
    return values if values and len(values) == len(stores) else None


def _is_parameter(name: str, func: ast.AST) -> bool:
    return any(a.arg == name for a in parameter_args(func))


def _own_nodes(func: ast.AST) -> list[ast.AST]:
    """The nodes of `func` outside nested functions, lambdas and classes: its body, and its
    signature and decorators too (a name bound there makes a local's bindings unknown)."""
    return tree_walk.own_nodes(list(ast.iter_child_nodes(func)))
