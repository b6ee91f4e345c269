"""What a check of one file sees: its text, tree, line index, op table, and the project.

Rules get one per file; analysis helpers take it too, so it lives in the analysis layer.
Anything that needs other files goes through `project`, which records what it read so the
cache can tell when a finding depends on another file.
"""

from __future__ import annotations

import ast
import os
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

from qlint.analysis.identifier_text import normalised
from qlint.analysis.names.scope import ModuleScope
from qlint.diagnostic import Diagnostic, Fix, Range, RelatedInfo
from qlint.evidence import Evidence
from qlint.source import LineIndex
from qlint.value_classes import field, value_class

if TYPE_CHECKING:
    from qlint.analysis.names.project import ProjectIndex
    from qlint.optable import OpTable


class Reporter(Protocol):
    """What a diagnostic needs of the rule that reports it (a `Rule` has both)."""

    code: str
    name: str


@value_class
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
        # After an edit of one function body, the last check's scope brought up to date: the
        # flows kept from that check refer to it (`statement_reuse`, `carried_flows`).
        previous = getattr(self.project, "previous_trees", None)
        kept = previous.scope_for(os.path.abspath(self.path), self.tree) if previous is not None else None
        return kept if kept is not None else ModuleScope.build(self.tree, self.module, self.path)

    @cached_property
    def words(self) -> str:
        """The text as Python reads its identifiers (`identifier_text`: NFKC), which the row
        searches read (`lines_containing`): `graph.call_function(...)` with a fullwidth `c` is
        a row of `call_function`. The text itself when NFKC leaves it alone (nearly every text)."""
        return normalised(self.text)

    @cached_property
    def word_lines(self) -> LineIndex:
        """`lines` of `words` (the same rows): what a search of `words` reads a row in."""
        return self.lines if self.words is self.text else LineIndex(self.words)

    def release(self) -> None:
        """Drop what the analyses kept on the context once the check is over. Several of them
        hold the context they were built from (the context's cache holds them back), a cycle
        that keeps the whole tree and every analysis alive until the cyclic collector finds it:
        on a 4,300-line module that collection took a fifth of the next check. Without the
        cycle everything goes by reference counting the moment the check returns."""
        self.cache.clear()
        for name in ("scope", "words", "word_lines"):
            self.__dict__.pop(name, None)

    def lines_containing(self, *needles: str) -> frozenset[int]:
        """Rows on which any of the substrings occurs, in the text as Python reads identifiers
        (`words`): rules walk expressions only there."""
        key = ("lines", needles)
        if key not in self.cache:
            rows = set()
            text = self.words
            position = self.word_lines.position
            for needle in needles:
                start = text.find(needle)
                while start != -1:
                    rows.add(position(start).row)
                    start = text.find(needle, start + 1)
            self.cache[key] = frozenset(rows)
        return self.cache[key]

    def range_of(self, node: ast.AST) -> Range:
        return self.lines.range_of(node)

    def source_of(self, node: ast.AST) -> str:
        r = self.range_of(node)
        return self.text[self.lines.offset(r.start) : self.lines.offset(r.end)]

    def diagnostic(
        self,
        rule: Reporter,
        where: ast.AST | Range,
        message: str,
        fix: Fix | None = None,
        evidence: Evidence | dict | None = None,
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
            # A plain dict is still accepted (rules written before qlint.evidence); the worker
            # validates either against the rule's `evidence_type`.
            evidence=evidence.to_json() if isinstance(evidence, Evidence) else dict(evidence or {}),
            help=help,
        )
