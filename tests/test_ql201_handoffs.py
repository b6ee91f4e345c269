"""QL201: a helper's callers hand the model over through a construct (issue 14).

The helper `quantize_module` captures its parameter without `eval()`; it is quiet only when
every caller in the project is read and passes an eval-mode model (or one whose mode cannot
change the graph). Each construct a caller hands the model through has a quiet case and loud
look-alikes: a train-mode model through the same construct, and one the analysis cannot
read (unknown never silences, issue 14 item 7).
"""

from __future__ import annotations

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
