"""What a rule is: a small class with a code, a name, trigger substrings and a `check`.

Rules see one parsed file at a time through `FileContext`; anything that needs other
files goes through `ctx.project`, which records what it read so the cache can tell
when a finding depends on another file.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

# FileContext lives in the analysis layer (analysis helpers take it too); rules import it here.
from qlint.analysis.context import FileContext
from qlint.diagnostic import Diagnostic


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    # A file that contains none of these substrings cannot hold a finding and is not parsed.
    triggers: ClassVar[tuple[str, ...]] = ()
    # "always", "sometimes" or "none": what `qlint rules` prints.
    fix_availability: ClassVar[str] = "none"
    # Option name -> default value. Config validates types against the defaults and,
    # where given, against `option_choices`.
    options: ClassVar[dict[str, Any]] = {}
    option_choices: ClassVar[dict[str, tuple[Any, ...]]] = {}

    def __init__(self, options: dict[str, Any] | None = None):
        self.opts = {**self.options, **(options or {})}

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        raise NotImplementedError

    def triggered_by(self, text: str) -> bool:
        return not self.triggers or any(t in text for t in self.triggers)

    def skips_module(self, module: str | None) -> bool:
        """True when the rule can have nothing to say in this module whatever it holds,
        decided before parsing (the largest files are often exactly those)."""
        return False


__all__ = ["FileContext", "Rule"]
