"""`model = Net().apply(init_weights)`: `Module.apply(fn)` calls `fn` on every module and returns
the module it was called on (torch 2.13); when `fn` cannot switch the modules it is handed, the
result is that module in its mode.

`fn` is read when it is a lambda written in the call or a function of the project
(`helper_callees.callee`; not a method, not decorated), with one parameter. It cannot switch what it is handed
when it names no mode word (`train`, `eval`, `training`, `apply`, a part setter) and its
parameter appears only as the root of an attribute read (`nn.init.zeros_(mod.weight)`,
`mod.bias.data.fill_(0)`: parameters and buffers lead back to no module) or in a builtin that
only looks (`isinstance(mod, nn.Conv2d)`). Anything else leaves the result unknown: a function
the project does not define, the module handed to a call or bound to another name
(`helper(mod)`, `m2 = mod`), a method of the module itself (`mod.reset_parameters()`). A
function that switches is `looped_switches`' and `applied_lambdas`' (`CallSemantics._applied`).

On an exported graph `apply` hands back the graph whatever `fn` does: `.train()` does not move
its captured ops to train mode (torch 2.13 refuses it on the graph itself), only
`move_exported_model_to_train` does (`rules/moved_graphs.py` reads it so too).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow import helper_callees
from qlint.analysis.flow.read_only_params import LOOKERS

_WORDS = frozenset(
    {"train", "eval", "training", "apply", "__setattr__", "add_module", "register_module", "set_submodule"}
)
_SETTERS = frozenset({"setattr", "delattr"})


def kept_by_apply(sem, call: ast.Call, receiver) -> bool:
    """`call`, `<receiver>.apply(fn)` (`receiver` a value of the walk, or None), hands back
    `receiver` in its mode: `fn` cannot switch a module, or `receiver` is an exported graph,
    whose captured ops keep their mode whatever `fn` does (`move_exported_model_to_*` alone
    moves them: `prepared = prepared.apply(disable_observer)` is the graph)."""
    return receiver is not None and (receiver.is_graph or _switches_nothing(sem, call))


def _switches_nothing(sem, call: ast.Call) -> bool:
    if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
        return False
    fn = call.args[0]
    if not isinstance(fn, ast.Lambda):
        found = helper_callees.callee(sem, fn)
        if found is None or found[3] or not isinstance(found[1], (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        if found[1].decorator_list:
            return False  # a decorator may hand `apply` another function
        fn = found[1]
    params = fn.args
    if len(params.args) != 1 or params.posonlyargs or params.vararg or params.kwonlyargs or params.kwarg:
        return False
    return _only_read(fn, params.args[0].arg)


def _only_read(fn: ast.AST, name: str) -> bool:
    looked: set[int] = set()  # the parameter handed to `isinstance` and its kin
    rooted: set[int] = set()  # the parameter as `mod.<attr>`
    uses: list[ast.Name] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Attribute):
            if node.attr in _WORDS:
                return False
            if isinstance(node.value, ast.Name) and node.value.id == name:
                rooted.add(id(node.value))
        elif isinstance(node, ast.Name):
            if node.id in _SETTERS:
                return False
            if node.id == name:
                uses.append(node)
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in LOOKERS:
                looked.update(id(a) for a in node.args if isinstance(a, ast.Name))
            elif isinstance(node.func, ast.Attribute) and _is_name(node.func.value, name):
                return False  # `mod.reset_parameters()`: the module's own method
    return all(id(use) in rooted or id(use) in looked for use in uses)


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


__all__ = ["kept_by_apply"]
