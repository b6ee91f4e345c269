"""Evidence of QL103: matchers that expect a weight quantize op after folding."""

from __future__ import annotations

from qlint.evidence import Evidence
from qlint.value_classes import value_class


@value_class(frozen=True)
class FoldingConvert(Evidence):
    """A `convert_pt2e` call that feeds a matcher, and whether it folds weight quantize ops."""

    path: str
    folds: str


@value_class(frozen=True)
class WeightMatcherEvidence(Evidence):
    """A matcher that tests for a weight only behind a quantize-op match."""

    function: str
    weight_test: str
    convert_calls: tuple[FoldingConvert, ...]
    kind: str = "weight-quantize-matcher"
