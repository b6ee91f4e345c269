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
    return Outcome("skipped", f"no reference graph carries `{spelled(ident)}` (checked: {checked})")


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
