"""QL201/QL202/QL203: mode switches written reflectively (issue 14; `reflective_switches`).

What each form does was read on torch 2.13 from the `training` arguments of the exported
graph's `batch_norm` and `dropout`: `getattr(m, "eval")()`, `nn.Module.eval(m)`,
`torch.nn.Module.train(m, False)` and `super().eval()` in a model's own method switch every
submodule; `setattr(m, "training", False)` and `m.training = False` set the root's flag alone,
and a model whose batch norm sits in a child still captures in train mode. `getattr(m,
"eval")()` runs the class's own `eval`; `nn.Module.eval(m)` passes over it but runs the
class's `train`. On an exported graph, `getattr(gm, "eval")()` and `nn.Module.eval(gm)` raise;
`nn.Module.train(gm, False)` and `setattr(gm, "training", False)` do not.

Each case is a module of one repository, read by a run over the tree, by `qlint check FILE`
and from standard input, which must agree.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.conftest import check_file, package_repository
from tests.switch_cases import file_findings, graph_cases, stdin_findings, tree_findings

HEAD = """
import torch
from torch import nn
from torch.nn import Module
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


class Base(nn.Module):
    def eval(self):
        return self


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.conv(x))
"""
CAPTURE = "    ep = torch.export.export(model, (x,)).module()"
RUN = """

def run(q, x):
    model = {cls}()
    {switch}
{capture}
    return prepare_{prep}(ep, q)
"""


def _source(switch: str, prep: str, methods: str = "", base: str = "nn.Module") -> str:
    """The capture after `switch`, of `Net` or, given `methods`, of a class holding them that
    derives from `Net` (or from `base` with a batch norm of its own)."""
    own, cls = "", "Net"
    if methods:
        cls = "Own"
        parent, body = ("Net", "") if base == "nn.Module" else (base, NET_BODY)
        own = f"\n\nclass Own({parent}):\n{body}" + textwrap.indent(methods, "    ")
    return HEAD + own + RUN.format(cls=cls, switch=switch, capture=CAPTURE, prep=prep)


NET_BODY = """    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(x)

"""

# (switch, methods of the model's class, its base): the model is in eval mode at the capture.
EVALED = {
    "getattr-eval": ('getattr(model, "eval")()', "", "nn.Module"),
    "getattr-train-false": ("getattr(model, 'train')(False)", "", "nn.Module"),
    "unbound-eval": ("nn.Module.eval(model)", "", "nn.Module"),
    "unbound-train-false": ("torch.nn.Module.train(model, False)", "", "nn.Module"),
    "imported-module-train-mode-false": ("Module.train(model, mode=False)", "", "nn.Module"),
    "super-in-eval-override": (
        "model.eval()",
        "def eval(self):\n    super().eval()\n    return self\n",
        "nn.Module",
    ),
    "super-with-arguments": (
        "model.eval()",
        "def eval(self):\n    super(Own, self).eval()\n    return self\n",
        "nn.Module",
    ),
    "super-train-false-in-a-method": ("model.freeze()", "def freeze(self):\n    super().train(False)\n", "nn.Module"),
    "unbound-eval-of-self": ("model.freeze()", "def freeze(self):\n    nn.Module.eval(self)\n", "nn.Module"),
    "getattr-eval-of-self": ("model.freeze()", "def freeze(self):\n    getattr(self, 'eval')()\n", "nn.Module"),
    # `Module.eval` passes over the class's own `eval`, which does nothing.
    "unbound-eval-past-a-noop-override": ("nn.Module.eval(model)", "def eval(self):\n    return self\n", "nn.Module"),
}

# The model is still in train mode at the capture (or its mode is not known to be eval).
TRAINING = {
    "setattr-training": ('setattr(model, "training", False)', "", "nn.Module"),
    "assigned-training": ("model.training = False", "", "nn.Module"),
    "getattr-train": ('getattr(model, "train")()', "", "nn.Module"),
    "unbound-train": ("nn.Module.train(model)", "", "nn.Module"),
    "getattr-not-called": ('fn = getattr(model, "eval")', "", "nn.Module"),
    "getattr-of-another-name": ('getattr(model, "cuda")()', "", "nn.Module"),
    "setattr-in-eval-override": (
        "model.eval()",
        "def eval(self):\n    setattr(self, 'training', False)\n    return self\n",
        "nn.Module",
    ),
    "noop-eval-override": ("model.eval()", "def eval(self):\n    return self\n", "nn.Module"),
    # `getattr` finds the class's own `eval`, as `model.eval()` does.
    "getattr-eval-of-a-noop-override": ('getattr(model, "eval")()', "def eval(self):\n    return self\n", "nn.Module"),
    # `Module.eval` is `self.train(False)`: the class's `train`, which does nothing, runs.
    "unbound-eval-into-a-noop-train": (
        "nn.Module.eval(model)",
        "def train(self, mode=True):\n    return self\n",
        "nn.Module",
    ),
    # An override forwarding its flag, called to train: left as today's reading has it.
    "super-train-forwarding-its-flag": (
        "model.train()",
        "def train(self, mode=True):\n    super().train(mode)\n    return self\n",
        "nn.Module",
    ),
    # `super()` reaches the project base's `eval`, which does nothing.
    "super-into-a-noop-base": ("model.eval()", "def eval(self):\n    super().eval()\n    return self\n", "Base"),
}

GRAPH = """
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def run(model, q, x):
    gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
    {switch}
    return gm
