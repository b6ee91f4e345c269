"""A rule's `text_trigger`: what its `triggered_by` answers, asked before its module is
imported, so a file holding a trigger substring that the rule turns away (eager `torch.ao`
code for QL401, `getattr(` without `"target"` for QL101) does not import the rule and its
analysis, while a file it does want is still checked by the rule, imported then."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from qlint import registry
from qlint.registry import DeferredRule
from qlint.rules.base import imported_trigger
from qlint.rules.manifest import MANIFEST
from tests.snippets import PACKET_MATCHER

ROOT = Path(__file__).resolve().parents[1]
WITH_TEXT_TRIGGER = sorted(code for code, facts in registry.facts().items() if facts.text_trigger)


def _texts() -> list[str]:
    """Every rule page, qlint's own modules and the tests (full of snippets, flagged and quiet)."""
    paths = [*(ROOT / "rules").glob("*.md"), *(ROOT / "qlint").rglob("*.py"), *(ROOT / "tests").glob("*.py")]
    return [p.read_text(encoding="utf-8", errors="replace") for p in sorted(paths)]


def test_the_rules_with_a_text_trigger():
    assert WITH_TEXT_TRIGGER == ["QL101", "QL102", "QL203", "QL401"]


@pytest.mark.parametrize("code", WITH_TEXT_TRIGGER)
def test_the_text_trigger_answers_as_the_rule_does(code):
    rule = registry.rule_class(code)()
    trigger = imported_trigger(rule.text_trigger)
    answers = [(rule.triggered_by(t), trigger(t)) for t in _texts()]
    assert all(a == b for a, b in answers)
    assert any(a for a, _ in answers) and not all(a for a, _ in answers)  # the corpus has both


@pytest.mark.parametrize("code", WITH_TEXT_TRIGGER)
def test_a_deferred_rule_with_options_asks_the_rule(code):
    # Options may change the answer (QL101's `extra-sinks`): the rule is imported to give it.
    rule = DeferredRule(registry.facts()[code], {"unknown-to-the-trigger": True})
    rule.triggered_by("torch.ao .target\nmodel.eval()\n")
    assert rule._rule is not None


def _run(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return out.stdout.splitlines()


def test_the_trigger_modules_do_not_import_the_rules():
    code = """
        import sys
        from qlint import registry
        from qlint.rules.base import imported_trigger
        for facts in registry.facts().values():
            if facts.text_trigger:
                imported_trigger(facts.text_trigger)("torch.ao.quantization .target\\n")
        print(sorted(m for m in sys.modules if m.startswith("qlint.rules.ql")))
    """
    assert _run(code) == ["[]"]


TURNED_AWAY = {
    "QL401": "from torch.ao.quantization import QConfig\n\nqconfig = QConfig(None, None)\n",
    "QL101": "import torch\n\nfn = getattr(torch.ops.aten, 'relu')\n",
    # Inserts, but only an overload: no packet to report.
    "QL102": "import torch\n\n\ndef f(g, x):\n    return g.call_function(torch.ops.aten.relu.default, (x,))\n",
    # A training script's `.eval()`: no exported graph in sight.
    "QL203": "def evaluate(model, data):\n    model.eval()\n    return model(data)\n",
}
WANTED = {
    "QL401": "from torch.ao.quantization.quantize_pt2e import prepare_pt2e\n\nprepare_pt2e(m, q)\n",
    "QL101": PACKET_MATCHER,
    "QL102": "import torch\n\n\ndef f(g, x):\n    return g.call_function(torch.ops.aten.relu, (x,))\n",
    "QL203": "import torch\n\n\ndef f(m, x):\n    gm = torch.export.export(m, (x,)).module()\n    gm.eval()\n",
}


@pytest.mark.parametrize("code", WITH_TEXT_TRIGGER)
def test_a_rule_not_imported_up_front_still_fires(tmp_path, code):
    rule_module = next(spec for spec, facts in MANIFEST.items() if facts.code == code).partition(":")[0]
    away, wanted = tmp_path / "away.py", tmp_path / "wanted.py"
    away.write_text(TURNED_AWAY[code])
    wanted.write_text(WANTED[code])
    script = f"""
        import sys
        from pathlib import Path
        from qlint.engine import check_source
        from qlint.settings import Settings

        s = Settings(root=Path({str(tmp_path)!r}), select=({code!r},))
        found = check_source(Path({str(away)!r}).read_bytes(), {str(away)!r}, s).diagnostics
        print([d.code for d in found], {rule_module!r} in sys.modules)
        found = check_source(Path({str(wanted)!r}).read_bytes(), {str(wanted)!r}, s).diagnostics
        print([d.code for d in found], {rule_module!r} in sys.modules)
    """
    assert _run(script) == ["[] False", f"[{code!r}] True"]
