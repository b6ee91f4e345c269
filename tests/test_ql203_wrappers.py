"""QL203 on module classes of the project that hold an exported graph as a submodule
(`graph_wrappers`): `Wrapper(gm).eval()` with `Wrapper.__init__` running `self.gm = gm`, or an
instance given the graph later (`w.gm = gm`). Measured on torch 2.13 / torchao 0.18: the
wrapper's switch reaches the graph's raising override; a graph kept outside the submodules, a
class with its own `eval`, an allowed graph and a copy raise nothing."""

from __future__ import annotations

import textwrap

from qlint.diagnostic import Applicability
from tests.conftest import lint, write_package

HEAD = """\
import copy
import torch
from torch import nn
from torchao.quantization.pt2e import allow_exported_model_train_eval
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Wrapper(nn.Module):
    def __init__(self, gm):
        super().__init__()
        self.gm = gm

    def forward(self, x):
        return self.gm(x)


class Later(nn.Module):
    def __init__(self):
        super().__init__()
        self.gm = None


def calibrate(model):
    model.eval()

"""  # the snippets start on line 26


def found(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL203",))


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in found(src)]


def test_a_wrapper_holding_the_graph_is_reported_with_a_display_only_fix():
    (d,) = found(
        """
        def f(m, q, x):
            gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
            w = Wrapper(gm)
            w.eval()
        """
    )
    assert d.range.start.row == 30
    assert d.message.startswith("`w` holds the graph from `prepare_pt2e` (line 28): `.eval()` switches it too")
    # Neither torchao helper takes the wrapper: it has no `.graph`.
    assert d.fix.applicability is Applicability.DISPLAY_ONLY


def test_train_a_nested_wrapper_and_one_handed_to_a_switching_helper():
    assert rows(
        """
        def f(m, q, x):
            gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
            Wrapper(gm).train()
            Wrapper(Wrapper(gm)).train()
            Wrapper(nn.Sequential(gm)).eval()
            calibrate(Wrapper(gm))
        """
    ) == [29, 30, 31, 32]


def test_an_instance_given_the_graph_later():
    assert rows(
        """
        def f(m, q, x):
            gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
            w = Later()
            w.gm = gm
            w.eval()
            v = Later()
            v.gm = gm
            v.gm = None  # replaced: `v.eval()` switches no graph
            v.eval()
        """
    ) == [31]


def test_allowed_or_copied_graphs_are_quiet():
    assert not rows(
        """
        def before(m, q, x):
            gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
            allow_exported_model_train_eval(gm)
            Wrapper(gm).eval()

        def after(m, q, x):
            gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
            w = Wrapper(gm)
            allow_exported_model_train_eval(gm)
            w.eval()

        def copies(m, q, x):
            gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
            Wrapper(copy.deepcopy(gm)).eval()
            copy.deepcopy(Wrapper(gm)).eval()

        def eager(m):
            Wrapper(m).eval()
            Wrapper(nn.Linear(2, 2)).eval()
        """
    )


def test_classes_that_do_not_register_the_graph_or_switch_themselves_are_quiet():
    assert not rows(
        """
        class ListWrapper(nn.Module):
            def __init__(self, gm):
                super().__init__()
                self.gms = [gm]

        class Bypass(nn.Module):
            def __init__(self, gm):
                super().__init__()
                object.__setattr__(self, "gm", gm)

        class InDict(nn.Module):
            def __init__(self, gm):
                super().__init__()
                self.__dict__["gm"] = gm

        class OwnEval(nn.Module):
            def __init__(self, gm):
                super().__init__()
                self.gm = gm

            def eval(self):
                return self

            def train(self, mode=True):
                return self

        class FromOwnEval(OwnEval):
            def __init__(self, gm):
                super().__init__(gm)
                self.other = gm

        class Plain:
            def __init__(self, gm):
                self.gm = gm

            def eval(self):
                return self

        class Switching:
            def train(self, mode=True):
                return self

        class Mixed(Switching, nn.Module):
            def __init__(self, gm):
                super().__init__()
                self.gm = gm

        def f(m, q, x):
            gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
            ListWrapper(gm).eval()
            Bypass(gm).eval()
            InDict(gm).eval()
            OwnEval(gm).eval()
            OwnEval(gm).train()
            FromOwnEval(gm).eval()
            Plain(gm).eval()
            Mixed(gm).eval()
        """
    )


def test_a_mixin_that_switches_nothing():
    assert rows(
        """
        class Logged:
            def log(self):
                print(self)

        class Mixed(Logged, nn.Module):
            def __init__(self, gm):
                super().__init__()
                self.gm = gm

        def f(m, q, x):
            gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
            Mixed(gm).eval()
        """
    ) == [38]


def test_a_wrapper_of_another_module(tmp_path):
    (tmp_path / ".git").mkdir()
    write_package(
        tmp_path,
        "pkg",
        wrappers=(
            "from torch import nn\n"
            "\n"
            "\n"
            "class Base(nn.Module):\n"
            "    pass\n"
            "\n"
            "\n"
            "class Wrapper(Base):\n"
            "    def __init__(self, gm):\n"
            "        super().__init__()\n"
            "        self.gm = gm\n"
        ),
    )
    main = tmp_path / "pkg" / "main.py"
    main.write_text(
        "import torch\n"
        "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n"
        "from pkg.wrappers import Wrapper\n"
        "\n"
        "\n"
        "def f(m, q, x):\n"
        "    gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)\n"
        "    Wrapper(gm).eval()\n"
    )
    (d,) = lint(main.read_text(), path=str(main), select=("QL203",))
    assert d.range.start.row == 8
