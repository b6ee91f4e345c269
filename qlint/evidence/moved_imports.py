"""Evidence of QL401: names that left `torch.ao.quantization`."""

from __future__ import annotations

from qlint.evidence import Evidence
from qlint.value_classes import value_class


@value_class(frozen=True)
class Move(Evidence):
    """A name that left `torch.ao.quantization`: where it went (None: nowhere) and how the
    rule's fix treats it."""

    old: str
    new: str | None = None
    fix: str | None = None


@value_class(frozen=True)
class MovedImportEvidence(Evidence):
    moves: tuple[Move, ...]
    kind: str = "moved-import"
