"""Evidence of QL201, QL202: captures whose model is in the wrong mode."""

from __future__ import annotations

from dataclasses import dataclass

from qlint.evidence import Evidence, one_of


@dataclass(frozen=True)
class SourcePoint(Evidence):
    row: int
    col: int


@dataclass(frozen=True)
class SinkPoint(Evidence):
    """Where the captured program reaches `prepare_pt2e` / `prepare_qat_pt2e`."""

    path: str
    row: int


@dataclass(frozen=True)
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
