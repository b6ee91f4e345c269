"""The evidence contract between a rule and its runtime check: what every rule emits reads
back as its declared type, malformed evidence is refused naming the field, and the worker
refuses it before any check (or torch) runs."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from qlint import registry
from qlint.evidence import (
    CaptureEvidence,
    DecompositionEvidence,
    EvidenceError,
    ModeSwitchEvidence,
    Move,
    MovedImportEvidence,
    OpEvidence,
    OpRef,
    SinkPoint,
    SourcePoint,
)
from qlint.runtime.worker import run_check
from tests.conftest import ROOT, lint
from tests.test_rule_pages import example_options, python_block, sections

CHECKED = sorted(code for code, cls in registry.rules().items() if cls.runtime_check)


@pytest.mark.parametrize("code", CHECKED)
def test_what_each_rule_emits_reads_back_as_its_declared_type(code, tmp_path):
    """The page's Example is flagged; its finding's evidence round-trips through the type."""
    rule = registry.rules()[code]
    assert rule.evidence_type is not None
    sec = sections(code)
    found = [
        d
        for d in lint(
            python_block(sec["Example"]),
            path=str(tmp_path / "example.py"),
            preview=rule.preview,
            **example_options(sec["Example"]),
        )
        if d.code == code
    ]
    assert found
    for d in found:
        typed = rule.evidence_type.from_json(d.evidence)
        assert typed.to_json() == d.evidence


def test_json_shapes_are_what_the_checks_read():
    op = OpEvidence("collection", (OpRef("aten", "relu"),), carried=("default",), overloads=("default", "out"))
    assert op.to_json() == {
        "kind": "collection",
        "ops": [{"namespace": "aten", "op": "relu", "overload": None, "dialect": None}],
        "carried": ["default"],
        "overloads": ["default", "out"],
        "siblings": [],
        "missed": [],
    }
    beside = OpEvidence("comparison", (OpRef("aten", "arange"),), siblings=("start",), missed=("default",))
    assert OpEvidence.from_json(beside.to_json()) == beside
    # A request from a qlint that did not send them reads as a finding without siblings.
    old = {k: v for k, v in beside.to_json().items() if k not in ("siblings", "missed")}
    assert OpEvidence.from_json(old).missed == ()
    capture = CaptureEvidence(
        "ptq", "torch.export.export", SourcePoint(3, 4), "model", ("built",), (SinkPoint("a.py", 9),)
    )
    assert capture.to_json()["capture"] == {"row": 3, "col": 4} and capture.to_json()["sinks"] == [
        {"path": "a.py", "row": 9}
    ]
    assert (
        ModeSwitchEvidence.from_json({"mode": None, "origin": "export", "origin_row": 2}).mode is None
    )  # `.train(flag)`
    decomposition = DecompositionEvidence("p", "run_decompositions", "a.py", 4, ("aten.linear.default",))
    assert decomposition.to_json()["pass"] == "p" and "pass_name" not in decomposition.to_json()
    assert DecompositionEvidence.from_json(decomposition.to_json()) == decomposition
    moved = MovedImportEvidence.from_json({"kind": "moved-import", "moves": [{"old": "torch.ao.x", "new": None}]})
    assert moved.moves == (Move("torch.ao.x", None, None),)


@pytest.mark.parametrize(
    ("cls", "data", "message"),
    [
        (OpEvidence, {"kind": "comparison", "ops": [{"namespace": "aten"}]}, "OpEvidence.ops[0]: missing 'op'"),
        (OpEvidence, {"kind": "comparison", "ops": "aten.relu"}, "OpEvidence.ops: expected a list, got 'aten.relu'"),
        (OpEvidence, {"kind": "sideways", "ops": []}, "OpEvidence.kind: 'sideways' is not one of"),
        (
            ModeSwitchEvidence,
            {"mode": "eval", "origin": "export", "origin_row": "3"},
            "origin_row: expected int, got '3'",
        ),
        (
            ModeSwitchEvidence,
            {"mode": "eval", "origin": "export", "origin_row": True},
            "origin_row: expected int, got True",
        ),
        (
            ModeSwitchEvidence,
            {"mode": "sleep", "origin": "export", "origin_row": 3},
            "ModeSwitchEvidence.mode: 'sleep'",
        ),
        (CaptureEvidence, {"flow": "ptq", "api": "x"}, "CaptureEvidence: missing 'capture'"),
        (MovedImportEvidence, None, "MovedImportEvidence: expected an object, got None"),
    ],
)
def test_malformed_evidence_is_refused_naming_the_field(cls, data, message):
    with pytest.raises(EvidenceError, match=re.escape(message)):
        cls.from_json(data)


def test_the_worker_refuses_malformed_evidence_before_running_a_check():
    params = {"code": "QL101", "evidence": {"kind": "comparison", "ops": [{"namespace": "aten"}]}, "fix": None}
    record = run_check(params)
    assert record == {
        "verdict": "skipped",
        "evidence": "malformed evidence for QL101: OpEvidence.ops[0]: missing 'op'",
        "fix_verified": None,
    }


def test_the_linter_side_of_the_contract_never_imports_torch():
    code = (
        "import sys, qlint.evidence, qlint.registry, qlint.runtime.request, qlint.runtime.checks as c; "
        "qlint.registry.rules(); assert c.evidence_problem('QL101', {}) is not None; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('torch', 'torchao', 'executorch')]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_every_evidence_type_is_importable_from_the_package_and_from_its_module():
    import importlib

    import qlint.evidence as ev

    for name, home in ev._HOMES.items():
        cls = getattr(ev, name)
        assert cls is getattr(importlib.import_module(f"qlint.evidence.{home}"), name)
        assert issubclass(cls, ev.Evidence) and name in dir(ev)
    with pytest.raises(AttributeError):
        ev.NoSuchEvidence  # noqa: B018


def test_a_check_creates_only_the_evidence_types_of_the_rules_the_file_triggers(tmp_path):
    # Each evidence dataclass costs its compiled methods at start-up: a file that triggers
    # QL201 (and QL401's prefilter) must not pay for the other rules' types, and QL201 still
    # reports.
    target = tmp_path / "capture.py"
    target.write_text(
        "import torch\nfrom torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n\n\n"
        "def quantize(model, inputs, quantizer):\n"
        "    captured = torch.export.export(model, inputs).module()\n"
        "    return prepare_pt2e(captured, quantizer)\n"
    )
    code = (
        "import sys, json, io, contextlib\nfrom qlint import cli\nout = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n"
        f"        cli.main(['check', '--no-cache', '--output-format', 'json', {str(target)!r}])\n"
        "    except SystemExit:\n        pass\n"
        "found = json.loads(out.getvalue())\n"
        "print(json.dumps([d['code'] for d in found]))\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('qlint.evidence.'))))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    findings, modules = run.stdout.splitlines()[-2:]
    assert json.loads(findings) == ["QL201"]
    # `torchao.quantization` holds QL401's trigger `ao.quantization`, but QL401's text trigger
    # (the successor package is no old spelling) turns it away before its module is imported;
    # QL101-QL103, QL204, QL301 and QL402 are not imported either. QL203 is: a module that
    # prepares a graph may hand it to a helper that switches its mode.
    assert json.loads(modules) == ["qlint.evidence.capture", "qlint.evidence.mode_switch"]
