"""What a rule imports only once a file may hold its finding: QL201's verdicts on callers and
content (and the search for callers behind them), QL203's allow fixes, QL101's and QL102's
reading of Dynamo's passes across the project. A check of evaluated captures, of graphs moved
with torchao's helper, of matchers that compare no packet (most files these rules read)
never runs them; a file with the finding still gets it, with them imported then."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HEAD = """\
import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
"""
EVALUATED = """
def quantize(quantizer, x):
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 3, 3), torch.nn.BatchNorm2d(3))
    model.eval()
    prepared = prepare_pt2e(export(model, (x,)).module(), quantizer)
    return convert_pt2e(prepared)
"""
IN_TRAIN_MODE = EVALUATED.replace("    model.eval()\n", "")
# A parameter whose mode its callers decide: the part that reads the callers runs.
HANDED_IN = """
def quantize(model, quantizer, x):
    return prepare_pt2e(export(model, (x,)).module(), quantizer)


def main(quantizer, x):
    quantize(torch.nn.BatchNorm2d(3).eval(), quantizer, x)
"""
SWITCHED = """
def run(model, x):
    gm = export(model, (x,)).module()
    gm.eval()
"""
HANDED_SWITCH = """
def switch_off(m):
    m.eval()


def run(model, x):
    switch_off(export(model, (x,)).module())
"""
DEFERRED = (
    "qlint.rules.caller_verdicts",
    "qlint.rules.capture_content",
    "qlint.rules.ptq_eval_fix",
    "qlint.analysis.flow.call_sites",
    "qlint.rules.allow_fixes",
    "qlint.analysis.graphs.dynamo_graph_passes",
)


def _check(tmp_path, src: str, code: str, head: str = HEAD) -> tuple[list[str], list[str]]:
    """The codes found in `src`, and which of `DEFERRED` the check imported (a fresh process)."""
    path = tmp_path / "quant.py"
    path.write_text(head + src)
    script = f"""
        import sys
        from pathlib import Path
        from qlint.engine import check_source
        from qlint.settings import Settings

        s = Settings(root=Path({str(tmp_path)!r}), select=({code!r},))
        found = check_source(Path({str(path)!r}).read_bytes(), {str(path)!r}, s).diagnostics
        from qlint.rules.manifest import MANIFEST

        rule = next(spec for spec, facts in MANIFEST.items() if facts.code == {code!r})
        assert rule.partition(":")[0] in sys.modules  # the file is the rule's to check
        print(" ".join(d.code for d in found))
        print(" ".join(m for m in {DEFERRED!r} if m in sys.modules))
    """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, cwd=ROOT, check=True
    )
    found, imported = out.stdout.split("\n")[:2]
    return found.split(), imported.split()


def test_an_evaluated_capture_imports_no_verdict_on_callers(tmp_path):
    assert _check(tmp_path, EVALUATED, "QL201") == ([], [])


def test_a_capture_in_train_mode_is_still_reported(tmp_path):
    found, imported = _check(tmp_path, IN_TRAIN_MODE, "QL201")
    assert found == ["QL201"]
    assert "qlint.rules.caller_verdicts" in imported and "qlint.rules.ptq_eval_fix" in imported


def test_a_model_handed_in_has_its_callers_read(tmp_path):
    # The caller passes an evaluated model: quiet, through the caller search imported for it.
    found, imported = _check(tmp_path, HANDED_IN, "QL201")
    assert found == []
    assert "qlint.analysis.flow.call_sites" in imported


def test_a_switched_graph_is_reported_without_the_allow_fixes(tmp_path):
    assert _check(tmp_path, SWITCHED, "QL203") == (["QL203"], [])


def test_a_graph_handed_to_a_switching_helper_gets_the_allow_fix(tmp_path):
    found, imported = _check(tmp_path, HANDED_SWITCH, "QL203")
    assert found == ["QL203"] and imported == ["qlint.rules.allow_fixes"]


# A packet bound to a name, then compared and inserted through its overload: QL101 and QL102
# read the module and find nothing.
THROUGH_OVERLOADS = """
RELU = torch.ops.aten.relu


def matches(n):
    return n.target == RELU.default


def inserts(g, x):
    return g.call_function(RELU.default, (x,))
"""
MATCHES_A_PACKET = """
def f(n):
    return n.target == torch.ops.aten.relu
"""
INSERTS_A_PACKET = """
def f(g, x):
    return g.call_function(torch.ops.aten.relu, (x,))
"""


def test_a_module_comparing_no_packet_reads_no_dynamo_pass(tmp_path):
    assert _check(tmp_path, THROUGH_OVERLOADS, "QL101", "import torch\n") == ([], [])
    assert _check(tmp_path, THROUGH_OVERLOADS, "QL102", "import torch\n") == ([], [])


def test_a_packet_matcher_and_insertion_are_still_reported(tmp_path):
    dynamo = ["qlint.analysis.graphs.dynamo_graph_passes"]
    assert _check(tmp_path, MATCHES_A_PACKET, "QL101", "import torch\n") == (["QL101"], dynamo)
    assert _check(tmp_path, INSERTS_A_PACKET, "QL102", "import torch\n") == (["QL102"], dynamo)
