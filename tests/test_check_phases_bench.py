"""benchmarks/check_phases.py times the in-process check after each keystroke; `--no-carry`
times it as a new process's check of the module, with nothing carried from its last check."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from qlint.analysis.flow import model_interp
from tests.conftest import old_package

_ROOT = Path(__file__).resolve().parent.parent
_CAPTURES = "\n\n".join(
    f"""def capture_{i}(x, quantizer):
    model = nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3))
    ep = export(model, (x,)).module()
    return prepare_pt2e(ep, quantizer)"""
    for i in range(4)
)
_MODULE = f"""from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


{_CAPTURES}
"""


def _bench():
    path = _ROOT / "benchmarks" / "check_phases.py"
    spec = importlib.util.spec_from_file_location("check_phases", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))  # its `keystroke_edits` import
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def _bodies_analysed(monkeypatch, tmp_path: Path, name: str, carry: bool) -> tuple[int, int]:
    """(bodies the model flow analysed in all the checks, findings) for `measure`."""
    (tmp_path / name / ".git").mkdir(parents=True)
    pkg = old_package(tmp_path / name, capture=_MODULE)
    analysed: list[object] = []
    run = model_interp.Interpreter.run

    def counted(self):
        analysed.append(self.func)
        return run(self)

    monkeypatch.setattr(model_interp.Interpreter, "run", counted)
    _, phases, findings, _ = _bench().measure(str(pkg / "capture.py"), 3, False, carry=carry)
    assert "QL201" in phases
    return len(analysed), findings


def test_no_carry_analyses_every_body_at_every_check(monkeypatch, tmp_path):
    carried, found = _bodies_analysed(monkeypatch, tmp_path, "carried", carry=True)
    fresh, found_fresh = _bodies_analysed(monkeypatch, tmp_path, "fresh", carry=False)
    assert found == found_fresh == 4
    # The first check analyses the module body and the four functions either way. Each of the
    # three edited checks analyses them all again without the carry; with it, only the
    # edited function and the module body (whose text holds the edit).
    assert fresh == 4 * 5
    assert carried == 5 + 3 * 2
