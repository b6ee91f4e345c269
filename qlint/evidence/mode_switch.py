"""Evidence of QL203: `.eval()`/`.train()` on exported graphs."""

from __future__ import annotations

from qlint.evidence import Evidence, one_of
from qlint.value_classes import value_class


@value_class(frozen=True)
class ModeSwitchEvidence(Evidence):
    """`.eval()`/`.train()` on a GraphModule that came from `origin` (export, prepare, ...);
    `mode` is None for `.train(flag)` with a flag known only at run time."""

    mode: str | None
    origin: str
    origin_row: int

    def __post_init__(self) -> None:
        if self.mode is not None:
            one_of(self.mode, ("eval", "train"), "ModeSwitchEvidence.mode")
