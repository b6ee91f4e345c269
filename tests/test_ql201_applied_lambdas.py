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

from tests.conftest import lint
from tests.test_ql201_looped_switches import FIRST, messages
from tests.test_ql201_part_modes import HEAD


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


# A name bound once at the module's top level (stop 46's note, item 5), and `functools.partial`
# of `Module.eval` / `Module.train`: read as the local lambda is, from a top-level function or
# method that binds the name no way of its own.
TO_EVAL = "\nto_eval = lambda mod: mod.eval()\n"
TO_TRAIN = "\nto_train = lambda mod: mod.train()\n"
PARTIALS = "\nimport functools\nfrom functools import partial\n"


def module_messages(top: str, body: str, rule: str, head: str = "") -> list[str]:
    """`messages` with `top` written at the module's top level, below the functions."""
    prepare = "prepare_pt2e" if rule == "QL201" else "prepare_qat_pt2e"
    src = HEAD.replace("BODY", body.replace("\n", "\n    ")).replace("PREPARE", prepare).replace("CAPTURED", "m")
    return [d.message for d in lint(src + head + top + PARTIALS, select=(rule,))]


METHOD = """
class Prep:
    def run(self, x, q):
        m = Net()
        m.apply(to_eval)
        return prepare_pt2e(torch.export.export(m, (x,)).module(), q)
"""
SCRIPT = """
m = Net()
m.apply(to_eval)
prepared = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
"""


@pytest.mark.parametrize(
    ("top", "body"),
    [
        (TO_EVAL, "m = Net()\nm.apply(to_eval)"),
        (
            "\nto_eval = lambda mod: mod.eval() if isinstance(mod, (nn.BatchNorm2d, nn.Dropout)) else None\n",
            "m = Net()\nm.apply(to_eval)",
        ),
        ("\nto_eval = functools.partial(nn.Module.train, mode=False)\n", "m = Net()\nm.apply(to_eval)"),
        ("\nto_eval = partial(torch.nn.Module.eval)\n", "m = Net()\nm.apply(to_eval)"),
        # Trained by a module-level lambda, evaled by another.
        (TO_EVAL + TO_TRAIN, "m = Net().eval()\nm.apply(to_train)\nm.apply(to_eval)"),
        # The partial written in the call, or bound to a local name.
        ("", "m = Net()\nm.apply(partial(nn.Module.eval))"),
        ("", "m = Net()\nprep = functools.partial(nn.Module.train, mode=False)\nm.apply(prep)"),
        # Read from a method of a top-level class, and by the module's own code.
        (TO_EVAL + METHOD, "m = Net().eval()"),
        (TO_EVAL + SCRIPT, "m = Net().eval()"),
    ],
)
def test_ptq_capture_after_a_module_level_lambda_or_partial_that_evals_is_quiet(top, body):
    assert module_messages(top, body, "QL201") == []


@pytest.mark.parametrize(
    ("top", "body", "words"),
    [
        # Trained through the module's lambda or a partial: the recall hole.
        (TO_TRAIN, "m = Net().eval()\nm.apply(to_train)", "after `m.apply(to_train)`"),
        (
            "",
            "m = Net().eval()\nm.apply(functools.partial(nn.Module.train))",
            "after `functools.partial(nn.Module.train)`",
        ),
        ("\nto_train = partial(nn.Module.train, mode=True)\n", "m = Net().eval()\nm.apply(to_train)", "after `m.apply"),
        # The name bound twice, also defined or imported, or a parameter of the function.
        (TO_EVAL + "to_eval = print\n", "m = Net()\nm.apply(to_eval)", "built at line"),
        (TO_EVAL + "\n\ndef to_eval(mod):\n    pass\n", "m = Net()\nm.apply(to_eval)", "built at line"),
        (
            "\nif torch.cuda.is_available():\n    from models import to_eval\nelse:"
            + TO_EVAL.replace("\nto", "\n    to"),
            "m = Net()\nm.apply(to_eval)",
            "built at line",
        ),
        ("\nflag = lambda mod: mod.eval()\n", "m = Net()\nm.apply(flag)", "built at line"),
        # A function of the function's own shadows the module's name.
        (TO_EVAL, "def to_eval(mod):\n    pass\nm = Net()\nm.apply(to_eval)", "built at line"),
        # Not a switch: a positional flag binds the module's place, another function, a class filter not read.
        ("\nto_eval = partial(nn.Module.train, False)\n", "m = Net()\nm.apply(to_eval)", "built at line"),
        ("\nto_eval = partial(init_weights)\n", "m = Net()\nm.apply(to_eval)", "built at line"),
        ("\nto_eval = lambda mod: mod.eval() if flag else None\n", "m = Net()\nm.apply(to_eval)", "built at line"),
        # A batch-norm freeze at module level leaves the dropouts in train mode.
        (
            "\nto_eval = lambda mod: mod.eval() if isinstance(mod, nn.BatchNorm2d) else None\n",
            "m = Net()\nm.apply(to_eval)",
            "built at line",
        ),
        # Evaled by the module's lambda, trained again after it.
        (TO_EVAL, "m = Net()\nm.apply(to_eval)\nm.train()", "after `m.train()`"),
    ],
)
def test_ptq_capture_with_a_module_level_lambda_leaving_modules_in_train_mode_is_reported(top, body, words):
    (message,) = module_messages(top, body, "QL201")
    assert words in message


