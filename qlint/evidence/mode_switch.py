"""Evidence of QL203: `.eval()`/`.train()` on exported graphs."""

from __future__ import annotations

from qlint.evidence import Evidence, one_of
from qlint.value_classes import value_class


@value_class(frozen=True)
class ModeSwitchEvidence(Evidence):
    """`.eval()`/`.train()` on a GraphModule that came from `origin` (export, prepare, ...);
    `mode` is None for `.train(flag)` with a flag known only at run time. `allowed_fix`: the
    switch runs in a helper the graph is handed to, and the fix applies
    `allow_exported_model_train_eval` to the graph first (the switch then stays)."""

    mode: str | None
    origin: str
    origin_row: int
    allowed_fix: bool = False

    def __post_init__(self) -> None:
        if self.mode is not None:
            one_of(self.mode, ("eval", "train"), "ModeSwitchEvidence.mode")
