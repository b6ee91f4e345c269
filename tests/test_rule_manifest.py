"""The rule manifest (what the engine knows before importing a rule) and lazy rule loading."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from qlint import registry
from qlint.registry import DeferredRule, Registry
from qlint.rule_origins import RegistryError
from qlint.rules.manifest import MANIFEST
from qlint.rules.rule_facts import RuleFacts

ROOT = Path(__file__).resolve().parents[1]


def _generator():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import generate_rule_manifest
    finally:
        sys.path.pop(0)
    return generate_rule_manifest


def test_the_manifest_is_what_the_rule_classes_say():
    expected = _generator().render()
    assert (ROOT / "qlint" / "rules" / "manifest.py").read_text() == expected, (
        "qlint/rules/manifest.py is out of date: run `python scripts/generate_rule_manifest.py`"
    )


def test_the_manifest_is_written_as_ruff_format_would(tmp_path):
    # QL101's triggers outgrew one line: the generator wraps the tuple, one trigger a line,
    # or `ruff format --check` fails on the file it writes.
    written = tmp_path / "manifest.py"
    written.write_text(_generator().render())
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--config", str(ROOT / "pyproject.toml"), str(written)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_regenerating_an_up_to_date_manifest_leaves_the_file_alone(tmp_path, monkeypatch):
    # Its mtime is part of qlint's code fingerprint: a rewrite would make the next run cold.
    generator = _generator()
    target = tmp_path / "manifest.py"
    target.write_text(generator.render())
    os.utime(target, ns=(0, 0))
    monkeypatch.setattr(generator, "TARGET", target)
    monkeypatch.setattr(sys, "argv", ["generate_rule_manifest.py"])
    assert generator.main() == 0
    assert target.stat().st_mtime_ns == 0
    target.write_text("stale\n")
    assert generator.main() == 0
    assert target.read_text() == generator.render()


def test_the_generated_manifest_holds_data_only():
    # Types and prose live in the hand-written `rule_facts`; the generator only writes data.
    import ast

    tree = ast.parse((ROOT / "qlint" / "rules" / "manifest.py").read_text())
    kinds = [type(node).__name__ for node in tree.body]
    assert kinds == ["Expr", "ImportFrom", "ImportFrom", "AnnAssign"], kinds
    assert tree.body[2].module == "qlint.rules.rule_facts"


def test_facts_agree_with_the_loaded_classes():
    manifest = Registry(group=None).facts()
    loaded = Registry(group=None)
    loaded.rules()
    assert manifest == loaded.facts()


def _run(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return out.stdout


def test_a_check_imports_only_the_rules_the_file_triggers(tmp_path):
    quiet = tmp_path / "quiet.py"
    quiet.write_text("import torch\nmodel.eval()\n")
    matcher = tmp_path / "matcher.py"
    matcher.write_text("import torch\n\ndef f(n):\n    return n.target == torch.ops.aten.relu\n")
    code = f"""
        import sys
        from qlint.engine import check_source
        from qlint.settings import Settings

        def loaded():  # QL001/QL002 are the engine's own reports: small modules, always there
            names = (m.rsplit(".", 1)[1][:5] for m in sys.modules if m.startswith("qlint.rules.ql"))
            return sorted(n for n in names if n not in ("ql001", "ql002"))

        s = Settings(root=__import__("pathlib").Path({str(tmp_path)!r}))
        check_source(open({str(quiet)!r}, "rb").read(), {str(quiet)!r}, s)
        print(loaded())
        found = check_source(open({str(matcher)!r}, "rb").read(), {str(matcher)!r}, s).diagnostics
        print(loaded(), [d.code for d in found])
    """
    first, second = _run(code).splitlines()
    # `.eval()` is one of QL203's triggers; its text trigger (a source of exported graphs)
    # turns the file away without importing the rule.
    assert first == "[]"
    modules, codes = second.split("] [")
    assert codes == "'QL101']"
    # QL101's module imports what it shares with QL102; none of the capture or import rules.
    assert modules.lstrip("[").split(", ") in (["'ql101'"], ["'ql101'", "'ql102'"])


def test_a_cli_run_on_a_clean_file_imports_no_rule_module(tmp_path):
    clean = tmp_path / "clean.py"
    clean.write_text("x = 1\n")
    code = f"""
        import sys
        from qlint.cli import main
        code = main(["check", "--no-cache", {str(clean)!r}])
        names = (m.rsplit(".", 1)[1][:5] for m in sys.modules if m.startswith("qlint.rules.ql"))
        print(code, sorted(n for n in names if n not in ("ql001", "ql002")))
    """
    assert _run(code).split("\n")[-2] == "0 []"


def test_selectors_and_rule_options_import_only_the_rules_they_configure(tmp_path):
    # Selectors on the command line and in the config (`select`, `per-file-ignores`) are checked
    # against the manifest's codes, and a rule's options against that rule's class alone: the
    # classes of all the rules cost a run ~30 ms of imports for a clean file.
    (tmp_path / "pyproject.toml").write_text(
        '[tool.qlint]\nextend-select = ["QL2"]\nper-file-ignores = {"tests/*" = ["QL20", "QL401"]}\n'
        '[tool.qlint.QL101]\nfix-style = "both"\n'
    )
    clean = tmp_path / "clean.py"
    clean.write_text("x = 1\n")
    code = f"""
        import sys
        from qlint.cli import main
        code = main(["check", "--no-cache", "--select", "QL1,QL2", "--ignore", "QL203", {str(clean)!r}])
        names = (m.rsplit(".", 1)[1][:5] for m in sys.modules if m.startswith("qlint.rules.ql"))
        print(code, sorted(n for n in names if n not in ("ql001", "ql002")))
    """
    # QL101 shares what a module inserts with QL102 through `module_insertions`: no other rule's module.
    assert _run(code).split("\n")[-2] == "0 ['ql101']"


def test_a_misspelt_selector_or_option_table_is_still_refused(tmp_path):
    from qlint.config import ConfigError, load_settings

    for table in ('[tool.qlint]\nselect = ["QL9"]\n', "[tool.qlint.QL109]\nfix-style = 1\n"):
        (tmp_path / "pyproject.toml").write_text(table)
        with pytest.raises(ConfigError, match="unknown rule"):
            load_settings([str(tmp_path)])
    (tmp_path / "pyproject.toml").write_text('[tool.qlint.QL101]\nfix-styel = "both"\n')
    with pytest.raises(ConfigError, match="options of QL101"):
        load_settings([str(tmp_path)])


def test_a_deferred_rule_answers_as_the_rule_does():
    facts = registry.facts()
    rule = DeferredRule(facts["QL101"], {"fix-style": "both"})
    assert rule.code == "QL101" and rule._rule is None
    assert not rule.triggered_by("x = 1\n") and rule._rule is None  # no trigger: never imported
    # `getattr(` is a declared trigger, but the rule itself wants `getattr(x, "target")`.
    assert not rule.triggered_by("getattr(a, 'b')\n") and rule._rule is not None
    assert rule.triggered_by("node.target == torch.ops.aten.relu\n")
    # A matcher's row, but no packet the text can make (`packet_text`).
    assert not rule.triggered_by("node.target == x\n")
    assert rule.opts["fix-style"] == "both" and rule.summary == registry.rule_class("QL101").summary


def test_a_class_that_no_longer_matches_the_manifest_is_an_error(monkeypatch):
    spec = next(s for s, f in MANIFEST.items() if f.code == "QL202")
    monkeypatch.setitem(MANIFEST, spec, RuleFacts("QL202", "qat-capture-in-eval-mode", False, None, ("stale",)))
    with pytest.raises(RegistryError, match="generate_rule_manifest"):
        Registry(group=None).rule_class("QL202")
