"""QL203 on graphs a helper leaves in an attribute of what its caller holds (`left_graphs`):
a helper storing the prepared graph on its parameter (`m.core = prepare_qat_pt2e(...)`), with
or without returning it, or returning a project module built around it (`return Wrap(gm)`),
then the caller's `.train()`/`.eval()` on that value. Each loud snippet raised
NotImplementedError on torch 2.13 / torchao 0.18 (XNNPACK QAT quantizer) and each quiet one
ran; a graph left on some paths only is kept quiet, as for a helper's returned graph."""

from __future__ import annotations

import textwrap

from qlint.diagnostic import Applicability
from tests.conftest import lint, write_package

HEAD = """\
import copy
import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e import allow_exported_model_train_eval, move_exported_model_to_eval
from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e

X = (torch.randn(2, 3, 8, 8),)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.core = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8))


class Wrap(nn.Module):
    def __init__(self, core):
        super().__init__()
        self.core = core


class OwnSwitch(nn.Module):
    def __init__(self):
        super().__init__()
        self.core = nn.Conv2d(3, 8, 3)

    def train(self, mode=True):
        return self


def store_inplace(m, q):
    m.core = prepare_qat_pt2e(export(m.core, X).module(), q)


def store_return(m, q):
    m.core = prepare_qat_pt2e(export(m.core, X).module(), q)
    return m


def ret_wrap(m, q):
    return Wrap(prepare_qat_pt2e(export(m, X).module(), q))

"""  # the snippets start on line 44


def found(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL203",))


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in found(src)]


def test_a_helper_storing_the_graph_on_its_parameter_is_reported_at_the_callers_switch():
    (d,) = found(
        """
        def f(q):
            m = Net()
            store_inplace(m, q)
            m.train()
        """
    )
    assert d.range.start.row == 48
    assert d.message.startswith("`m` holds the graph from `prepare_qat_pt2e` (line 33): `.train()` switches it too")
    # Neither torchao helper takes the holder, as for a graph stored by the caller itself.
    assert d.fix.applicability is Applicability.DISPLAY_ONLY


def test_a_helper_returning_its_parameter_or_a_wrapper_holding_the_graph():
    assert rows(
        """
        def f(q):
            store_return(Net(), q).train()
            m = store_return(Net(), q)
            m.eval()
            ret_wrap(Net(), q).train()
            w = ret_wrap(Net(), q)
            w.eval()
        """
    ) == [46, 48, 49, 51]


def test_a_helper_that_stores_on_a_fresh_module_and_returns_it():
    assert rows(
        """
        def fresh(m, q):
            n = Net()
            n.core = prepare_qat_pt2e(export(m.core, X).module(), q)
            return n


        def f(q):
            m = Net()
            n = fresh(m, q)
            m.train()
            n.train()
        """
    ) == [55]


def test_through_a_helper_of_a_helper_and_a_method():
    assert rows(
        """
        def outer(m, q):
            store_inplace(m, q)


        def f(q):
            m = Net()
            outer(m, q)
            m.train()


        class Trainer:
            def prepare(self, m, q):
                m.core = prepare_qat_pt2e(export(m.core, X).module(), q)

            def run(self, q):
                m = Net()
                self.prepare(m, q)
                m.train()
        """
    ) == [52, 62]


def test_the_stored_graph_read_back_and_switched_is_the_graph():
    (d,) = found(
        """
        def f(m, q):
            store_inplace(m, q)
            m.core.eval()
        """
    )
    assert d.range.start.row == 47
    assert d.message.startswith("`m.core` comes from `prepare_qat_pt2e` (line 33)")


def test_allowed_in_the_helper_or_by_the_caller_is_quiet():
    assert not found(
        """
        def allowed_inside(m, q):
            m.core = prepare_qat_pt2e(export(m.core, X).module(), q)
            allow_exported_model_train_eval(m.core)


        def wrap_allowed(m, q):
            gm = prepare_qat_pt2e(export(m, X).module(), q)
            allow_exported_model_train_eval(gm)
            return Wrap(gm)


        def f(q):
            m = Net()
            allowed_inside(m, q)
            m.train()
            wrap_allowed(Net(), q).train()
            n = Net()
            store_inplace(n, q)
            allow_exported_model_train_eval(n.core)
            n.train()
            k = store_return(Net(), q)
            allow_exported_model_train_eval(k.core)
            k.train()
            w = ret_wrap(Net(), q)
            allow_exported_model_train_eval(w.core)
            w.eval()
        """
    )


def test_a_graph_left_on_some_paths_only_is_quiet():
    assert not found(
        """
        def some(m, q, qat):
            if qat:
                m.core = prepare_qat_pt2e(export(m.core, X).module(), q)
            return m


        def some_wrap(m, q, qat):
            if qat:
                return Wrap(prepare_qat_pt2e(export(m, X).module(), q))
            return Wrap(m)


        def outer_some(m, q, qat):
            if qat:
                store_inplace(m, q)


        def f(q, qat):
            some(Net(), q, qat).train()
            some_wrap(Net(), q, qat).train()
            m = Net()
            outer_some(m, q, qat)
            m.train()
        """
    )


def test_replaced_copied_moved_or_never_stored_on_the_argument_is_quiet():
    assert not found(
        """
        def replaced(m, q):
            m.core = prepare_qat_pt2e(export(m.core, X).module(), q)
            m.core = nn.Identity()


        def on_a_copy(m, q):
            m = copy.deepcopy(m)
            m.core = prepare_qat_pt2e(export(m.core, X).module(), q)
            return m


        def fresh(m, q):
            n = Net()
            n.core = prepare_qat_pt2e(export(m.core, X).module(), q)


        def f(q):
            a = Net()
            replaced(a, q)
            a.train()
            b = Net()
            on_a_copy(b, q)
            b.train()
            c = Net()
            fresh(c, q)
            c.train()
            d = Net()
            store_inplace(d, q)
            d.core = nn.Identity()
            d.train()
            w = ret_wrap(Net(), q)
            w.core = nn.Identity()
            w.train()
            e = Net()
            store_inplace(e, q)
            move_exported_model_to_eval(e.core)
        """
    )


def test_a_holder_whose_class_switches_itself_is_quiet():
    # `OwnSwitch.train` never reaches the graph (as for a graph the caller stores there).
    assert not found(
        """
        def f(q):
            m = OwnSwitch()
            store_inplace(m, q)
            m.train()
        """
    )


def test_a_helper_of_another_module_returning_a_wrapper_or_its_parameter(tmp_path):
    (tmp_path / ".git").mkdir()
    helpers = HEAD.replace("import copy\n", "")
    write_package(tmp_path, "pkg", helpers=helpers)
    main = tmp_path / "pkg" / "main.py"
    main.write_text(
        "from pkg.helpers import Net, ret_wrap, store_return\n"
        "\n"
        "\n"
        "def f(q):\n"
        "    w = ret_wrap(Net(), q)\n"
        "    w.train()\n"
        "    m = store_return(Net(), q)\n"
        "    m.eval()\n"
    )
    ds = lint(main.read_text(), path=str(main), select=("QL203",))
    assert [d.range.start.row for d in ds] == [6, 8]
    assert "(helpers.py:41, returned by the call at line 5)" in ds[0].message
