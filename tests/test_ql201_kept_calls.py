"""QL201: calls that hand back the module they are given in its mode (`mode_keeping`,
`kept_calls`, `kept_stores`).

An eval-mode model passed through `torch.compile`, Habana's `wrap_in_hpu_graph` or
neural-compressor's FP8 `prepare`/`convert` is still in eval mode; a helper that stores such a
call's result back over the part it captures (also through a local alias every assignment binds
to such a callable, or a project function that only does that), or swaps each child for a copy
taking its whole state, leaves the part's mode as it was.

Loud where the library is not one known to keep the mode, where neural-compressor's
configuration is not an `FP8Config` built there, where an alias may be a function that switches
to train, where a project function switches, builds new modules or stores something else, and
where the model was in train mode to begin with.
"""

from __future__ import annotations

import pytest

from tests.conftest import lint

HEAD = """\
import torch
import fastpath
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(self.bn(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Body()
        self.head = nn.Linear(4, 4)

    def forward(self, x):
        return self.head(self.model(x))


def quantize_body(model, x, q):
    exported = torch.export.export(model.model, (x,)).module()
    model.model = prepare_pt2e(exported, q)
    return model
"""
CAPTURE = "exported = torch.export.export(model.model, (x,)).module()"


def ql201(extra: str, caller: list[str]) -> list[str]:
    src = HEAD + extra + "\n\ndef main(x, q, flag, path):\n" + "".join(f"    {line}\n" for line in caller)
    return [src.splitlines()[d.range.start.row - 1].strip() for d in lint(src, select=("QL201",))]


# -- library calls ------------------------------------------------------------------------
INC = "from neural_compressor.torch.quantization import FP8Config, StaticQuantConfig, convert, prepare"
CONVERT = ["m = convert(m, config)"]


@pytest.mark.parametrize(
    "caller",
    [
        ["m = Net().eval()", "m = torch.compile(m, backend='eager')"],
        ["m = Net().eval()", "m = torch.compile(model=m)"],
        ["m = Net().eval()", "from habana_frameworks.torch.hpu import wrap_in_hpu_graph", "m = wrap_in_hpu_graph(m)"],
        [
            "m = Net().eval()",
            "if flag:",
            "    import habana_frameworks.torch.hpu as hpu",
            "    m = hpu.wrap_in_hpu_graph(m)",
        ],
        [INC, "m = Net().eval()", "config = FP8Config.from_json_file(path)", "m = prepare(m, config)", *CONVERT],
        [INC, "m = Net().eval()", "m = convert(m, FP8Config(fp8_config='E4M3'))"],
    ],
)
def test_a_library_call_that_keeps_the_mode_leaves_the_model_in_eval_mode(caller):
    assert ql201("", [*caller, "quantize_body(m, x, q)"]) == []


@pytest.mark.parametrize(
    "caller",
    [
        # A library not known to keep the mode.
        ["m = Net().eval()", "m = fastpath.wrap(m)"],
        # neural-compressor dispatches on the configuration's class: another may export or train.
        [INC, "m = Net().eval()", "m = prepare(m, StaticQuantConfig())"],
        [INC, "m = Net().eval()", "m = prepare(m, q)"],
        [INC, "m = Net().eval()", "config = FP8Config()", "if flag:", "    config = q", "m = convert(m, config)"],
        [INC, "m = Net().eval()", "m = convert(m)"],
        # A model in train mode is kept in train mode.
        ["m = torch.compile(Net())"],
        [INC, "m = Net()", "m = convert(m, FP8Config())"],
    ],
)
def test_other_calls_and_train_mode_models_keep_the_finding(caller):
    assert ql201("", [*caller, "quantize_body(m, x, q)"]) == [CAPTURE]


# -- project functions storing a kept part back ----------------------------------------------
REGIONS = """

def regions(module, **kwargs):
    if isinstance(module, nn.ModuleList):
        for key, child in module.named_children():
            child = torch.compile(child, **kwargs)
            setattr(module, key, child)
        return module
    for key, child in module.named_children():
        done = regions(child, **kwargs)
        setattr(module, key, done)
    return module


def compiled(model, flag):
    compile_fn = torch.compile
    if flag:
        compile_fn = regions
    model.model = compile_fn(model.model, backend="eager")
    return model
"""


@pytest.mark.parametrize(
    "caller",
    [
        ["m = Net().eval()", "m = compiled(m, flag)"],
        ["m = Net().eval()", "m.model = regions(m.model)"],
        ["m = Net().eval()", "m.model = torch.compile(m.model)"],
        ["m = Net().eval()", "regions(m)"],
    ],
)
def test_a_part_stored_back_kept_is_vouched_for(caller):
    assert ql201(REGIONS, [*caller, "quantize_body(m, x, q)"]) == []


