"""Op references: what a qualified name under `torch.ops` (or ExecuTorch's edge dialect)
denotes, an `OpOverloadPacket` or one of its overloads (`OpRef`), checked against the op table.

Apart from the resolver (`resolver.Resolver.op_ref` resolves an expression's name, then asks
here) because it reads only a name's spelling and the op table, not a scope.
"""

from __future__ import annotations

from qlint.optable import OpTable
from qlint.value_classes import value_class

_TORCH_OPS = "torch.ops."
# `torch.ops` is the object `torch._ops` binds as `ops` (torch's `__init__` imports it from
# there), so `torch._ops.ops.aten.relu` is the packet `torch.ops.aten.relu`.
_TORCH_PRIVATE_OPS = "torch._ops.ops."
_TORCH_ROOTS = (_TORCH_OPS, _TORCH_PRIVATE_OPS)
EXIR_DIALECTS = "executorch.exir.dialects"
_EDGE_OPS = EXIR_DIALECTS + "._ops.ops.edge."
# Namespaces under torch.ops whose members are not OpOverloadPackets.
_NOT_PACKET_NAMESPACES = frozenset({"higher_order"})
# Attributes of a packet that are not overloads.
_PACKET_ATTRS = frozenset(
    {
        "overloads",
        "name",
        "op",
        "_op",
        "_qualified_op_name",
        "_schemas",
        "_dir",
        "__name__",
        "_has_torchbind_op_overload",
    }
)


@value_class(frozen=True)
class OpRef:
    namespace: str
    op: str
    overload: str | None  # None: the OpOverloadPacket itself
    dialect: str = "aten"  # "aten" for torch.ops, "edge" for exir_ops.edge

    @property
    def is_packet(self) -> bool:
        return self.overload is None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.dialect, self.namespace, self.op)

    def spelled(self) -> str:
        base = f"{self.namespace}.{self.op}"
        return base if self.overload is None else f"{base}.{self.overload}"


def parse_op(optable: OpTable, name: str) -> OpRef | None:
    """The op reference a qualified name spells (`torch.ops.aten.add.Tensor`,
    `torch._ops.ops.aten.add`, `exir_ops.edge`'s `executorch.exir.dialects._ops.ops.edge.*`), or
    None. An overload the op table knows the op lacks is no reference; for an op it does not
    know, a packet's attribute or private name is none either."""
    if name.startswith(_TORCH_ROOTS):  # one test for both spellings: most names are neither
        root = _TORCH_OPS if name.startswith(_TORCH_OPS) else _TORCH_PRIVATE_OPS
        parts, dialect = name[len(root) :].split("."), "aten"
    elif name.startswith(_EDGE_OPS):
        parts, dialect = name[len(_EDGE_OPS) :].split("."), "edge"
    else:
        return None
    if len(parts) < 2 or len(parts) > 3 or parts[0] in _NOT_PACKET_NAMESPACES:
        return None
    ns, op = parts[0], parts[1]
    if op.startswith("__") or op in _PACKET_ATTRS:
        return None
    if len(parts) == 2:
        return OpRef(ns, op, None, dialect)
    overload = parts[2]
    info = optable.lookup(ns, op)
    if info is not None:
        if overload not in info.overloads:
            return None
    elif overload in _PACKET_ATTRS or overload.startswith("_"):
        return None
    return OpRef(ns, op, overload, dialect)
