"""Evidence of QL201, QL202: captures whose model is in the wrong mode."""

from __future__ import annotations

from qlint.evidence import Evidence, one_of
from qlint.value_classes import value_class


@value_class(frozen=True)
class SourcePoint(Evidence):
    row: int
    col: int


@value_class(frozen=True)
class SinkPoint(Evidence):
    """Where the captured program reaches `prepare_pt2e` / `prepare_qat_pt2e`."""

    path: str
    row: int


@value_class(frozen=True)
class CaptureEvidence(Evidence):
    """A capture whose model is in the wrong mode for its flow (`ptq` or `qat`)."""

    flow: str
    api: str
    capture: SourcePoint
    model: str | None = None  # the model expression as written
    reasons: tuple[str, ...] = ()
    sinks: tuple[SinkPoint, ...] = ()

    def __post_init__(self) -> None:
        one_of(self.flow, ("ptq", "qat"), "CaptureEvidence.flow")