@pytest.mark.parametrize(
    ("extra", "call"),
    [
        # The alias may be a function that switches to train.
        (
            "def retrain(module):\n    module.train()\n    return module\n\n\n"
            "def compiled2(model, flag):\n    fn = torch.compile\n    if flag:\n        fn = retrain\n"
            "    model.model = fn(model.model)\n    return model\n",
            "m = compiled2(m, flag)",
        ),
        # Or one qlint cannot read (a parameter).
        (
            "def compiled2(model, fn):\n    model.model = fn(model.model)\n    return model\n",
            "m = compiled2(m, flag)",
        ),
        # A project function that builds new modules in place of the children.
        (
            "def rebuilt(module):\n    for key, child in module.named_children():\n"
            "        setattr(module, key, Body())\n    return module\n",
            "m.model = rebuilt(m.model)",
        ),
        # One that stores a kept form of another child.
        (
            "def shuffled(module, other):\n    for key, child in module.named_children():\n"
            "        setattr(module, key, torch.compile(other))\n    return module\n",
            "m.model = shuffled(m.model, Body())",
        ),
        # A kept form of another part stored over the captured one.
        ("", "m.model = torch.compile(Body())"),
        ("", "m.model = torch.compile(m.head)"),
        # One that returns something else than it was given.
        ("def fresh(module):\n    return torch.compile(Body())\n", "m.model = fresh(m.model)"),
        # One that hands the module to a library qlint does not know, or to a helper that switches it.
        ("def tuned(module):\n    fastpath.tune(module)\n    return module\n", "m.model = tuned(m.model)"),
        (
            "def unfreeze(module):\n    module.train()\n\n\n"
            "def thawed(module):\n    unfreeze(module)\n    return module\n",
            "m.model = thawed(m.model)",
        ),
        # One that gives it a new part.
        ("def grown(module):\n    module.bn = nn.BatchNorm1d(4)\n    return module\n", "m.model = grown(m.model)"),
    ],
)
def test_look_alikes_that_may_change_the_part_keep_the_finding(extra, call):
    assert ql201(REGIONS + "\n\n" + extra, ["m = Net().eval()", call, "quantize_body(m, x, q)"]) == [CAPTURE]


# -- copies of a child taking its whole state ------------------------------------------------
COPY = """

class Scoped(nn.Module):
    def __init__(self, mod, *args, **kwargs):
        self.__dict__.update(mod.__dict__)

    def forward(self, x):
        return x @ self.weight.t()


class Fresh(nn.Module):
    def __init__(self, mod):
        super().__init__()
        self.__dict__.update(mod.__dict__)
        self.training = True

    def forward(self, x):
        return x


def patch(model, cls=Scoped):
    for name, module in model.named_children():
        if type(module) is nn.Linear:
            copy = Scoped(mod=module)
            setattr(model, name, copy)
        patch(module)


def patch_fresh(model):
    for name, module in model.named_children():
        if type(module) is nn.Linear:
            setattr(model, name, Fresh(module))
        patch_fresh(module)
"""


def test_children_swapped_for_copies_of_their_state_are_vouched_for():
    assert ql201(COPY, ["m = Net().eval()", "patch(m)", "quantize_body(m, x, q)"]) == []


def test_a_copy_that_sets_its_own_mode_keeps_the_finding():
    assert ql201(COPY, ["m = Net().eval()", "patch_fresh(m)", "quantize_body(m, x, q)"]) == [CAPTURE]


def test_a_caller_that_cannot_be_classified_still_keeps_the_finding():
    # Issue 14 item 7: one eval caller through kept calls does not vouch for another one.
    caller = ["m = Net().eval()", "m = torch.compile(m)", "quantize_body(m, x, q)", "quantize_body(load(path), x, q)"]
    assert ql201("", caller) == [CAPTURE]


def test_neural_compressor_hands_back_the_model_itself_unless_asked_for_a_copy():
    # In place (the default), what it returns is the model: switching that switches the model.
    inplace = [INC, "m = Net().eval()", "q8 = convert(m, FP8Config())", "q8.train()", "quantize_body(m, x, q)"]
    assert ql201("", inplace) == [CAPTURE]
    # `inplace=False` deep-copies it: switching the copy leaves the model in eval mode.
    copied = [INC, "m = Net().eval()", "q8 = convert(m, FP8Config(), inplace=False)", "q8.train()"]
    assert ql201("", [*copied, "quantize_body(m, x, q)"]) == []


def test_a_recursive_helper_is_judged_whole_not_by_the_parts_it_leaves_here():
    # Each call gives the module it is handed a new train-mode part: the one under `m.model` too,
    # though this body's own store (`module.extra`) is off the captured path.
    deep = (
        "\n\ndef deep(module):\n    for key, child in module.named_children():\n        deep(child)\n"
        "    module.extra = Body()\n"
    )
    assert ql201(deep, ["m = Net().eval()", "deep(m)", "quantize_body(m, x, q)"]) == [CAPTURE]
