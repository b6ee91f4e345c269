"""torch containers that hold exported GraphModules: `nn.Sequential(gm)`, `nn.ModuleList([gm])`,
`nn.ModuleDict({"q": gm})`, or one filled later (`.append(gm)`, `.add_module("q", gm)`) (QL203).

`Module.eval()`/`.train()` switch every submodule through its own `train()`, so on torch 2.13
the container's switch reaches the graph's raising override (measured with torch 2.13 and
torchao 0.18 on graphs from `.module()`, `prepare_pt2e` and `convert_pt2e`: each of the three
containers raises NotImplementedError, as `torch.compile(gm).eval()` does). A graph allowed
first (`allow_exported_model_train_eval(gm)`, before or after it is put there) or copied
switches quietly, and so does its container. Only torch's own containers are followed: a
class of the project may hold the graph outside its submodules or define its own `eval`.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_values import Env, Obj, Origin

_CONTAINERS = frozenset(
    f"torch.nn.{where}{name}"
    for name in ("Sequential", "ModuleList", "ModuleDict")
    for where in ("", "modules.container.", "modules.")
)
# Methods that register a submodule: the module is their last positional argument.
_FILLS = {"append": 1, "add_module": 2, "register_module": 2, "insert": 2}


class GraphHolders:
    """The torch containers one function's walk built, with the graph values they hold."""

    __slots__ = ("held",)

    def __init__(self):
        self.held: dict[Obj, list[Obj]] = {}

    def built(self, name: str | None, node: ast.Call, container: Obj, args: list, literals: dict[int, list]) -> None:
        """`container` was built at `node` (`name`: the class called; `args`: the positional
        arguments' values; `literals`: the elements of the literals read so far)."""
        if name not in _CONTAINERS:
            return
        graphs: list[Obj] = []
        for obj, expr in zip(args, node.args, strict=True):
            if isinstance(expr, ast.Starred):
                continue
            elements = literals.get(id(expr)) if isinstance(expr, (ast.List, ast.Tuple, ast.Dict)) else [obj]
            for element in elements or ():
                self._add(graphs, element)
        self.held[container] = graphs

    def filled(self, node: ast.Call, attr: str, receiver: Obj, args: list) -> bool:
        """`holder.append(gm)` and the like on a container built here."""
        graphs = self.held.get(receiver)
        if graphs is None or _FILLS.get(attr) != len(node.args) or node.keywords:
            return False
        self._add(graphs, args[-1])
        return True

    def live(self, obj: Obj | None, env: Env) -> frozenset[Origin]:
        """Where the graphs `obj` holds came from, of those neither allowed nor copied here."""
        graphs = self.held.get(obj) if obj is not None and self.held else None
        if not graphs or obj in env.patched:
            return frozenset()
        live = [g for g in graphs if g not in env.patched and g not in env.copied]
        return frozenset().union(*(g.origins for g in live)) if live else frozenset()

    def _add(self, graphs: list[Obj], element) -> None:
        if not isinstance(element, Obj):
            return
        if element.is_graph:
            graphs.append(element)
        else:  # a container of this walk put in another (`nn.Sequential(nn.ModuleList([gm]))`)
            graphs.extend(self.held.get(element, ()))


__all__ = ["GraphHolders"]
