"""QL201: a helper's callers hand the model over through a construct (issue 14).

The helper `quantize_module` captures its parameter without `eval()`; it is quiet only when
every caller in the project is read and passes an eval-mode model (or one whose mode cannot
change the graph). Each construct a caller hands the model through has a quiet case and loud
look-alikes: a train-mode model through the same construct, and one the analysis cannot
read (unknown never silences, issue 14 item 7).
"""

from __future__ import annotations

from tests.test_ql201 import ql201
from tests.test_ql201_project_callers import EVAL_CALLER, IMPORT, _check, _repo


def _found(tmp_path, caller: str) -> int:
    return len(_check(_repo(tmp_path, a=EVAL_CALLER, b=IMPORT + caller)).diagnostics)


# -- `wrapper.model.eval()`: a mode call on an attribute of a value the flow does not follow --
ATTRIBUTE_CALLER = """
def get_instance():
    wrapper = ThirdPartyWrapper(scale=2)
    wrapper.load_weights("w.pth")
    return wrapper.model.{call}

def main(quantizer, x):
    quantize_module(get_instance(), quantizer, x)
"""


def test_an_attribute_put_in_eval_mode_is_handed_over_in_eval_mode(tmp_path):
    # ExecuTorch's examples/qualcomm/oss_scripts/esrgan.py (`return model.model.eval()`).
    assert _found(tmp_path, ATTRIBUTE_CALLER.format(call="eval()")) == 0


def test_an_attribute_put_in_train_mode_or_left_alone_keeps_the_finding(tmp_path):
    assert _found(tmp_path / "t", ATTRIBUTE_CALLER.format(call="train()")) == 1
    assert _found(tmp_path / "f", ATTRIBUTE_CALLER.format(call="train(False).train()")) == 1
    assert _found(tmp_path / "u", ATTRIBUTE_CALLER.format(call="train(flag)")) == 1
    # Not switched at all: the attribute's mode is unknown, which vouches for nothing.
    assert _found(tmp_path / "n", ATTRIBUTE_CALLER.format(call="cpu()")) == 1


# -- `YOLO(path).model.eval()`: the same, on an attribute of what a call returned ------------
CALL_ATTRIBUTE_CALLER = """
def get_instance():
    return ThirdPartyWrapper(scale=2).model.{call}

def main(quantizer, x):
    quantize_module(get_instance(), quantizer, x)
"""


def test_an_attribute_of_a_call_put_in_eval_mode_is_handed_over_in_eval_mode(tmp_path):
    assert _found(tmp_path, CALL_ATTRIBUTE_CALLER.format(call="eval()")) == 0


def test_an_attribute_of_a_call_put_in_train_mode_or_left_alone_keeps_the_finding(tmp_path):
    assert _found(tmp_path / "t", CALL_ATTRIBUTE_CALLER.format(call="train()")) == 1
    assert _found(tmp_path / "f", CALL_ATTRIBUTE_CALLER.format(call="train(False).train()")) == 1
    assert _found(tmp_path / "u", CALL_ATTRIBUTE_CALLER.format(call="train(flag)")) == 1
    assert _found(tmp_path / "n", CALL_ATTRIBUTE_CALLER.format(call="cpu()")) == 1


# A project wrapper storing such a model (SonarSight's YOLO11n export, lane fresh37): the
# wrapper starts in train mode, but a construction switches none of the modules it is given.
WRAPPED_CALL_ATTRIBUTE = """
from torch import nn
from ultralytics import YOLO

class Backbone(nn.Module):
    def __init__(self, det):
        super().__init__()
        self.layers = det.model[:-1]

    def forward(self, x):
        for m in self.layers:
            x = m(x)
        return x

def main(quantizer, x):
    det = YOLO("yolo11n.pt").model{call}
    gm = export(Backbone(det), (x,)).module()
    prepared = prepare_pt2e(gm, quantizer)
    prepared(x)
    return convert_pt2e(prepared)
"""


def test_a_wrapper_of_an_attribute_of_a_call_put_in_eval_mode_is_in_eval_mode():
    assert ql201(WRAPPED_CALL_ATTRIBUTE.format(call=".eval()")) == []


def test_a_wrapper_of_an_attribute_of_a_call_not_put_in_eval_mode_keeps_the_finding():
    for call in [".train()", ".eval().train()", ".train(flag)", ".float()", ""]:
        (d,) = ql201(WRAPPED_CALL_ATTRIBUTE.format(call=call))
        assert "Backbone(det)" in d.message, call


# -- `source_transform(model, [f, g])`: a helper applies the callables it is given in turn ----
TRANSFORM_CALLER = """
def source_transform(model, transforms):
    for transform in transforms:
        model = transform(model)
    return model

def apply_one(model, fn):
    return fn(model)

def rebind_forward(module):
    module.forward = custom_forward.__get__(module)
    return module

def patch_in_place(module):
    _patch(module)
    return module

def to_train(module):
    module.train()
    return module

def wrap(module):
    return Wrapper(module)

def main(quantizer, x):
    model = load().eval()
    model = {call}
    quantize_module(model, quantizer, x)
"""


def test_transforms_that_return_the_model_as_given_keep_its_eval_mode(tmp_path):
    # ExecuTorch's examples/qualcomm/oss_scripts/efficientSAM/efficientSAM.py.
    for i, call in enumerate(
        [
            "source_transform(model, [rebind_forward, patch_in_place])",
            "source_transform(model, (patch_in_place,))",
            "source_transform(model, [])",
            "apply_one(model, rebind_forward)",
            "apply_one(model, fn=patch_in_place)",
        ]
    ):
        assert _found(tmp_path / str(i), TRANSFORM_CALLER.format(call=call)) == 0, call


