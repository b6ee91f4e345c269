"""`qlint rules` and `qlint rule CODE`: the registry's facts as a table, a rule's page as text."""

from __future__ import annotations

from qlint import registry
from qlint.rule_origins import CODE
from qlint.rules.base import FixAvailability, Severity


def rules_table() -> str:
    """One row per rule, built-in and plugin: code, name, fix availability, severity, the
    package it comes from, and its summary (marked when it is a preview rule)."""
    rows = []
    for code, cls in sorted(registry.rules().items()):
        summary = cls.summary + (" (preview)" if cls.preview else "")
        fix = FixAvailability(cls.fix_availability).value
        rows.append((code, cls.name, fix, Severity(cls.severity).value, registry.origin(code).package, summary))
    header = ("Code", "Name", "Fix", "Severity", "Package", "Summary")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row[:-1], widths, strict=True)) + "  " + row[-1]
        for row in [header, *rows]
    ]
    return "".join(line.rstrip() + "\n" for line in lines)


def rule_page(code_or_name: str) -> str:
    """The Markdown page of a rule named by code (any case) or kebab name; LookupError with
    a message for the user when there is no such rule or its page cannot be read."""
    cls = registry.lookup(code_or_name)
    if cls is None:
        given = code_or_name.strip()
        shown = given.upper() if CODE.match(given.upper()) else given
        raise LookupError(f"unknown rule {shown!r}: give a code or a name (see `qlint rules`)")
    path = cls.page_path()
    if path is None or not path.is_file():
        where = f" (package {registry.origin(cls.code)})" if not registry.origin(cls.code).builtin else ""
        raise LookupError(f"no documentation page found for {cls.code}{where}")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LookupError(f"{path}: cannot read the page of {cls.code}: {exc}") from None
