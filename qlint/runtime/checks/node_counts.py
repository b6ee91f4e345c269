"""What QL101's runtime checks count on reference graphs (worker side): the nodes of an op,
the overloads they carry, and whether a matcher's objects match a node target."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import torch

from qlint.runtime import graphs
from qlint.runtime.ops import OpId, op_id, spelled


@dataclass
class Outcome:
    verdict: str  # confirmed | refuted | skipped
    evidence: str
    fix_verified: bool | None = None


def no_graph(ident: OpId, forms: list[graphs.GraphForm]) -> Outcome:
    """The verdict when none of the reference graphs `forms` carries the op."""
    checked = ", ".join(f.label for f in forms) or "none"
    text = f"no reference graph carries `{spelled(ident)}` (checked: {checked})"
    if decomposed := _decomposed_by_to_edge(ident):
        # Not a form qlint lacks: the default lowering never leaves the op, so the packet and
        # the fix alike have no node to match, unless a partitioner keeps the op.
        text += (
            f": to_edge decomposes {', '.join(f'`aten.{ident.op}.{o}`' for o in decomposed)} (ExecuTorch's "
            "default decomposition table), so an edge graph carries it only where a partitioner keeps it "
            "from decomposition (`to_edge_transform_and_lower`)"
        )
    return Outcome("skipped", text)


def _decomposed_by_to_edge(ident: OpId) -> list[str]:
    """The ATen op's graph overloads (dispatched, not out=) when to_edge decomposes every one."""
    if ident.dialect != "edge" or ident.namespace != "aten":
        return []
    try:
        from executorch.exir.tracer import _default_decomposition_table

        packet = getattr(torch.ops.aten, ident.op)
        named = [o for o in packet.overloads() if o != "out" and not o.endswith("_out")]
        graph_overloads = [
            o for o in named if torch._C._dispatch_has_kernel(f"aten::{ident.op}" + ("" if o == "default" else f".{o}"))
        ]
        table = _default_decomposition_table()
        decomposed = [o for o in graph_overloads if getattr(packet, o) in table]
    except Exception:  # executorch missing, or its private table moved: nothing more to say
        return []
    return decomposed if graph_overloads and decomposed == graph_overloads else []


def graph_count(n: int) -> str:
    return "1 reference graph" if n == 1 else f"{n} reference graphs"


def forms_text(overloads: Counter) -> str:
    """`.default`, or `packets x2, .default x2` when a graph carries several forms."""
    many = len(overloads) > 1
    return ", ".join(("packets" if o is None else f"`.{o}`") + (f" x{n}" if many else "") for o, n in overloads.items())


def matches(target: Any, objs: list[Any], kind: str) -> bool:
    if kind == "comparison":
        return any(target == obj for obj in objs)
    return target in frozenset(objs)  # set, dict key and `in` over a literal agree here


def nodes_of(form: graphs.GraphForm, key: tuple[str, str, str]) -> list[torch.fx.Node]:
    return [n for n in form.call_function_nodes() if (i := op_id(n.target)) is not None and i.same_op == key]


def overloads_of(nodes: list[torch.fx.Node]) -> Counter:
    return Counter(op_id(n.target).overload for n in nodes)
