"""QL201: a part of a model parameter (`export(model.model, ...)`) is followed by its attribute
names (`switched_parts`): the helper may write its other attributes and store the prepared graph
back after the capture, and a caller's changes to other parts leave the captured one in eval
mode. `deepspeed.init_inference(model, ...).module` is the model handed in (`library_engines`).

Loud where the captured part (or a module on the way to it, or in it) is replaced or switched
before the capture, through an alias too, or by a project function the caller hands the whole
model to; where the part of a train-mode model is captured; and where `init_inference` is not
DeepSpeed's or the engine's `.module` was replaced.
"""

from __future__ import annotations

import pytest

from tests.conftest import lint

HEAD = """\
import torch
import deepspeed
import fastpath
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Body()
        self.head = Body()

    def forward(self, x):
        return self.head(self.model(x))


def unfreeze(m):
    m.train()


def quantize_body(model, x, q):
{body}
"""


def ql201(body: list[str], caller: list[str]) -> list[str]:
    src = HEAD.format(body="".join(f"    {line}\n" for line in body))
    src += "\n\ndef main(x, q):\n" + "".join(f"    {line}\n" for line in caller)
    return [src.splitlines()[d.range.start.row - 1].strip() for d in lint(src, select=("QL201",))]


CAPTURE = "exported = torch.export.export(model.model, (x,)).module()"
STORE_BACK = ["model.model = prepare_pt2e(exported, q)", "return model"]
EVAL_CALLER = ["m = Net().eval()", "quantize_body(m, x, q)"]


@pytest.mark.parametrize(
    "body",
    [
        # What the helper writes after the capture, or to other parts, leaves the captured one.
        ["model.config = {'q': q}", CAPTURE, *STORE_BACK],
        ["setattr(model, 'extra', 1)", "model.head = Body()", CAPTURE, *STORE_BACK],
        ["config = model.config", "config.seen = True", CAPTURE, *STORE_BACK],
        ["model.head.train()", "unfreeze(model.head)", CAPTURE, *STORE_BACK],
        ["model.add_module('extra', Body())", CAPTURE, *STORE_BACK],
        # A branch after the capture (optimum-habana's load path) does not run before it.
        [
            "if q is not None:",
            f"    {CAPTURE}",
            "    model.model = prepare_pt2e(exported, q)",
            "else:",
            "    del model.model",
            "    model.model = torch.export.load('m.pt2').module()",
            "return model",
        ],
    ],
)
def test_a_helper_that_leaves_the_captured_part_alone_is_vouched_for(body):
    assert ql201(body, EVAL_CALLER) == []


@pytest.mark.parametrize(
    "body",
    [
        ["model.model = Body()", CAPTURE, *STORE_BACK],
        ["setattr(model, 'model', Body())", CAPTURE, *STORE_BACK],
        ["model.add_module('model', Body())", CAPTURE, *STORE_BACK],
        ["model.model.bn = nn.BatchNorm1d(4)", CAPTURE, *STORE_BACK],
        ["model.model.train()", CAPTURE, *STORE_BACK],
        ["model.train()", CAPTURE, *STORE_BACK],
        ["unfreeze(model.model)", CAPTURE, *STORE_BACK],
        ["model.apply(unfreeze)", CAPTURE, *STORE_BACK],
        ["body = model.model", "body.train()", CAPTURE, *STORE_BACK],
        ["for child in model.children():", "    child.train()", CAPTURE, *STORE_BACK],
        # In a loop, what comes after the capture runs before the next one.
        ["for _ in range(2):", f"    {CAPTURE}", "    model.model.train()", "return prepare_pt2e(exported, q)"],
        # A nested function may run before the capture.
        ["def reset():", "    model.model = Body()", "reset()", CAPTURE, *STORE_BACK],
    ],
)
def test_a_helper_that_changes_the_captured_part_first_stays_reported(body):
    assert ql201(body, EVAL_CALLER) == [CAPTURE]


def test_the_part_of_a_train_mode_model_is_reported():
    body = ["model.config = {'q': q}", CAPTURE, *STORE_BACK]
    assert ql201(body, ["quantize_body(Net(), x, q)"]) == [CAPTURE]
    assert ql201(body, ["m = Net().eval()", "m.train()", "quantize_body(m, x, q)"]) == [CAPTURE]


@pytest.mark.parametrize(
    "caller",
    [
        ["m = Net().eval()", "m.pt2e_config = {'q': q}", "quantize_body(m, x, q)"],
        ["m = Net().eval()", "m.head.train()", "quantize_body(m, x, q)"],
        ["m = Net().eval()", "m.add_module('extra', Body())", "quantize_body(m, x, q)"],
        ["m = Net().eval()", "head = m.head", "head.train()", "quantize_body(m, x, q)"],
    ],
)
def test_a_caller_changing_other_parts_after_the_switch_vouches_for_the_captured_one(caller):
    assert ql201([CAPTURE, *STORE_BACK], caller) == []


@pytest.mark.parametrize(
    "caller",
    [
        ["m = Net().eval()", "m.model.train()", "quantize_body(m, x, q)"],
        ["m = Net().eval()", "body = m.model", "body.train()", "quantize_body(m, x, q)"],
        ["m = Net().eval()", "m.model = Body()", "quantize_body(m, x, q)"],
        ["m = Net().eval()", "m.model.bn = nn.BatchNorm1d(4)", "quantize_body(m, x, q)"],
        ["m = Net().eval()", "m.set_submodule('model.bn', nn.BatchNorm1d(4))", "quantize_body(m, x, q)"],
        ["m = Net().eval()", "for child in m.children():", "    child.train()", "quantize_body(m, x, q)"],
    ],
)
def test_a_caller_replacing_or_switching_the_captured_part_keeps_the_finding(caller):
    assert ql201([CAPTURE, *STORE_BACK], caller) == [CAPTURE]


