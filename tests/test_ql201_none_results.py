"""QL201: a caller that hands a helper what a project function without a result returned.

`aten = to_executorch(model); quantize_4_executorch(aten)` (ETH-PBL/Nano-VS-SLAM): the helper
captures its parameter, and its only caller passes the value of a function that ends without
`return <value>` on every path, None, so no model in train mode reaches the capture. Only a
plain function of the module defining it, called by its name, counts: one that returns a
value on some path, a decorated one, a generator or coroutine function, a method, a name its
module rebinds, one imported under another name keep the report, and so does another caller
passing a train-mode model, or a caller passing the model it handed such a function.
"""

from __future__ import annotations

import textwrap

from tests.conftest import check_file

HEAD = """\
import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
"""
HELPER = """
def quantize_4(model, quantizer, x):
    captured = export(model, (x,)).module()
    return prepare_pt2e(captured, quantizer)
"""
TO_ET = """
def to_et(program):
    edge = lower(program)
    with open("model.pte", "wb") as file:
        file.write(edge.buffer)
"""
NET = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)
"""
CALLER = """
from pkg.quant import quantize_4, to_et
from pkg.nets import Net

def main(quantizer, x):
    model = Net()
    aten = to_et(model)
    quantize_4(aten, quantizer, x)
"""


def _repo(tmp_path, to_et: str = TO_ET, extra: str = "", **scripts: str):
    """The helper and `to_et` in `pkg/quant.py`, a BatchNorm model in `pkg/nets.py`, callers
    in `scripts/` (`CALLER` unless others are given)."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").touch()
    (root / "pkg" / "quant.py").write_text(HEAD + HELPER + textwrap.dedent(to_et) + textwrap.dedent(extra))
    (root / "pkg" / "nets.py").write_text(HEAD + NET)
    (root / "scripts").mkdir()
    for name, body in (scripts or {"run": CALLER}).items():
        (root / "scripts" / f"{name}.py").write_text(HEAD + textwrap.dedent(body))
    return root


def _findings(root):
    return check_file(root / "pkg" / "quant.py", ("QL201",)).diagnostics


def _loud(root):
    (d,) = _findings(root)
    assert "as parameter `model`" in d.message


def test_only_caller_hands_on_what_a_function_without_result_returned(tmp_path):
    assert _findings(_repo(tmp_path)) == []


def test_bare_returns_and_return_none_return_nothing(tmp_path):
    to_et = TO_ET.replace(
        "    edge = lower(program)\n", "    if program is None:\n        return\n    edge = lower(program)\n"
    )
    to_et += "    return None\n"
    assert _findings(_repo(tmp_path, to_et)) == []


def test_nested_function_returning_a_value_is_not_the_result(tmp_path):
    to_et = TO_ET + "\n    def keep():\n        return program\n\n    keep()\n"
    assert _findings(_repo(tmp_path, to_et)) == []


def test_value_returned_on_one_path_keeps_the_finding(tmp_path):
    to_et = TO_ET.replace(
        "    edge = lower(program)\n",
        "    if isinstance(program, nn.Module):\n        return program\n    edge = lower(program)\n",
    )
    _loud(_repo(tmp_path, to_et))


def test_decorated_function_keeps_the_finding(tmp_path):
    _loud(_repo(tmp_path, "\nimport functools\n\n@functools.wraps(print)" + TO_ET))


def test_generator_keeps_the_finding(tmp_path):
    _loud(_repo(tmp_path, TO_ET + "    yield\n"))


def test_coroutine_keeps_the_finding(tmp_path):
    _loud(_repo(tmp_path, TO_ET.replace("def to_et", "async def to_et")))


def test_name_rebound_by_its_module_keeps_the_finding(tmp_path):
    _loud(_repo(tmp_path, TO_ET + "\n\nto_et = torch.compile(to_et)\n"))


def test_name_rebound_by_the_callers_module_keeps_the_finding(tmp_path):
    caller = CALLER.replace("\ndef main", "\nto_et = torch.compile(to_et)\n\ndef main")
    _loud(_repo(tmp_path, run=caller))


def test_imported_under_another_name_keeps_the_finding(tmp_path):
    caller = CALLER.replace("quantize_4, to_et", "quantize_4, to_et as lower_it").replace(
        "to_et(model)", "lower_it(model)"
    )
    _loud(_repo(tmp_path, run=caller))


def test_method_without_result_keeps_the_finding(tmp_path):
    extra = """
    class Lowering:
        def to_et(self, program):
            lower(program)
    """
    caller = CALLER.replace("quantize_4, to_et", "quantize_4, Lowering").replace(
        "to_et(model)", "Lowering().to_et(model)"
    )
    _loud(_repo(tmp_path, extra=extra, run=caller))


def test_another_caller_passing_a_train_mode_model_keeps_the_finding(tmp_path):
    other = """
    from pkg.quant import quantize_4
    from pkg.nets import Net

    def other(quantizer, x):
        quantize_4(Net(), quantizer, x)
    """
    _loud(_repo(tmp_path, run=CALLER, other=other))


def test_model_handed_to_the_function_then_to_the_helper_keeps_the_finding(tmp_path):
    caller = CALLER.replace("quantize_4(aten,", "quantize_4(model,")
    _loud(_repo(tmp_path, run=caller))
