"""Calls of a local name bound once to a construction: the module built, run (issue 14, item 7).

ExecuTorch's Qualcomm test models build a torch.nn module in `forward` and call it there:

    def forward(self, x):
        adaptive_max_pool = torch.nn.AdaptiveMaxPool2d(self.output_size, self.return_indices)
        return adaptive_max_pool(x)

Reading what a model holds (`class_contents`), a call of a name held in a variable may build
anything (`block(...)`, `norm_layer(c)`), so such a model was not known in full and a caller
passing it kept the helper's finding. When the function binds the name once, by `name =
<call>`, and in no other way (no parameter, loop target, `with` target, augmented or second
assignment, in it or in a function written in it), the call runs what that call returned: the
reading judges the binding call itself (`binding`), and the call of the name adds nothing
when that one builds a class whose content is read (a torch.nn class, a class of the project).
"""

from __future__ import annotations

import ast

from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk

_KEY = "_qlint_called_locals"
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def binding(owner: ast.AST, call: ast.Call) -> ast.Call | None:
    """The call whose result `call` (one under `owner`, a class or a function) calls through a
    local name bound once to it, or None."""
    return kept_on_node(owner, _KEY, _bindings).get(id(call))


def _bindings(owner: ast.AST) -> dict[int, ast.Call]:
    out: dict[int, ast.Call] = {}
    for func in walk(owner):  # `ast.walk`'s order, tokens left out (none is asked about)
        if not isinstance(func, _FUNCTIONS):
            continue
        nodes = walk(func)
        stores: dict[str, int] = {}
        bound: dict[str, ast.Call] = {}
        for node in nodes:
            if isinstance(node, ast.arg):
                stores[node.arg] = stores.get(node.arg, 0) + 2  # a parameter: anything a caller hands in
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                stores[node.id] = stores.get(node.id, 0) + 1
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for name in node.names:
                    stores[name] = stores.get(name, 0) + 2
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call)
            ):
                bound[node.targets[0].id] = node.value
        once = {name: value for name, value in bound.items() if stores.get(name) == 1}
        if not once:
            continue
        for node in nodes:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in once:
                out.setdefault(id(node), once[node.func.id])
    return out


__all__ = ["binding"]
