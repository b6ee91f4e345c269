"""QL201/QL202: `m.apply(lambda mod: mod.eval())` (`applied_lambdas`), read as `m.apply(fn)` of
a named function with the same body is (`looped_switches`): a lambda whose body is one switch
of its parameter switches every module; `mod.eval() if isinstance(mod, nn.BatchNorm2d) else
None` switches the modules of those classes only. The lambda written in the call, or a local
name bound once to it.

Loud where the code is wrong: a PTQ capture after `m.eval()` and `m.apply(lambda mod:
mod.train())` (a recall hole before: the lambda was an unknown function), a lambda that does
something else, switches another object or selects modules by a value the analysis does not
follow, a model trained again after it, and a QAT capture after a lambda that evals.
"""

from __future__ import annotations

import pytest

from tests.test_ql201_looped_switches import FIRST, messages


@pytest.mark.parametrize(
    "body",
    [
        "m = Net()\nm.apply(lambda mod: mod.eval())",
        "m = Net().train()\nm.apply(lambda mod: mod.train(False))",
        "m = Net()\nm.apply(lambda mod: mod.train(mode=False))",
        "m = Net()\nto_eval = lambda mod: mod.eval()\nm.apply(to_eval)",
        # Every class the model's mode-dependent content is of: as `m.eval()`.
        "m = Net()\nm.apply(lambda mod: mod.eval() if isinstance(mod, (nn.BatchNorm2d, nn.Dropout)) else None)",
        # Trained, then evaled module by module.
        "m = Net().eval()\nm.apply(lambda mod: mod.train())\nm.apply(lambda mod: mod.eval())",
    ],
)
def test_ptq_capture_after_a_lambda_that_evals_every_module_is_quiet(body):
    assert messages(body, "QL201") == []


@pytest.mark.parametrize(
    ("body", "words"),
    [
        # Trained through the lambda: the recall hole (stop 44, lane `recallholes`).
        (
            "m = Net().eval()\nm.apply(lambda mod: mod.train())",
            f"in train mode (after `mod.train()` at line {FIRST + 1})",
        ),
        ("m = Net().eval()\nprep = lambda mod: mod.train(True)\nm.apply(prep)", "after `m.apply(prep)`"),
        # A batch-norm freeze leaves the dropout in train mode.
        (
            "m = Net()\nm.apply(lambda mod: mod.eval() if isinstance(mod, nn.BatchNorm2d) else None)",
            "built at line",
        ),
        # Evaled by the lambda, trained again after it.
        ("m = Net()\nm.apply(lambda mod: mod.eval())\nm.train()", f"after `m.train()` at line {FIRST + 2}"),
        # Not a switch of the module handed in, or selected by a value not followed.
        ("m = Net()\nm.apply(lambda mod: init_weights(mod))", "built at line"),
        ("m = Net()\nm.apply(lambda mod: m.eval())", "built at line"),
        ("m = Net()\nm.apply(lambda mod: mod.eval() if flag else None)", "built at line"),
        ("m = Net()\nm.apply(lambda mod: mod.eval() if 'bn' in str(mod) else None)", "built at line"),
        ("m = Net()\nm.apply(lambda mod, keep=True: mod.eval())", "built at line"),
        # Another model's modules evaled.
        ("m = Net()\nother = Net()\nother.apply(lambda mod: mod.eval())", "built at line"),
        # A name bound twice is not known to be the lambda.
        ("m = Net()\nfix = lambda mod: mod.eval()\nif flag:\n    fix = print\nm.apply(fix)", "built at line"),
    ],
)
def test_ptq_capture_with_modules_left_in_train_mode_is_reported(body, words):
    (message,) = messages(body, "QL201")
    assert words in message


@pytest.mark.parametrize(
    "body",
    [
        # The QAT side of the recall hole: trained through a lambda after an eval.
        "m = Net().eval()\nm.apply(lambda mod: mod.train())",
        "m = Net().eval()\nprep = lambda mod: mod.train()\nm.apply(prep)",
    ],
)
def test_qat_capture_after_a_lambda_that_trains_every_module_is_quiet(body):
    assert messages(body, "QL202") == []


@pytest.mark.parametrize(
    ("body", "words"),
    [
        # Named by the lambda's switch, as a loop's is: the whole call can be long.
        ("m = Net()\nm.apply(lambda mod: mod.eval())", f"(after `mod.eval()` at line {FIRST + 1})"),
        (
            "m = Net().train()\nm.apply(lambda mod: mod.eval() if isinstance(mod, nn.BatchNorm2d) else mod)",
            f"every BatchNorm2d of `m` in eval mode after `mod.eval()` at line {FIRST + 1}",
        ),
        (
            'm = Net().train()\nm.apply(lambda mod: mod.eval() if "BatchNorm" in type(mod).__name__ else None)',
            "every BatchNorm2d of `m` in eval mode",
        ),
    ],
)
def test_qat_capture_after_a_lambda_that_evals_is_reported(body, words):
    (message,) = messages(body, "QL202")
    assert words in message
