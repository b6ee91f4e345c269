"""A file qlint could not check is always reported, precisely, whatever the selection says."""

from __future__ import annotations

import sys

import pytest

from qlint.config import Overrides, load_settings
from qlint.diagnostic import Position
from qlint.engine import check_source
from qlint.parse_failure import deepest_nesting, newer_syntax
from qlint.settings import Settings
from qlint.source import LineIndex
from tests.conftest import ROOT, codes, settings_for

BROKEN = "import torch\n\ndef f(n):\n    return n.target == torch.ops.aten.relu and\n"


@pytest.mark.parametrize(
    "settings",
    [
        settings_for(select=("QL101",)),
        Settings(select=("QL",), ignore=("QL0",), root=ROOT),
        Settings(select=("QL",), ignore=("QL001",), root=ROOT),
    ],
)
def test_syntax_errors_are_reported_whatever_is_selected(settings):
    result = check_source(BROKEN, "broken.py", settings)
    assert codes(result.diagnostics) == ["QL001"]
    assert result.diagnostics[0].range.start.row == 4


# Only the preview rule QL103's trigger (`get_attr`) is here; no other rule's.
PREVIEW_ONLY = "def weight(n):\n    return n.op == 'get_attr' and\n"


def test_a_file_only_a_preview_rule_reads_gets_ql001_with_preview_only():
    """QL001 covers the files the enabled rules read: a rule that is off costs nothing, not
    even a parse to see whether the file parses."""
    (d,) = check_source(PREVIEW_ONLY, "weight.py", settings_for(preview=True)).diagnostics
    assert d.code == "QL001" and d.range.start.row == 2
    quiet = check_source(PREVIEW_ONLY, "weight.py", settings_for())
    assert quiet.diagnostics == [] and not quiet.parsed


def test_a_file_only_an_unselected_rule_reads_is_not_parsed():
    # BROKEN holds QL101's trigger: with QL2 selected, no enabled rule reads it.
    result = check_source(BROKEN, "broken.py", settings_for(select=("QL2",)))
    assert result.diagnostics == [] and not result.parsed
    # ... and a rule the selection names still has its QL001.
    assert codes(check_source(BROKEN, "broken.py", settings_for(select=("QL2", "QL101"))).diagnostics) == ["QL001"]


def test_a_rule_per_file_ignores_turn_away_still_has_its_files_parsed_for_ql001():
    """Only an entry that names QL001 silences it: a file an enabled rule would read, but a
    per-file-ignores entry turned that rule away from, is still parsed."""
    pfi = Settings(select=("QL101",), per_file_ignores=(("broken.py", ("QL101",)),), root=ROOT)
    assert codes(check_source(BROKEN, str(ROOT / "broken.py"), pfi).diagnostics) == ["QL001"]
    # Not for a rule the run does not enable: QL103 is preview, and preview is off.
    off = Settings(select=("QL",), per_file_ignores=(("weight.py", ("QL1",)),), root=ROOT)
    assert check_source(PREVIEW_ONLY, str(ROOT / "weight.py"), off).diagnostics == []
    on = Settings(select=("QL",), preview=True, per_file_ignores=(("weight.py", ("QL1",)),), root=ROOT)
    assert codes(check_source(PREVIEW_ONLY, str(ROOT / "weight.py"), on).diagnostics) == ["QL001"]


def test_decode_errors_are_reported_whatever_is_selected():
    result = check_source(b"x = 1\n\xff\n", "latin.py", settings_for(select=("QL101",)))
    assert codes(result.diagnostics) == ["QL001"] and result.diagnostics[0].range.start == Position(2, 0)
    assert result.diagnostics[0].help


def test_files_no_rule_could_report_on_are_not_parsed():
    result = check_source("this is not python (\n", "x.py", settings_for(select=("QL101",)))
    assert result.diagnostics == [] and not result.parsed


def test_explicit_per_file_ignore_or_file_noqa_silences_ql001():
    pfi = Settings(per_file_ignores=(("broken.py", ("QL001",)),), root=ROOT)
    assert check_source(BROKEN, str(ROOT / "broken.py"), pfi).diagnostics == []
    # A prefix is not explicit: `QL0` or `QL` per-file-ignores keep the syntax error visible.
    prefix = Settings(per_file_ignores=(("broken.py", ("QL",)),), root=ROOT)
    assert codes(check_source(BROKEN, str(ROOT / "broken.py"), prefix).diagnostics) == ["QL001"]
    assert check_source("# qlint: noqa: QL001\n" + BROKEN, "b.py", settings_for()).diagnostics == []
    assert check_source("# qlint: noqa\n" + BROKEN, "b.py", settings_for()).diagnostics == []
    kept = check_source("# qlint: noqa: QL101\n" + BROKEN, "b.py", settings_for())
    assert codes(kept.diagnostics) == ["QL001"]