"""
RAISES = {"getattr-eval": 'getattr(gm, "eval")()', "unbound-eval": "nn.Module.eval(gm)"}
# `Module.train` itself runs on the graph, not the override torch patches onto it.
RAISES_NOTHING = {
    "unbound-train-false": "torch.nn.Module.train(gm, False)",
    "setattr-training": 'setattr(gm, "training", False)',
}


def _modules() -> dict[str, tuple[str, list[tuple[str, int]]]]:
    """Module name -> (source, the findings it must give: (code, row))."""
    out = {}
    for cases, evaled in ((EVALED, True), (TRAINING, False)):
        for name, (switch, methods, base) in cases.items():
            for prep in ("pt2e", "qat_pt2e"):
                src = _source(switch, prep, methods, base)
                row = src.splitlines().index(CAPTURE) + 1
                loud = (prep == "qat_pt2e") == evaled
                code = "QL202" if prep == "qat_pt2e" else "QL201"
                out[f"{prep}_{name}".replace("-", "_")] = (src, [(code, row)] if loud else [])
    out.update(graph_cases(GRAPH, RAISES, RAISES_NOTHING))
    return out


MODULES = _modules()


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    return package_repository(tmp_path_factory.mktemp("reflective") / "repo", **{n: s for n, (s, _) in MODULES.items()})


@pytest.fixture(scope="module")
def tree_run(repo) -> dict[str, list[tuple[str, int]]]:
    return tree_findings(repo, MODULES)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_reading_agrees_with_torch(repo, tree_run, name):
    expected = MODULES[name][1]
    assert sorted(tree_run[name]) == expected
    assert file_findings(repo, name) == expected


@pytest.mark.parametrize(
    "name", ["pt2e_getattr_eval", "qat_pt2e_unbound_eval", "pt2e_setattr_training", "graph_unbound_eval"]
)
def test_standard_input_reads_them_alike(repo, name):
    source, expected = MODULES[name]
    assert stdin_findings(repo, name, source) == expected


def test_a_raising_switch_is_quoted_as_written_and_fixed_whole(repo):
    (found,) = check_file(repo / "pkg" / "graph_unbound_eval.py", ("QL203",)).diagnostics
    assert "`nn.Module.eval(gm)` on it raises NotImplementedError" in found.message
    (edit, _) = found.fix.edits
    assert edit.content == "move_exported_model_to_eval(gm)"
    assert (edit.range.start.col, edit.range.end.col) == (4, len("    nn.Module.eval(gm)"))
