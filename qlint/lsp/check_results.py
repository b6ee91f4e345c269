"""What the server keeps of a buffer and of a check: the text a check reads (`Snapshot`), what a
check found (`CheckOutcome`, handed from the checker thread to the event loop), and the last
result published for a buffer (`Checked`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from lsprotocol import types

from qlint.diagnostic import Diagnostic, RuntimeVerdict
from qlint.lsp.verdicts import decorate
from qlint.settings import Settings


@dataclass(frozen=True)
class Snapshot:
    uri: str
    path: str
    version: int | None
    text: str


@dataclass
class Checked:
    """The last published result of a buffer: what fix-all, hover, pull and the lightbulb consult."""

    version: int | None
    diagnostics: list[Diagnostic]
    dependencies: frozenset[str] = field(default_factory=frozenset)
    lsp: list[types.Diagnostic] = field(default_factory=list)
    settings: Settings | None = None
    verdicts: dict[int, RuntimeVerdict] = field(default_factory=dict)
    generation: int = 0  # bumped by each republish (runtime verdicts)
    serial: int = 0  # which of the server's checks made it: a recheck of the same version differs

    @property
    def result_id(self) -> str:
        """The pull result id: it changes whenever what `published` returns may have."""
        return f"{self.version}.{self.serial}.{self.generation}"

    def published(self) -> list[types.Diagnostic]:
        return [decorate(d, self.verdicts.get(i)) for i, d in enumerate(self.lsp)]

    def findings(self) -> list[Diagnostic]:
        """The engine's diagnostics with their runtime verdicts (for quick-fix titles)."""
        return [d.with_runtime(self.verdicts[i]) if i in self.verdicts else d for i, d in enumerate(self.diagnostics)]


@dataclass
class CheckOutcome:
    snapshot: Snapshot
    diagnostics: list[Diagnostic]
    lsp: list[types.Diagnostic]
    dependencies: frozenset[str]
    config_error: str | None  # to show: a config problem not reported before
    errors: list[str]
    settings: Settings | None = None
    seconds: float = 0.0
    engine_seconds: float = 0.0
    engine_cpu: float = 0.0  # the checker thread's CPU time in the engine (a loaded machine: << seconds)
