"""Every face links a finding to a page this project controls: the rule page installed with
qlint, or the `rule-url` the user configured. Never a repository that belongs to someone else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qlint.config import load_settings
from qlint.engine import check_source
from qlint.reporters import ReportOptions, render
from tests.conftest import ROOT

PACKET = "import torch\n\ndef f(n):\n    return n.target == torch.ops.aten.relu\n"


def findings(tmp_path, config: str = ""):
    (tmp_path / "pyproject.toml").write_text("[tool.qlint]\n" + config)
    settings = load_settings([str(tmp_path)])
    result = check_source(PACKET, str(tmp_path / "m.py"), settings)
    return settings, result.diagnostics


def test_default_links_are_the_shipped_rule_pages(tmp_path):
    settings, diagnostics = findings(tmp_path)
    options = ReportOptions(settings=settings)
    page = (ROOT / "qlint" / "rule_pages" / "QL101.md").as_uri()
    assert json.loads(render("json", diagnostics, options))[0]["url"] == page
    sarif = json.loads(render("sarif", diagnostics, options))
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert all(Path(r["helpUri"].removeprefix("file://")).is_file() for r in rules)
    assert "informationUri" not in sarif["runs"][0]["tool"]["driver"]


def test_configured_rule_url_reaches_json_sarif_lintrunner_and_the_language_server(tmp_path):
    settings, diagnostics = findings(tmp_path, 'rule-url = "https://qlint.example.org/rules/{code}/{name}"\n')
    expected = "https://qlint.example.org/rules/QL101/packet-matcher"
    options = ReportOptions(settings=settings)
    assert json.loads(render("json", diagnostics, options))[0]["url"] == expected
    rules = json.loads(render("sarif", diagnostics, options))["runs"][0]["tool"]["driver"]["rules"]
    assert {r["id"]: r["helpUri"] for r in rules}["QL001"] == "https://qlint.example.org/rules/QL001/syntax-error"
    assert expected in render("lintrunner", diagnostics, options)
    # Cached results carry no link: the reporters stamp the configured one.
    bare = [d.__class__(**{**d.__dict__, "url_template": None}) for d in diagnostics]
    assert json.loads(render("json", bare, options))[0]["url"] == expected
    convert = pytest.importorskip("qlint.lsp.convert")
    lsp = convert.to_lsp_diagnostic(diagnostics[0], convert.DocumentText(PACKET), 1)
    assert lsp.code_description.href == expected


def test_nothing_points_at_someone_elses_repository():
    for path in [ROOT / "README.md", ROOT / ".pre-commit-hooks.yaml", *sorted((ROOT / "qlint").rglob("*.py"))]:
        assert "github.com/qlint" not in path.read_text(encoding="utf-8"), path
