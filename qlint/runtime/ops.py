"""Ops on the installed registry (worker side): resolve a finding's op, identify node targets.

A finding names an op as (namespace, op, overload, dialect): `torch.ops.<ns>.<op>` for the
"aten" dialect (any torch.ops namespace), `exir_ops.edge.<ns>.<op>` for ExecuTorch's edge
dialect. Namespaces under `torch.ops` are created on attribute access, so only an op lookup
proves that an op exists; ops of ExecuTorch namespaces appear once executorch is imported.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class OpId:
    """What a node target is, independent of its Python object: op, overload (None for a
    packet) and dialect."""

    dialect: str
    namespace: str
    op: str
    overload: str | None

    @property
    def same_op(self) -> tuple[str, str, str]:
        return (self.dialect, self.namespace, self.op)


@functools.cache
def executorch_ops():
    """`exir_ops` (importing it registers ExecuTorch's op namespaces), or None."""
    try:
        from executorch.exir.dialects._ops import ops as exir_ops
    except Exception:
        return None
    return exir_ops


def _edge_types() -> tuple[type, ...]:
    if executorch_ops() is None:
        return ()
    from executorch.exir.dialects.edge._ops import EdgeOpOverload, EdgeOpOverloadPacket

    return (EdgeOpOverload, EdgeOpOverloadPacket)


def op_id(target: Any) -> OpId | None:
    """Identify an FX node target; None for Python callables such as `operator.getitem`."""
    edge = _edge_types() if type(target).__module__.startswith("executorch") else ()
    dialect = "edge" if edge and isinstance(target, edge) else "aten"
    if dialect == "edge" and hasattr(target, "_op") and not hasattr(target, "_qualified_op_name"):
        inner = target._op
        return OpId("edge", inner.namespace, inner._opname, inner._overloadname)
    qualified = getattr(target, "_qualified_op_name", None)
    if isinstance(qualified, str) and "::" in qualified:
        namespace, op = qualified.split("::", 1)
        return OpId(dialect, namespace, op, None)
    if isinstance(target, torch._ops.OpOverload):
        return OpId("aten", target.namespace, target._opname, target._overloadname)
    return None


def is_packet(obj: Any) -> bool:
    ident = op_id(obj)
    return ident is not None and ident.overload is None


class UnknownOp(LookupError):
    pass


def resolve(namespace: str, op: str, overload: str | None = None, dialect: str = "aten") -> Any:
    """The object `torch.ops.<ns>.<op>[.<overload>]` (or its edge dialect form) denotes."""
    if dialect == "edge":
        exir_ops = executorch_ops()
        if exir_ops is None:
            raise UnknownOp("executorch is not installed, so the edge dialect is unavailable")
        root = exir_ops.edge
    else:
        root = torch.ops
    packet = _lookup(root, namespace, op)
    if packet is None and dialect == "aten" and executorch_ops() is not None:
        # Importing exir (just done) registers ExecuTorch's namespaces and extra ops.
        packet = _lookup(root, namespace, op)
    if packet is None:
        raise UnknownOp(_spelled(namespace, op, None, dialect))
    if overload is None:
        return packet
    try:
        return getattr(packet, overload)
    except (AttributeError, RuntimeError):
        raise UnknownOp(_spelled(namespace, op, overload, dialect)) from None


def _lookup(root: Any, namespace: str, op: str) -> Any:
    try:
        return getattr(getattr(root, namespace), op)
    except (AttributeError, RuntimeError):
        return None


def _spelled(namespace: str, op: str, overload: str | None, dialect: str) -> str:
    base = "exir_ops.edge" if dialect == "edge" else "torch.ops"
    return f"{base}.{namespace}.{op}" + (f".{overload}" if overload else "")


def spelled(ident: OpId) -> str:
    return _spelled(ident.namespace, ident.op, ident.overload, ident.dialect)
