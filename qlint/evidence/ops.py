"""Evidence of QL101, QL102: packets that meet FX node targets or are inserted into graphs."""

from __future__ import annotations

from qlint.evidence import Evidence, one_of
from qlint.value_classes import value_class


@value_class(frozen=True)
class OpRef(Evidence):
    """An op as written: `torch.ops.<namespace>.<op>[.<overload>]`, or an ExecuTorch edge op."""

    namespace: str
    op: str
    overload: str | None = None
    dialect: str | None = None  # "edge" for `exir_ops.edge...`, None for torch.ops


@value_class(frozen=True)
class OpEvidence(Evidence):
    """A packet that meets FX node targets (`kind`: how) or is inserted into a graph
    (`kind == "insertion"`), with what the op table says about its overloads."""

    kind: str  # "comparison", "collection" (an element of a set, dict or case) or "insertion"
    ops: tuple[OpRef, ...]
    carried: tuple[str, ...] = ()
    overloads: tuple[str, ...] = ()
    # A packet keyed beside overloads of its own op (`sibling_overloads`): those overloads
    # (`siblings`, the table's and the same function's comparisons'), and the ones graphs
    # carry that they leave to the packet (`missed`), which the fix keys on. Empty otherwise.
    siblings: tuple[str, ...] = ()
    missed: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        one_of(self.kind, ("comparison", "collection", "insertion"), "OpEvidence.kind")
