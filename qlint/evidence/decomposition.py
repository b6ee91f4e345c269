"""Evidence of QL301: decomposing `pre_prepare_passes`."""

from __future__ import annotations

from qlint.evidence import Evidence
from qlint.value_classes import field, value_class


@value_class(frozen=True)
class DecompositionEvidence(Evidence):
    """A `pre_prepare_passes` entry that decomposes; `preserve_ops` is what the fix keeps."""

    pass_name: str = field(metadata={"json": "pass"})
    decomposition: str
    path: str
    line: int
    preserve_ops: tuple[str, ...] | None = None
    kind: str = "pre-prepare-decomposition"
