"""torch containers that hold exported GraphModules: `nn.Sequential(gm)`, `nn.ModuleList([gm])`,
`nn.ModuleDict({"q": gm})`, or one filled later (`.append(gm)`, `.add_module("q", gm)`) (QL203).

`Module.eval()`/`.train()` switch every submodule through its own `train()`, so on torch 2.13
the container's switch reaches the graph's raising override (measured with torch 2.13 and
torchao 0.18 on graphs from `.module()`, `prepare_pt2e` and `convert_pt2e`: each of the three
containers raises NotImplementedError, as `torch.compile(gm).eval()` does). A graph allowed
first (`allow_exported_model_train_eval(gm)`, before or after it is put there) or copied
switches quietly, and so does its container. Of the project's classes only plain module
classes are followed (`graph_wrappers`): one may hold the graph outside its submodules or
define its own `eval`.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import Obj, Origin
from qlint.analysis.flow.stored_fields import passed_for

_CONTAINERS = frozenset(
    f"torch.nn.{where}{name}"
    for name in ("Sequential", "ModuleList", "ModuleDict")
    for where in ("", "modules.container.", "modules.")
)
# Methods that register a submodule: the module is their last positional argument.
_FILLS = {"append": 1, "add_module": 2, "register_module": 2, "insert": 2}


class GraphHolders:
    """The torch containers one function's walk built, with the graph values they hold."""

    __slots__ = ("fields", "held", "left")

    def __init__(self):
        self.held: dict[Obj, list[Obj]] = {}
        # Module instances of the project's classes: attribute -> the graph (or container) it holds.
        self.fields: dict[Obj, dict[str, Obj]] = {}
        # Values a helper's call left a graph in an attribute of (`left_graphs`): attribute -> the
        # graph, read back as `holder.<attr>` whatever the holder's class.
        self.left: dict[Obj, dict[str, Obj]] = {}

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

    def wrapped(self, made: Obj, fields: dict, passed: tuple) -> None:
        """`made` was built from a plain module class of the project that stores `fields`
        (`graph_wrappers.wrapper_fields`), given `passed` ((positional, keyword) objects)."""
        held = {}
        for attr, spec in fields.items():
            obj = passed_for(spec, *passed)
            if isinstance(obj, Obj) and (obj.is_graph or obj in self.held or obj in self.fields):
                held[attr] = obj
        if held:
            self.fields[made] = held

    def stored(self, holder: Obj, attr: str, obj: Obj | None, plain) -> None:
        """`holder.<attr> = obj`: a graph (or a container of one) given to a module instance
        (`plain()`: `holder` is a plain module construction of the project) or to a container
        built here; anything else stored there replaces what the attribute held."""
        if holder in self.left:
            self.left[holder].pop(attr, None)
        holds = obj is not None and (obj.is_graph or obj in self.held or obj in self.fields)
        if holds and (holder in self.fields or holder in self.held or plain()):
            self.fields.setdefault(holder, {})[attr] = obj
        elif holder in self.fields:
            self.fields[holder].pop(attr, None)

    def handed_back(self, holder: Obj, attr: str, graph: Obj, plain) -> None:
        """A helper's call left `graph` in `holder.<attr>` (`left_graphs`); the holder's switch
        reaches it when `plain()` (`holder` is a plain module construction of the project)."""
        self.left.setdefault(holder, {})[attr] = graph
        if plain():
            self.fields.setdefault(holder, {})[attr] = graph

    def read(self, holder: Obj, attr: str) -> Obj | None:
        """The graph a helper's call left in `holder.<attr>`, while nothing here replaced it."""
        return self.left[holder].get(attr) if self.left and holder in self.left else None

    def filled(self, node: ast.Call, attr: str, receiver: Obj, args: list) -> bool:
        """`holder.append(gm)` and the like on a container built here."""
        graphs = self.held.get(receiver)
        if graphs is None or _FILLS.get(attr) != len(node.args) or node.keywords:
            return False
        self._add(graphs, args[-1])
        return True

    def live(self, obj: Obj | None, env: Env) -> frozenset[Origin]:
        """Where the graphs `obj` holds came from, of those neither allowed nor copied here."""
        if obj is None or not (self.held or self.fields) or obj in env.patched:
            return frozenset()
        graphs = self._graphs(obj, 0)
        live = [g for g in graphs if g not in env.patched and g not in env.copied]
        return frozenset().union(*(g.origins for g in live)) if live else frozenset()

    def _graphs(self, obj: Obj, depth: int) -> list[Obj]:
        """The graphs `obj` holds, also through module instances it holds."""
        graphs = list(self.held.get(obj, ()))
        for held in self.fields.get(obj, {}).values():
            if held.is_graph:
                graphs.append(held)
            elif depth < 4:
                graphs.extend(self._graphs(held, depth + 1))
        return graphs

    def _add(self, graphs: list[Obj], element) -> None:
        if not isinstance(element, Obj):
            return
        if element.is_graph:
            graphs.append(element)
        else:  # a container of this walk put in another (`nn.Sequential(nn.ModuleList([gm]))`)
            graphs.extend(self._graphs(element, 0))


__all__ = ["GraphHolders"]
