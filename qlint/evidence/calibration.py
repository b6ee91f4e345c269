"""Evidence of QL204: converts without calibration."""

from __future__ import annotations

from dataclasses import dataclass

from qlint.evidence import Evidence


@dataclass(frozen=True)
class SourceRow(Evidence):
    path: str
    row: int


@dataclass(frozen=True)
class CalibrationEvidence(Evidence):
    """Where the model was prepared and converted; `helper` names the function that converts."""

    prepare: SourceRow
    convert: SourceRow
    helper: str | None = None
