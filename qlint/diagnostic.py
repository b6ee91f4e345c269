"""The one finding type every face shares: text/JSON/SARIF output, LSP, codemods, runtime verdicts.

Positions are 1-based rows and 0-based columns counted in code points of the decoded
source, the way Python strings index a line. Reporters convert to their own conventions
(ruff's 1-based columns, LSP's UTF-16 units) at the edge, so the engine never has to.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

from qlint.value_classes import field, replace, value_class

# The rule pages ship inside the package (`qlint/rule_pages/`): the one link that always
# points at something this project controls, and at the version that produced the finding.
_RULE_PAGES = Path(__file__).resolve().parent / "rule_pages"


@value_class(frozen=True, order=True)
class Position:
    row: int  # 1-based
    col: int  # 0-based, code points


@value_class(frozen=True, order=True)
class Range:
    start: Position
    end: Position

    @classmethod
    def of(cls, row: int, col: int, end_row: int, end_col: int) -> Range:
        return cls(Position(row, col), Position(end_row, end_col))


class Applicability(str, enum.Enum):
    """Same three levels as ruff: safe fixes apply by default, unsafe ones on request."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@value_class(frozen=True, order=True)
class Edit:
    """Replace the text in ``range`` with ``content`` (an insertion when the range is empty).

    ``path`` names another file when the fix belongs there (a packet written in the module
    that defines a constant compared elsewhere); None is the diagnostic's own file.
    """

    range: Range
    content: str
    path: str | None = None


@value_class(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[Edit, ...] = ()

    def foreign(self, path: str) -> bool:
        """True when an edit belongs to a file other than `path`: only a whole run applies it."""
        return any(e.path is not None and e.path != path for e in self.edits)

    def applies(self, unsafe: bool) -> bool:
        if not self.edits or self.applicability is Applicability.DISPLAY_ONLY:
            return False
        return self.applicability is Applicability.SAFE or unsafe


@value_class(frozen=True)
class RelatedInfo:
    """Another place that explains a finding (e.g. the decomposition call a pass makes)."""

    path: str
    range: Range
    message: str


@value_class(frozen=True)
class RuntimeVerdict:
    verdict: str  # confirmed | refuted | inconclusive | skipped
    evidence: str
    fix_verified: bool | None = None
    seconds: float = 0.0


@value_class(frozen=True)
class Diagnostic:
    code: str
    name: str
    message: str
    path: str
    range: Range
    fix: Fix | None = None
    noqa_row: int | None = None
    related: tuple[RelatedInfo, ...] = ()
    # What the runtime checker needs to confirm the finding without importing user code:
    # op names, the collection as written, etc. Plain JSON-able data, set by the rule.
    evidence: dict = field(default_factory=dict, compare=False, hash=False)
    runtime: RuntimeVerdict | None = None
    # The explanation behind the one-sentence message: why it matters and what to do.
    help: str | None = field(default=None, compare=False)
    # `rule-url` from the settings ("https://example.org/rules/{code}"); None: the shipped page.
    url_template: str | None = field(default=None, compare=False, hash=False, repr=False)
    # In a notebook: the 1-based cell the range is in (rows count from the cell's first line).
    cell: int | None = None

    @property
    def url(self) -> str:
        return rule_url(self.code, self.name, self.url_template)

    @property
    def fixable(self) -> bool:
        return (
            self.fix is not None and self.fix.applicability is not Applicability.DISPLAY_ONLY and bool(self.fix.edits)
        )

    def with_runtime(self, verdict: RuntimeVerdict) -> Diagnostic:
        return replace(self, runtime=verdict)

    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.range.start, self.code)


def rule_url(code: str, name: str = "", template: str | None = None) -> str:
    """A rule's documentation link: the configured `rule-url` with `{code}`/`{name}` filled
    in, else the `file://` URL of the rule page installed with qlint."""
    if template:
        return template.replace("{code}", code).replace("{name}", name)
    return (_RULE_PAGES / f"{code}.md").as_uri()


# The plain form of a finding, which the results cache (`qlint.cache`) and the run record
# (`qlint.run_record`) keep: marshal-able and JSON-able data, read back exactly.


def _range_to(r: Range) -> list[int]:
    return [r.start.row, r.start.col, r.end.row, r.end.col]


def _range_from(v: list[int]) -> Range:
    if len(v) != 4 or not all(type(x) is int for x in v):
        raise TypeError(f"not a range: {v!r}")
    return Range(Position(v[0], v[1]), Position(v[2], v[3]))


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"not a string: {value!r}")
    return value


_VERDICTS = frozenset({"confirmed", "refuted", "inconclusive", "skipped"})


def diagnostic_to_dict(d: Diagnostic) -> dict[str, Any]:
    """A JSON-able (and marshal-able) dict that `diagnostic_from_dict` turns back exactly."""
    out: dict[str, Any] = {
        "code": d.code,
        "name": d.name,
        "message": d.message,
        "path": d.path,
        "range": _range_to(d.range),
        "noqa_row": d.noqa_row,
    }
    if d.fix is not None:
        out["fix"] = {
            "applicability": d.fix.applicability.value,
            "message": d.fix.message,
            "edits": [[_range_to(e.range), e.content, e.path] for e in d.fix.edits],
        }
    if d.related:
        out["related"] = [[r.path, _range_to(r.range), r.message] for r in d.related]
    if d.evidence:
        out["evidence"] = d.evidence
    if d.help:
        out["help"] = d.help
    if d.cell is not None:
        out["cell"] = d.cell
    if d.runtime is not None:
        rt = d.runtime
        out["runtime"] = [rt.verdict, rt.evidence, rt.fix_verified, rt.seconds]
    return out


def diagnostic_from_dict(data: dict[str, Any]) -> Diagnostic:
    """The inverse of `diagnostic_to_dict`; raises (ValueError, KeyError, TypeError,
    IndexError) on anything it would not have written, so a bad cache entry is a miss."""
    fix = None
    if "fix" in data:
        f = data["fix"]
        edits = tuple(
            Edit(_range_from(r), _str(content), path if path is None else _str(path)) for r, content, path in f["edits"]
        )
        fix = Fix(Applicability(f["applicability"]), _str(f["message"]), edits)
    related = tuple(RelatedInfo(_str(p), _range_from(r), _str(m)) for p, r, m in data.get("related", ()))
    runtime = None
    if "runtime" in data:
        verdict, evidence, fix_verified, seconds = data["runtime"]
        if verdict not in _VERDICTS or fix_verified not in (True, False, None) or type(seconds) not in (int, float):
            raise ValueError(f"not a runtime verdict: {data['runtime']!r}")
        runtime = RuntimeVerdict(verdict, _str(evidence), fix_verified, seconds)
    noqa_row = data["noqa_row"]
    if noqa_row is not None and type(noqa_row) is not int:
        raise TypeError(f"not a row: {noqa_row!r}")
    evidence = data.get("evidence", {})
    if not isinstance(evidence, dict):
        raise TypeError("evidence is not a dict")
    return Diagnostic(
        code=_str(data["code"]),
        name=_str(data["name"]),
        message=_str(data["message"]),
        path=_str(data["path"]),
        range=_range_from(data["range"]),
        fix=fix,
        noqa_row=noqa_row,
        related=related,
        evidence=dict(evidence),
        runtime=runtime,
        help=data.get("help"),
        cell=data.get("cell"),
    )
