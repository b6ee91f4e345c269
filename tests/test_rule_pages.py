"""Every rule page is a test: its Example is flagged, its Use instead is clean, and the fix
of Example is Use instead. The docs cannot drift from what the linter does."""

from __future__ import annotations

import json
import re

import pytest

from qlint.rules import RULES
from tests.conftest import ROOT, fix, lint

HEADINGS = ["What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "Options"]
PAGES = ROOT / "rules"


def sections(code: str) -> dict[str, str]:
    text = (PAGES / f"{code}.md").read_text()
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def python_block(section: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "exactly one python block expected"
    return blocks[0]


def example_options(section: str) -> dict:
    """Rule options a page's examples assume: `<!-- example-options: {"QL301": {...}} -->`."""
    found = re.search(r"<!-- example-options: (\{.*?\}) -->", section, flags=re.S)
    return json.loads(found.group(1)) if found else {}


@pytest.mark.parametrize("code", sorted(RULES))
def test_page_has_the_standard_headings(code):
    page = PAGES / f"{code}.md"
    assert page.is_file(), f"rules/{code}.md is missing"
    assert page.read_text().splitlines()[0] == f"# {code} {RULES[code].name}"
    found = list(sections(code))
    assert found[: len(HEADINGS)] == HEADINGS
    assert set(found) <= {*HEADINGS, "Runtime confirmation"}


@pytest.mark.parametrize("code", sorted(RULES))
def test_page_examples_run_through_the_linter(code, tmp_path):
    sec = sections(code)
    example, use_instead = python_block(sec["Example"]), python_block(sec["Use instead"])
    path = str(tmp_path / "example.py")
    options = example_options(sec["Example"])
    preview = RULES[code].preview
    assert code in [d.code for d in lint(example, path=path, preview=preview, **options)], "Example is not flagged"
    assert lint(use_instead, path=path, preview=preview, **options) == [], "Use instead is not clean"
    if RULES[code].fix_availability != "none":
        assert fix(example, path=path, unsafe=True, **options) == use_instead


def test_every_page_belongs_to_a_rule():
    assert {p.stem for p in PAGES.glob("QL*.md")} <= set(RULES)