def test_a_transform_that_trains_wraps_or_cannot_be_read_keeps_the_finding(tmp_path):
    for i, call in enumerate(
        [
            "source_transform(model, [rebind_forward, to_train])",
            "apply_one(model, to_train)",
            "source_transform(model, [wrap])",  # another object, built by a class it cannot read
            "source_transform(model, [rebind_forward, lambda m: m])",
            "source_transform(model, TRANSFORMS)",  # not a list it can read
            "source_transform(model, [unknown_transform])",
            "source_transform(load(), [rebind_forward])",  # the model itself is unknown
        ]
    ):
        assert _found(tmp_path / str(i), TRANSFORM_CALLER.format(call=call)) == 1, call


def test_a_train_mode_model_through_transforms_keeps_the_finding(tmp_path):
    caller = TRANSFORM_CALLER.replace("model = load().eval()", "model = torch.nn.BatchNorm2d(3)")
    assert _found(tmp_path, caller.format(call="source_transform(model, [rebind_forward])")) == 1
    # The same model in eval mode is quiet: the transforms do not decide alone.
    quiet = caller.replace("torch.nn.BatchNorm2d(3)", "torch.nn.BatchNorm2d(3).eval()")
    assert _found(tmp_path / "q", quiet.format(call="source_transform(model, [rebind_forward])")) == 0


def test_a_capture_of_what_the_transforms_return_in_the_same_module():
    src = """
def source_transform(model, transforms):
    for transform in transforms:
        model = transform(model)
    return model

def keep(module):
    return module

def to_eval(module):
    return module.eval()

def main(quantizer, x):
    model = source_transform(torch.nn.BatchNorm2d(3), [{names}])
    prepare_pt2e(export(model, (x,)).module(), quantizer)
"""
    (d,) = ql201(src.format(names="keep"))
    assert "in train mode" in d.message
    assert ql201(src.format(names="keep, to_eval")) != []  # in any order: `to_eval` may run first
    # The loop may not run (the flow does not count a list's items): the model as it came stays.
    assert ql201(src.format(names="to_eval")) != []
    one = src.replace(
        "source_transform(torch.nn.BatchNorm2d(3), [{names}])",
        "apply_one(torch.nn.BatchNorm2d(3), {names})",
    )
    one = one.replace("def keep", "def apply_one(model, fn):\n    return fn(model)\n\ndef keep")
    assert ql201(one.format(names="to_eval")) == []
    assert "in train mode" in ql201(one.format(names="keep"))[0].message


# -- a lambda, a callback: uses of the helper the flow does not read (a comprehension is read) --
LAMBDA_HELPER = """
def quantize(model, quantizer, x):
    prepare_pt2e(export(model, (x,)).module(), quantizer)

def main(quantizer, x, run):
    quantize(torch.nn.Linear(2, 2).eval(), quantizer, x)
    {use}
"""


def test_a_use_in_a_lambda_comprehension_or_callback_vouches_for_nothing():
    # Beside a caller passing an eval-mode model, each of these hands over a model the flow
    # never sees (here a train-mode batch norm): the helper is judged as if its callers were unknown.
    for use in [
        "run(lambda: quantize(torch.nn.BatchNorm2d(3), quantizer, x))",
        "run(lambda m: quantize(m, quantizer, x))",
        "run(quantize)",
        "run(functools.partial(quantize, quantizer=quantizer))",
    ]:
        (d,) = ql201(LAMBDA_HELPER.format(use=use))
        assert "as parameter `model`, in whatever mode the caller left it" in d.message, use


def test_a_call_in_a_comprehension_is_a_caller_read_as_its_loop():
    # (`comprehension_loops`) the item is the train-mode batch norm the tuple holds.
    use = "[quantize(m, quantizer, x) for m in (torch.nn.BatchNorm2d(3),)]"
    (d,) = ql201(LAMBDA_HELPER.format(use=use))
    assert "in train mode" in d.message and "BatchNorm2d" in d.message
    assert ql201(LAMBDA_HELPER.format(use=use.replace("BatchNorm2d(3)", "Linear(3, 3)"))) == []


def test_names_that_are_not_the_helper_do_not_count_as_uses():
    for use in [
        'print("quantize")',  # a string
        "quantize = None",  # a local of the same name, in another body
        "return quantize_all",  # another name
    ]:
        src = LAMBDA_HELPER.format(use="pass")
        src += f"\ndef other(quantize, run):\n    run(quantize)\n\ndef more():\n    {use}\n"
        assert ql201(src) == [], use
    # Calls in function bodies are read: a second eval-mode caller keeps it quiet.
    assert ql201(LAMBDA_HELPER.format(use="quantize(load().eval(), quantizer, x)")) == []


def test_an_attribute_of_a_call_captured_where_it_is_switched():
    # Captured in place: `.train()` was no value at main, so nothing was reported.
    src = """
    from ultralytics import YOLO

    def main(quantizer, x):
        gm = export(YOLO("yolo11n.pt").model{call}, (x,)).module()
        prepared = prepare_pt2e(gm, quantizer)
        prepared(x)
        return convert_pt2e(prepared)
    """
    (d,) = ql201(src.format(call=".train()"))
    assert "in train mode" in d.message
    assert ql201(src.format(call=".eval()")) == []