@pytest.mark.parametrize(
    "caller",
    [
        ["m = Net()", "m.eval()", "m = deepspeed.init_inference(m, dtype=torch.half)", "m = m.module"],
        ["m = Net()", "m.eval()", "engine = deepspeed.init_inference(model=m)", "m = engine.module"],
        ["m = Net().eval()", "m = deepspeed.init_inference(m).module"],
    ],
)
def test_deepspeed_inference_engine_hands_back_the_eval_model(caller):
    assert ql201([CAPTURE, *STORE_BACK], [*caller, "quantize_body(m, x, q)"]) == []


@pytest.mark.parametrize(
    "caller",
    [
        # A train-mode model in the engine is still in train mode.
        ["m = Net()", "m = deepspeed.init_inference(m, dtype=torch.half).module"],
        # The engine's `.module` replaced before it is read.
        ["m = Net().eval()", "engine = deepspeed.init_inference(m)", "engine.module = Net()", "m = engine.module"],
        # Another attribute of the engine is not the model.
        ["m = Net().eval()", "m = deepspeed.init_inference(m).config"],
    ],
)
def test_deepspeed_engine_look_alikes_keep_the_finding(caller):
    assert ql201([CAPTURE, *STORE_BACK], [*caller, "quantize_body(m, x, q)"]) == [CAPTURE]


def test_a_project_function_named_init_inference_is_not_deepspeeds():
    src = HEAD.format(body=f"    {CAPTURE}\n    return prepare_pt2e(exported, q)\n")
    src += (
        "\n\nclass Engine:\n    def __init__(self, model):\n        self.module = Net()\n\n\n"
        "def init_inference(model):\n    return Engine(model)\n\n\n"
        "def main(x, q):\n    m = Net().eval()\n    quantize_body(init_inference(m).module, x, q)\n"
    )
    found = [src.splitlines()[d.range.start.row - 1].strip() for d in lint(src, select=("QL201",))]
    assert found == [CAPTURE]


WHOLE = """\
import torch
{imports}
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(x)


def run(x, q):
    model = Net()
{switch}    model = {call}(model, dtype=torch.float)
    model = model.module
    return prepare_pt2e(torch.export.export(model, (x,)).module(), q)
"""


@pytest.mark.parametrize(
    ("imports", "call"),
    [("import deepspeed", "deepspeed.init_inference"), ("from deepspeed import init_inference", "init_inference")],
)
def test_a_model_captured_from_the_engine_has_the_mode_it_was_given(imports, call):
    evaled = WHOLE.format(imports=imports, switch="    model.eval()\n", call=call)
    assert lint(evaled, select=("QL201",)) == []
    found = lint(WHOLE.format(imports=imports, switch="", call=call), select=("QL201",))
    assert [d.code for d in found] == ["QL201"]
    assert "in train mode" in found[0].message


HELPERS = """

def compiled(model):
    model.model = torch.compile(model.model)
    return model


def wrapped(model):
    model.model = fastpath.wrap(model.model)
    return model


def tagged(model):
    model.tag = "v1"
    model.head = Body()
    return model


def patched(model):
    for name, child in model.named_children():
        setattr(model, name, Body())


def described(model):
    print(type(model.model).__name__, model.training)
"""


@pytest.mark.parametrize(
    ("caller", "found"),
    [
        # torch.compile hands back the part in its mode (`mode_keeping`); a library not known to is not read so.
        (["m = Net().eval()", "m = compiled(m)", "quantize_body(m, x, q)"], []),
        (["m = Net().eval()", "m = wrapped(m)", "quantize_body(m, x, q)"], [CAPTURE]),
        (["m = Net().eval()", "patched(m)", "quantize_body(m, x, q)"], [CAPTURE]),
        # A project function that changes only other parts leaves the captured one alone.
        (["m = Net().eval()", "m = tagged(m)", "quantize_body(m, x, q)"], []),
    ],
)
def test_a_project_function_handed_the_model_may_replace_the_captured_part(caller, found):
    src = HEAD.format(body=f"    {CAPTURE}\n    model.model = prepare_pt2e(exported, q)\n    return model\n")
    src += HELPERS + "\n\ndef main(x, q):\n" + "".join(f"    {line}\n" for line in caller)
    assert [src.splitlines()[d.range.start.row - 1].strip() for d in lint(src, select=("QL201",))] == found


@pytest.mark.parametrize(
    ("first", "found"),
    [
        ("patched(model)", [CAPTURE]),
        ("model = compiled(model)", []),
        ("model = wrapped(model)", [CAPTURE]),
        ("described(model)", []),
    ],
)
def test_a_project_function_the_helper_hands_its_model_to_first(first, found):
    src = HEAD.format(
        body=f"    {first}\n    {CAPTURE}\n    model.model = prepare_pt2e(exported, q)\n    return model\n"
    )
    src += HELPERS + "\n\ndef main(x, q):\n    m = Net().eval()\n    quantize_body(m, x, q)\n"
    assert [src.splitlines()[d.range.start.row - 1].strip() for d in lint(src, select=("QL201",))] == found
