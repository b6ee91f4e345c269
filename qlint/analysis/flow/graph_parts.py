"""Exported GraphModules held in a part of a local value: `holder.gm = prepare_pt2e(...)`,
`pair = (gm, model)`, `graphs = {"q": convert_pt2e(p)}`, read back as `holder.gm`,
`pair[0]`, `graphs["q"]` in the same function (QL203: `pair[0].eval()` raises as `gm.eval()`).

A part is kept as a name of its own in `Env.vars` (`holder.gm`, `pair[0]`, `graphs['q']`), so
paths join it as they join names; a path that does not bind it drops it at the join
(`model_env.partial_key`). Only graphs are kept: every other part reads as before, so the modes QL201 and
QL202 judge are untouched. A part is forgotten when its root is rebound, handed to a call, or
changed by a method of its own (`insert`, `pop`, `update`, ...), which may put something else
there; `append`/`extend` and reads keep it.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_env import Env, partial_key
from qlint.analysis.flow.model_values import Obj

# Methods of a list or dict that leave the parts already there where they were.
_KEEPING = frozenset({"append", "extend", "get", "items", "values", "keys", "index", "count", "copy"})


def part_key(e: ast.expr) -> str | None:
    """`root.attr` or `root[<int or str constant>]` of a local name (`self.<attr>` is a name of
    its own already: `model_apis.key`)."""
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id not in ("self", "cls"):
        return f"{e.value.id}.{e.attr}"
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name):
        index = e.slice  # `pair[-1]` names another element once the list grows: not followed
        value = index.value if isinstance(index, ast.Constant) else None
        if type(value) is str or (type(value) is int and value >= 0):
            return f"{e.value.id}[{value!r}]"
    return None


class GraphParts:
    """The parts holding graphs one function's walk has seen stored, by root name."""

    __slots__ = ("roots",)

    def __init__(self):
        self.roots: dict[str, set[str]] = {}

    def read(self, e: ast.expr, env: Env) -> Obj | None:
        if not self.roots:
            return None
        name = part_key(e)
        return env.vars.get(name) if name is not None else None

    def stored(self, target: ast.expr, obj: Obj | None, env: Env) -> None:
        """`root.attr = value` / `root[k] = value`."""
        name = part_key(target)
        if name is None:
            return
        if obj is not None and obj.is_graph:
            self._keep(name, target.value.id, obj, env)
        elif name in env.vars:
            del env.vars[name]

    def literal(self, name: str, value: ast.expr, elements: list | None, env: Env) -> None:
        """`name = (gm, model)` / `[gm]` / `{"q": gm}`: the graphs among its elements
        (`elements`: what `loop_items.Containers` read of the literal, in order)."""
        if elements is None or len(elements) != len(value.values if isinstance(value, ast.Dict) else value.elts):
            return  # a spread: positions and keys are not known
        keys = value.keys if isinstance(value, ast.Dict) else [None] * len(elements)
        for position, (k, element) in enumerate(zip(keys, elements, strict=True)):
            if not isinstance(element, Obj) or not element.is_graph:
                continue
            if isinstance(value, ast.Dict):
                if not (isinstance(k, ast.Constant) and type(k.value) in (int, str)):
                    continue
                self._keep(f"{name}[{k.value!r}]", name, element, env)
            elif not isinstance(value, ast.Set):
                self._keep(f"{name}[{position!r}]", name, element, env)

    def hold(self, root: str, suffix: str, obj: Obj, env: Env) -> None:
        """`root<suffix>` (`out['model']`) holds the graph `obj` (`left_graphs.bound_parts`)."""
        self._keep(f"{root}{suffix}", root, obj, env)

    def fields_of(self, root: str, env: Env) -> dict[str, Obj] | None:
        """The graphs held in attributes of `root` (`runner.gm`), by attribute; None: none."""
        parts = self.roots.get(root) if self.roots else None
        if not parts:
            return None
        prefix = f"{root}."
        out = {p[len(prefix) :]: env.vars[p] for p in parts if p.startswith(prefix) and p in env.vars}
        return out or None

    def handed_fields(self, node: ast.Call, env: Env) -> dict[int, dict[str, Obj]]:
        """id(argument) -> the graphs held in its attributes, for each plain name `node` is
        handed (`set_train(h)` after `h.core = gm`), before the call touches them."""
        out = {}
        for arg in (*node.args, *(kw.value for kw in node.keywords)):
            if isinstance(arg, ast.Name) and (held := self.fields_of(arg.id, env)):
                out[id(arg)] = held
        return out

    def rebound(self, name: str, env: Env) -> None:
        """`name` names another value now: its parts are gone."""
        parts = self.roots.pop(name, None) if self.roots else None
        for part in parts or ():
            env.vars.pop(part, None)

    def touched(self, node: ast.Call, env: Env) -> None:
        """A call that may change a root's parts: handed the root, or a method of the root."""
        if not self.roots:
            return
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr not in _KEEPING:
            self.rebound(func.value.id, env)
        for arg in (*node.args, *(kw.value for kw in node.keywords)):
            value = arg.value if isinstance(arg, ast.Starred) else arg
            if isinstance(value, ast.Name):
                self.rebound(value.id, env)

    def _keep(self, name: str, root: str, obj: Obj, env: Env) -> None:
        env.vars[name] = obj
        self.roots.setdefault(root, set()).add(name)


__all__ = ["GraphParts", "part_key", "partial_key"]