def test_cli_never_says_all_checks_passed_for_a_broken_file(tmp_path):
    from tests.test_cli import qlint

    (tmp_path / "pyproject.toml").write_text('[tool.qlint]\nselect = ["QL1"]\n')
    (tmp_path / "broken.py").write_text(BROKEN)
    proc = qlint("check", "--no-cache", "--select", "QL101", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "All checks passed" not in proc.stdout and "broken.py:4:" in proc.stdout
    proc = qlint("check", "--no-cache", cwd=tmp_path)
    assert proc.returncode == 1 and "QL001" in proc.stdout


def test_nul_byte_is_reported_where_it_is():
    result = check_source(b"import torch\nx = node.target, torch.ops.aten.relu\nab\0c = 1\n", "nul.py", settings_for())
    (d,) = result.diagnostics
    assert d.code == "QL001" and d.range.start == Position(3, 2) and "NUL" in d.message


def test_deep_nesting_is_reported_where_the_nesting_starts():
    text = "import torch\nok = node.target, torch.ops.aten.relu\ny = 1 + " + "(" * 5000 + "1" + ")" * 5000 + "\n"
    (d,) = check_source(text, "deep.py", settings_for()).diagnostics
    assert d.code == "QL001" and d.range.start == Position(3, 8) and "nested" in d.message
    unary = "x = node.target, torch.ops.aten.relu\n\nz = " + "-" * 100_000 + "1\n"
    (d,) = check_source(unary, "unary.py", settings_for()).diagnostics
    assert d.range.start == Position(3, 4)


def test_deepest_nesting_survives_untokenizable_text():
    assert deepest_nesting("x = (((\n") == (1, 4)


NEWER = [
    ("type Alias = list[int]\n", (3, 12), "`type` statement"),
    ("def first[T](xs: list[T]) -> T:\n    return xs[0]\n", (3, 12), "generic function"),
    ("class Box[T]:\n    pass\n", (3, 12), "generic class"),
    ("def f[T = int]():\n    pass\n", (3, 13), "type parameter defaults"),
    ('names = {}\nx = f"{names["k"]}"\n', (3, 12), "f-string"),
    ("x = f\"{'\\n'.join([])}\"\n", (3, 12), "f-string"),
    # A one-quote f-string whose replacement field runs over several lines: 3.11 calls it an
    # unterminated string literal at its first line.
    ('d = 1\nx = f"total: {\n    d\n}"\n', (3, 12), "line break in a replacement field"),
    ('d = {}\nx = f"keys: {\n    ", ".join(\n        f\'{k}\' for k in d\n    )\n}"\n', (3, 12), "f-string"),
    ("try:\n    pass\nexcept ValueError, TypeError:\n    pass\n", (3, 14), "PEP 758"),
    ("x = t'hello {name}'\n", (3, 14), "template string"),
]


@pytest.mark.parametrize(("source", "version", "feature"), NEWER)
def test_syntax_of_a_newer_python_is_named_with_the_python_it_needs(source, version, feature):
    import ast

    try:
        ast.parse(source)
    except SyntaxError as exc:
        found = newer_syntax(exc, source, LineIndex(source))
        assert found is not None and found[0] == version and feature in found[1]
    else:
        assert sys.version_info[:2] >= version  # this interpreter understands it: nothing to name


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="needs an interpreter without PEP 695")
def test_newer_syntax_diagnostic_says_which_python_to_run():
    text = "import torch\n\ntype Pair = tuple[int, int]\nok = node.target == torch.ops.aten.relu\n"
    (d,) = check_source(text, "new.py", settings_for(select=("QL101",))).diagnostics
    running = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert d.code == "QL001" and d.range.start.row == 3
    assert d.message == (
        f"uses syntax of Python 3.12 (`type` statement, PEP 695); qlint runs on Python {running}: "
        "run qlint with Python >= 3.12 to check this file"
    )


@pytest.mark.parametrize(
    "source",
    [
        "x = (\n",  # unclosed bracket
        'x = f"{"\n',  # a broken f-string, not a newer one
        'x = f"{a\nb = 2\n',  # a field never closed under any grammar
        'x = "abc\ny = f"{\n1}"\n',  # an ordinary unterminated string before a newer f-string
        "typ X = int\n",
        "def f[(): pass\n",
        "try:\n    pass\nexcept (A, B) C:\n    pass\n",
    ],
)
def test_ordinary_syntax_errors_are_not_blamed_on_the_python_version(source):
    import ast

    with pytest.raises(SyntaxError) as info:
        ast.parse(source)
    assert newer_syntax(info.value, source, LineIndex(source)) is None
    (d,) = check_source("node.target, torch.ops.aten.relu\n" + source, "bad.py", settings_for()).diagnostics
    assert d.message.startswith("SyntaxError: ")


def test_rule_url_is_the_shipped_page_or_the_configured_template(tmp_path):
    (d,) = check_source(BROKEN, "b.py", settings_for()).diagnostics
    assert d.url == (ROOT / "qlint" / "rule_pages" / "QL001.md").as_uri()
    (tmp_path / "pyproject.toml").write_text('[tool.qlint]\nrule-url = "https://example.org/r/{code}-{name}.html"\n')
    settings = load_settings([str(tmp_path)], overrides=Overrides())
    (d,) = check_source(BROKEN, str(tmp_path / "b.py"), settings).diagnostics
    assert d.url == "https://example.org/r/QL001-syntax-error.html"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"example.org/{code}"', "expected an http(s) or file URL"),
        ('"https://example.org/{rule}"', 'unknown placeholder "{rule}"'),
        ('"https://example.org/rules"', "must contain {code} or {name}"),
    ],
)
def test_bad_rule_url_is_a_config_error_naming_key_and_file(tmp_path, value, message):
    from qlint.config_messages import ConfigError

    (tmp_path / "pyproject.toml").write_text(f"[tool.qlint]\nrule-url = {value}\n")
    with pytest.raises(ConfigError) as info:
        load_settings([str(tmp_path)])
    assert "pyproject.toml" in str(info.value) and '"rule-url"' in str(info.value) and message in str(info.value)
