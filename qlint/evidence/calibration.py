"""Evidence of QL204: converts without calibration."""

from __future__ import annotations

from qlint.evidence import Evidence
from qlint.value_classes import value_class


@value_class(frozen=True)
class SourceRow(Evidence):
    path: str
    row: int


@value_class(frozen=True)
class CalibrationEvidence(Evidence):
    """Where the model was prepared and converted; `helper` names the function that converts."""

    prepare: SourceRow
    convert: SourceRow
    helper: str | None = None
