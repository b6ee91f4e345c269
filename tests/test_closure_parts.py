"""QL201: a class written in a function whose `__init__` takes its modules from that function's
names (`closure_parts`; voyager-compiler `test/test_codegen.py:508`).

    elif args.model == "llm":
        model = AutoModelForCausalLM.from_pretrained(path)     # eval mode
        class LlamaWrapper(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model.model
                self.lm_head = model.lm_head
            ...
        export(LlamaWrapper(), (x,))

was "built in train mode at its line": a fresh module. `__init__` reads `model` at the
construction, whose value there is the branch's, so it wraps that module as `W(model)` would.
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint
from tests.test_mode_free_helper_arguments import NET

HEAD = (
    """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
from transformers import AutoModelForCausalLM


"""
    + NET
    + """

def run(args, q, x):
"""
)

WRAPPER = """\
class LlamaWrapper(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.model = model.model
        self.lm_head = model.lm_head
        self.static_cache = past_key_values{init}

    def forward(self, h):
        for layer in self.model.layers:
            h = layer(h, self.static_cache)[0]
            if args.single_layer:
                break
        {forward}return self.lm_head(h)

"""
CAPTURE = "gm = prepare_pt2e(torch.export.export(LlamaWrapper(), (x,)).module(), q)\n"
PRETRAINED = (
    "model = AutoModelForCausalLM.from_pretrained(args.path)\n"
    "past_key_values = model(tokenize(args.text)).past_key_values\n"
)


def ql201(body: str, init: str = "", forward: str = "") -> list[str]:
    wrapper = WRAPPER.replace("{init}", init).replace("{forward}", forward)
    src = HEAD + textwrap.indent(body.replace("{wrapper}", wrapper), "    ")
    return [d.message for d in lint(src, select=("QL201",)) if d.code == "QL201"]


def _in_branch(load: str) -> str:
    """The voyager shape: each branch binds `model`, the wrapper is written and built in one."""
    return (
        "if args.model == 'net':\n"
        "    model = Net()\n"
        "    evaluate(model)\n"  # another arm: not on a path through the wrapper's build
        "    prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)\n"
        "elif args.model == 'llm':\n" + textwrap.indent(load + "{wrapper}" + CAPTURE, "    ") + "else:\n"
        "    model = Net()\n"
    )


def test_a_wrapper_of_the_functions_evaled_model_is_in_its_mode():
    for load in (PRETRAINED, "model = Net().eval()\npast_key_values = model(tokenize(args.text)).cache\n"):
        assert ql201(load + "{wrapper}" + CAPTURE) == [], load


def test_the_value_read_is_the_branchs_where_the_wrapper_is_built():
    assert ql201(_in_branch(PRETRAINED)) == []


def test_a_wrapper_of_the_functions_train_mode_model_is_reported():
    for load in (
        "model = Net()\npast_key_values = None\n",
        PRETRAINED + "model.train()\n",
        PRETRAINED.replace("from_pretrained(args.path)", "from_pretrained(args.path).train()"),
    ):
        (message,) = ql201(load + "{wrapper}" + CAPTURE)
        assert "captured for PTQ in train mode" in message, load
    # Switched after the construction: the wrapper holds its parts, now in train mode.
    late = PRETRAINED + "{wrapper}w = LlamaWrapper()\nmodel.train()\n"
    assert len(ql201(late + CAPTURE.replace("LlamaWrapper()", "w"))) == 1


def test_a_wrapper_built_after_branches_one_of_which_builds_a_fresh_model_is_reported():
    body = "if args.pretrained:\n" + textwrap.indent(PRETRAINED, "    ")
    body += "else:\n    model = Net()\n    past_key_values = None\n"
    assert len(ql201(body + "{wrapper}" + CAPTURE)) == 1


def test_a_wrapper_with_a_mode_dependent_part_of_its_own_or_reading_its_flag_is_reported():
    for init, forward in (
        ("\n        self.drop = nn.Dropout(0.1)", ""),
        ("\n        self.norm = nn.BatchNorm1d(3)", ""),
        ("\n        self.train()", ""),
        ("", "if self.training:\n            h = h * 2\n        "),
    ):
        assert len(ql201(PRETRAINED + "{wrapper}" + CAPTURE, init, forward)) == 1, (init, forward)


def test_a_method_running_a_module_of_the_function_when_it_runs_is_read_in_its_mode():
    # `forward` runs what the function's name holds at the capture: the object it held at the
    # construction when the function binds the name once (`closure_switches`).
    body = PRETRAINED + "extra = Net()\n{wrapper}" + CAPTURE
    assert len(ql201(body, forward="h = extra(h)\n        ")) == 1
    assert ql201(body, forward="h = h + model(h)\n        ") == []


def test_a_name_declared_nonlocal_or_bound_in_a_comprehension_is_not_read():
    nonlocal_ = PRETRAINED + "def swap():\n    nonlocal model\n    model = Net()\nswap()\n{wrapper}" + CAPTURE
    assert len(ql201(nonlocal_)) == 1
    comprehension = "\n        self.parts = [model for model in [Net()]]"
    assert len(ql201(PRETRAINED + "{wrapper}" + CAPTURE, init=comprehension)) == 1


def test_a_container_or_a_parameter_of_the_function_the_wrapper_stores_is_not_read():
    # `[Net()]` holds a train-mode module the wrapper's mode would not include; a parameter is
    # whatever module the callers pass.
    for pre, init in (
        ("heads = [Net()]\n", "\n        self.head = heads[0]"),
        ("heads = {'a': Net()}\n", "\n        self.head = heads['a']"),
        ("", "\n        self.extra = args.extra"),
    ):
        assert len(ql201(PRETRAINED + pre + "{wrapper}" + CAPTURE, init=init)) == 1, init


def test_a_model_handed_to_a_helper_or_aliased_on_the_wrappers_path_is_not_read():
    # A helper of unknown code may switch it (`given_modes`' `calibrate(inner)`).
    for between in ("calibrate(model)\n", "alias = model\nalias.apply(init)\n", "model.apply(init)\n"):
        assert len(ql201(PRETRAINED + between + "{wrapper}" + CAPTURE)) == 1, between
    late = PRETRAINED + "{wrapper}w = LlamaWrapper()\ncalibrate(model)\n"
    assert len(ql201(late + CAPTURE.replace("LlamaWrapper()", "w"))) == 1
