"""What a rule is: a small class with a code, a name, trigger substrings and a `check`.

Rules see one parsed file at a time through `FileContext`; anything that needs other
files goes through `ctx.project`, which records what it read so the cache can tell
when a finding depends on another file.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from qlint.diagnostic import Diagnostic, Fix, Range, RelatedInfo
from qlint.source import LineIndex

if TYPE_CHECKING:
    from qlint.analysis.project import ProjectIndex
    from qlint.analysis.scope import ModuleScope
    from qlint.optable import OpTable


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
    # Option name -> (regex every string value must fully match, the form in words), so a
    # malformed value is a config error naming key and file instead of silently doing nothing.
    option_patterns: ClassVar[dict[str, tuple[str, str]]] = {}

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


@dataclass
class FileContext:
    path: str
    text: str
    tree: ast.Module
    lines: LineIndex
    optable: OpTable
    project: ProjectIndex
    module: str | None = None  # dotted module name when the file sits in a package
    cache: dict[str, Any] = field(default_factory=dict)  # per-file analysis shared by rules

    @cached_property
    def scope(self) -> ModuleScope:
        from qlint.analysis.scope import ModuleScope

        return ModuleScope.build(self.tree, self.module, self.path)

    def lines_containing(self, *needles: str) -> frozenset[int]:
        """Rows on which any of the substrings occurs: rules walk expressions only there."""
        key = ("lines", needles)
        if key not in self.cache:
            rows = set()
            for needle in needles:
                start = self.text.find(needle)
                while start != -1:
                    rows.add(self.lines.position(start).row)
                    start = self.text.find(needle, start + 1)
            self.cache[key] = frozenset(rows)
        return self.cache[key]

    def range_of(self, node: ast.AST) -> Range:
        return Range.of(
            node.lineno,
            self.lines.char_col(node.lineno, node.col_offset),
            node.end_lineno,
            self.lines.char_col(node.end_lineno, node.end_col_offset),
        )

    def source_of(self, node: ast.AST) -> str:
        r = self.range_of(node)
        return self.text[self.lines.offset(r.start) : self.lines.offset(r.end)]

    def diagnostic(
        self,
        rule: Rule,
        where: ast.AST | Range,
        message: str,
        fix: Fix | None = None,
        evidence: dict | None = None,
        related: tuple[RelatedInfo, ...] = (),
        help: str | None = None,
    ) -> Diagnostic:
        rng = where if isinstance(where, Range) else self.range_of(where)
        return Diagnostic(
            code=rule.code,
            name=rule.name,
            message=message,
            path=self.path,
            range=rng,
            fix=fix,
            noqa_row=rng.start.row,
            related=related,
            evidence=evidence or {},
            help=help,
        )
