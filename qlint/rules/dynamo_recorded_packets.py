"""QL101: which packets a matcher run on Dynamo's output graph can meet there.

Dynamo records what the traced code called. A model calling `torch.matmul`, `F.softmax`
or `x.bmm(y)` leaves those functions and method names as node targets, never an ATen
packet: only a call of the packet itself (`torch.ops.aten.matmul(a, b)`) records the packet
(a call of an overload records the overload). A custom op is called as its packet by the
models it was written for, and Dynamo inserts a few ATen packets itself (a symbolic storage
offset is bound by `aten.sym_storage_offset`). Checked on torch 2.13 with a recording
backend; the same holds for `prims`.

So a pass the project runs on Dynamo's graph (`dynamo_graph_passes`) is right to key on a
custom-namespace packet, and on an ATen or prims packet only where the project calls that
packet itself, read off its modules' texts as QL101's own-op reading reads them. Keyed on
`aten.matmul` with no such call (cgcengine's attention-to-KDA pass), it never matches: the
finding stands.
"""

from __future__ import annotations

from qlint.analysis.graphs.dynamo_graph_passes import sees_dynamo_graph
from qlint.analysis.names.functions import Body
from qlint.rules.base import FileContext
from qlint.rules.own_op_matchers import OpSpellings, op_texts

# Namespaces whose ops models reach through torch's functions and tensor methods.
_TORCH_NAMESPACES = frozenset({"aten", "prims"})
# Packets Dynamo makes nodes of itself (`OutputGraph`'s bindings of symbolic sizes).
_DYNAMO_OWN = frozenset({("aten", "sym_storage_offset")})
_CACHE_KEY = "ql101.dynamo-recorded"


def matched_on_dynamo_graph(ctx: FileContext, body: Body | None, key: tuple[str, str, str]) -> bool:
    """Whether the function `body` runs on Dynamo's graph, where the packet `key` (dialect,
    namespace, op) is a node target it can meet (above)."""
    return sees_dynamo_graph(ctx, body) and _recorded(ctx, key)


def _recorded(ctx: FileContext, key: tuple[str, str, str]) -> bool:
    dialect, namespace, op = key
    if dialect != "aten" or namespace not in _TORCH_NAMESPACES or (namespace, op) in _DYNAMO_OWN:
        return True
    memo = (_CACHE_KEY, key)
    if memo not in ctx.cache:
        spellings = OpSpellings(namespace, op)
        ctx.cache[memo] = any(spellings.called(text) for _, text, _ in op_texts(ctx, op))
    return ctx.cache[memo]
