"""A pass's own module keys the inserted op on the packet's printed name (QL102).

A node's target can be matched through the name it prints: `node.target.__name__` is the bare
op name for a packet (`fp8_gemm_v2`) and carries the overload for an overload
(`fp8_gemm_v2.default`); `node._pretty_print_target(node.target)` is `torch.ops.hpu.op` for a
packet and `torch.ops.hpu.op.default` for an overload. A module that inserts a packet and whose
own matchers compare one of those with the packet's spelling, and never with an overload's,
expects the packet there: the node it inserts is the one its consumers find (the Gaudi
bridge's fp8 replacer and its view-removal pass; its HPU backend's host-call set). The string
may be written at the comparison, in a module-level literal collection compared against, or
handed to a helper of the module that compares its parameter.
"""

from __future__ import annotations

import ast
import re

from qlint.analysis.context import FileContext
from qlint.analysis.names.op_refs import OpRef

_CMP = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COLLECTIONS = (ast.Set, ast.List, ast.Tuple)
# A module whose passes consume nodes (not one that only inserts them).
_CONSUMES = ("erase_node", "replace_all_uses_with", "replace_input_with")


def keyed_on_printed_packet(ctx: FileContext, ref: OpRef) -> bool:
    """Whether the module's own matchers find the op by the packet's printed name, and none by
    an overload's."""
    if ref.op not in ctx.words or not any(n in ctx.words for n in _CONSUMES):
        return False
    if "__name__" not in ctx.words and "_pretty_print_target" not in ctx.words:
        return False  # no printed name read anywhere in the module (torch's observer.py)
    if re.search(rf"\b{re.escape(ref.namespace)}\.{re.escape(ref.op)}\.\w", ctx.words):
        return False  # an overload of the op spelled: a matcher may key on it
    keys = _printed_keys(ctx)
    names = {s for kind, strings in keys for s in strings if _names_op(kind, s, ref)}
    if not names:
        return False
    packet = {_packet_name(kind, ref) for kind in ("name", "pretty")}
    return names <= packet


def _names_op(kind: str, text: str, ref: OpRef) -> bool:
    packet = _packet_name(kind, ref)
    return text == packet or text.startswith(packet + ".")


def _packet_name(kind: str, ref: OpRef) -> str:
    return ref.op if kind == "name" else f"torch.ops.{ref.namespace}.{ref.op}"


def _printed_keys(ctx: FileContext) -> list[tuple[str, set[str]]]:
    """(kind, the strings compared) of each comparison of a printed target name in the module."""
    cache_key = "printed-name-keys"
    if cache_key in ctx.cache:
        return ctx.cache[cache_key]
    collections = _module_collections(ctx.tree)
    helpers = _helpers(ctx.tree)
    found: list[tuple[str, set[str]]] = []
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], _CMP):
            left, right = node.left, node.comparators[0]
            for printed, other in ((left, right), (right, left)):
                kind = _printed(printed)
                if kind is not None:
                    strings = _strings(other, collections)
                    if strings:
                        found.append((kind, strings))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers:
            kind, index = helpers[node.func.id]
            if index < len(node.args):
                strings = _strings(node.args[index], collections)
                if strings:
                    found.append((kind, strings))
    ctx.cache[cache_key] = found
    return found


def _printed(expr: ast.expr) -> str | None:
    """ "name" for `x.target.__name__`, "pretty" for `x._pretty_print_target(x.target)` (or
    the function of that name), None otherwise."""
    if isinstance(expr, ast.Attribute) and expr.attr == "__name__" and _is_target(expr.value):
        return "name"
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and _is_target(expr.args[0]):
        func = expr.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name == "_pretty_print_target":
            return "pretty"
    return None


def _is_target(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Attribute) and expr.attr == "target"


def _strings(expr: ast.expr, collections: dict[str, set[str]]) -> set[str]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return {expr.value}
    if isinstance(expr, _COLLECTIONS):
        return {e.value for e in expr.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    if isinstance(expr, ast.Name):
        return collections.get(expr.id, set())
    return set()


def _module_collections(tree: ast.Module) -> dict[str, set[str]]:
    """Module-level names bound once to a literal collection of strings."""
    bound: dict[str, list[ast.expr | None]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            bound.setdefault(stmt.target.id, []).append(stmt.value)
    found = {}
    for name, values in bound.items():
        value = values[0]
        if len(values) == 1 and isinstance(value, _COLLECTIONS):
            found[name] = {e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return found


def _helpers(tree: ast.Module) -> dict[str, tuple[str, int]]:
    """Module-level `def is_node(node, name): ... node.target.__name__ == name ...`: the kind
    of printed name and the index of the parameter compared with it."""
    found = {}
    for func in tree.body:
        if not isinstance(func, _FUNCS):
            continue
        params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        for node in ast.walk(func):
            if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], _CMP)):
                continue
            for printed, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
                kind = _printed(printed)
                if kind is not None and isinstance(other, ast.Name) and other.id in params:
                    found[func.name] = (kind, params.index(other.id))
    return found
