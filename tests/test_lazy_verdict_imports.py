"""A fresh process checking one file imports a verdict's module only when a check gets as far
as asking it (issue 13: ao's edited test_quantize_pt2e.py imported ~220 of qlint's modules,
28 of them for verdicts no check of it asks: 193 now). Each check runs in a new interpreter, so
what `sys.modules` holds afterwards is what that one check imported."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.snippets import PACKET_MATCHER

ROOT = Path(__file__).resolve().parents[1]

# Modules of verdicts asked only past a rule's first questions (a packet inserted and not
# settled as the test's own op, a registry's dispatch, a helper's held bundles, ...).
LAZY = (
    "qlint.analysis.flow.held_contents",
    "qlint.analysis.flow.closed_registries",
    "qlint.analysis.flow.registry_closure",
    "qlint.analysis.flow.registry_results",
    "qlint.analysis.flow.none_results",
    "qlint.analysis.flow.construction_references",
    "qlint.analysis.flow.switched_fields",
    "qlint.analysis.flow.init_parameters",
    "qlint.rules.attribute_content",
    "qlint.analysis.unread_conversions",
    "qlint.analysis.flow.nested_carry",
    "qlint.analysis.names.edit_parse",
    "qlint.analysis.graphs.compiled_next",
    "qlint.analysis.graphs.hand_built_graphs",
    "qlint.analysis.graphs.never_called",
    "qlint.analysis.graphs.printed_name_keys",
    "qlint.analysis.graphs.self_built_graphs",
    "qlint.analysis.graphs.stripped_later",
    "qlint.analysis.graphs.graph_parameter_passes",
    "qlint.analysis.graphs.call_statements",
    "qlint.analysis.graphs.blind_passes",
    "qlint.analysis.graphs.reexport",
    "qlint.rules.packet_origins",
    "qlint.rules.called_insertions",
    "qlint.rules.normalised_graphs",
    "qlint.rules.packet_consumers",
    "qlint.analysis.flow.registry_dispatch",
    "qlint.rules.qat_train_fix",
)

_PROBE = """
import json, sys
from qlint.engine import check_source
from qlint.settings import Settings
path = sys.argv[1]
result = check_source(open(path).read(), path, Settings())
assert not result.errors, result.errors
print(json.dumps({
    "found": sorted((d.code, d.range.start.row) for d in result.diagnostics),
    "rules": sorted(m for m in sys.modules if m.startswith("qlint.rules.ql")),
    "modules": sorted(sys.modules),
}))
"""

# Every rule that reads a verdict made lazy runs on it (QL101, QL102, QL201, QL204), and
# none gets past its first questions: the capture is in eval mode, the prepared model runs,
# the matcher normalises, the insertion is of an overload.
_QUIET = """
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def quantize(model, inputs, quantizer):
    model.eval()
    gm = torch.export.export(model, inputs).module()
    prepared = prepare_pt2e(gm, quantizer)
    prepared(*inputs)
    return convert_pt2e(prepared)


def insert_relu(gm, node, x):
    torch.ops.aten.relu(x)
    with gm.graph.inserting_after(node):
        return gm.graph.call_function(torch.ops.aten.relu.default, (node,))


def is_relu(node):
    return node.target.overloadpacket == torch.ops.aten.relu
"""


def _check(tmp_path: Path, source: str) -> dict:
    path = tmp_path / "module.py"
    path.write_text(textwrap.dedent(source).lstrip())
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    return json.loads(out.stdout)


def test_first_questions_settle_it_and_the_verdicts_stay_unimported(tmp_path):
    seen = _check(tmp_path, _QUIET)
    assert seen["found"] == []
    # The rules ran: their modules were imported, not their later verdicts'.
    for rule in ("ql101_packet_matcher", "ql102_packet_insertion", "ql201_ptq_capture_without_eval"):
        assert f"qlint.rules.{rule}" in seen["rules"]
    assert "qlint.rules.ql204_convert_without_calibration" in seen["rules"]
    assert [m for m in LAZY if m in seen["modules"]] == []


def test_a_check_that_asks_a_verdict_imports_it_and_reports_as_before(tmp_path):
    # A packet inserted by a public function: QL102 asks every verdict that could leave it
    # alone (the last, `never_called`, looks for callers) and reports it.
    seen = _check(
        tmp_path,
        """
        import torch


        def insert_relu(gm, node):
            with gm.graph.inserting_after(node):
                return gm.graph.call_function(torch.ops.aten.relu, (node,))
        """,
    )
    assert seen["found"] == [["QL102", 6]]
    for module in (
        "qlint.analysis.graphs.stripped_later",
        "qlint.analysis.graphs.compiled_next",
        "qlint.analysis.graphs.never_called",
        "qlint.rules.packet_consumers",
    ):
        assert module in seen["modules"]


def test_a_module_the_packet_triggers_turn_away_leaves_the_helper_search_unimported(tmp_path):
    # Writes `self.target` (QL101's and QL102's trigger substrings) and no packet can reach it:
    # both rules' text and import triggers say no (ExecuTorch's qualcomm tests/utils.py), so
    # the helper search their checks would use (`forwarding`) is never imported.
    seen = _check(
        tmp_path,
        """
        import torch


        class Runner:
            def __init__(self, target):
                self.target = target

            def run(self, x):
                return torch.relu(x).to(self.target)
        """,
    )
    assert seen["found"] == []
    assert not {"qlint.rules.ql101_packet_matcher", "qlint.rules.ql102_packet_insertion"} & set(seen["rules"])
    assert "qlint.analysis.graphs.forwarding" not in seen["modules"]


def test_a_module_a_packet_trigger_takes_imports_the_helper_search(tmp_path):
    seen = _check(tmp_path, PACKET_MATCHER)
    assert seen["found"] == [["QL101", 5]]
    assert "qlint.analysis.graphs.forwarding" in seen["modules"]
