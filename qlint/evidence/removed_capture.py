"""Evidence of QL402: removed capture APIs."""

from __future__ import annotations

from qlint.evidence import Evidence
from qlint.value_classes import value_class


@value_class(frozen=True)
class RemovedCaptureEvidence(Evidence):
    """A removed capture API, what it returned, and the call that replaces it."""

    api: str
    returns: str
    replacement: str
    keywords: tuple[str, ...] = ()
    kind: str = "removed-capture-api"