# A helper written in the function that binds the lambda (`enclosing_names`): the nearest
# enclosing function binding the name is where its value is read.
INNER = "def prep(model):\n    model.apply(to_eval)\n\nm = Net()\nprep(m)"


@pytest.mark.parametrize(
    ("top", "body"),
    [
        ("", "to_eval = lambda mod: mod.eval()\n" + INNER),
        ("", "to_eval = functools.partial(nn.Module.train, mode=False)\n" + INNER),
        # The enclosing binding hides the module's train lambda.
        ("\nto_eval = lambda mod: mod.train()\n", "to_eval = lambda mod: mod.eval()\n" + INNER),
        # No enclosing function binds it: the module's.
        (TO_EVAL, INNER),
    ],
)
def test_ptq_capture_after_a_helper_applying_an_enclosing_functions_lambda_is_quiet(top, body):
    assert module_messages(top, body, "QL201") == []


@pytest.mark.parametrize(
    ("top", "body"),
    [
        # The enclosing binding hides the module's lambda, and is no switch.
        (TO_EVAL, "to_eval = print\n" + INNER),
        # Bound twice, or another way too, in the enclosing function.
        ("", "to_eval = lambda mod: mod.eval()\nif flag:\n    to_eval = print\n" + INNER),
        ("", "to_eval = lambda mod: mod.eval()\nfor to_eval in flag:\n    pass\n" + INNER),
        ("", "to_eval = lambda mod: mod.eval()\nfrom models import to_eval\n" + INNER),
        # Rebound by another function written there, through `nonlocal`.
        (
            "",
            "to_eval = lambda mod: mod.eval()\ndef spoil():\n    nonlocal to_eval\n    to_eval = print\nspoil()\n"
            + INNER,
        ),
        # Trained through the enclosing function's lambda.
        ("", "m0 = None\nto_eval = lambda mod: mod.train()\n" + INNER.replace("m = Net()", "m = Net().eval()")),
    ],
)
def test_ptq_capture_after_a_helper_applying_an_enclosing_name_not_known_to_eval_is_reported(top, body):
    (message,) = module_messages(top, body, "QL201")
    assert "train mode" in message


def test_qat_capture_after_a_module_level_lambda_that_trains_is_quiet():
    assert module_messages(TO_TRAIN, "m = Net().eval()\nm.apply(to_train)", "QL202") == []


@pytest.mark.parametrize(
    ("top", "body"),
    [
        (TO_EVAL, "m = Net().train()\nm.apply(to_eval)"),
        ("", "m = Net()\nm.apply(partial(nn.Module.train, mode=False))"),
    ],
)
def test_qat_capture_after_a_module_level_lambda_or_partial_that_evals_is_reported(top, body):
    (message,) = module_messages(top, body, "QL202")
    assert "eval mode" in message


# A helper of another module applying that module's lambda: the helper's module is read from its
# summary, whose tables build a function only when asked (`held_entry`; before, asking where the
# name is bound raised on such a table, an internal error of the check).
CALLER = """
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from helpers import prep


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(x)


def run(q, x):
    model = prep(Net())
    return prepare_pt2e(torch.export.export(model, (x,)).module(), q)
"""
HELPER = "\nto_{mode} = lambda mod: mod.{mode}()\n\n\ndef prep(model):\n    model.apply(to_{mode})\n    return model\n"


@pytest.mark.parametrize(("mode", "reported"), [("eval", False), ("train", True)])
def test_a_helper_of_another_module_applying_its_modules_lambda(mode, reported):
    found = lint(CALLER, overlay={"helpers.py": HELPER.format(mode=mode)}, select=("QL201",))
    assert [("train mode" in d.message) for d in found] == ([True] if reported else [])
