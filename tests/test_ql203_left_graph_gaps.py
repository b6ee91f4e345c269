"""QL203 on three shapes `left_graphs` missed (stop 54, lane ql203ret's report):

1. a helper of another module that only stores the graph on its parameter (`attach(m, q)`,
   no return), then the caller's `m.train()` / `m.core.train()`;
2. a holder handed to a helper that switches its field (`attach(h, q); set_train(h)` with
   `def set_train(x): x.core.train()`);
3. a graph inside a dict or tuple a helper returns (`return {"model": gm}`, `return gm, info`),
   switched as `out["model"].train()`, `out[0].eval()` or `f()["model"].train()`.

Each loud snippet raised NotImplementedError on torch 2.13 / torchao 0.18 (XNNPACK QAT
quantizer); each quiet one ran. A graph under a key on some paths only, like one at a
tuple's position, is not followed (`g, _ = f()` is not either)."""

from __future__ import annotations

import textwrap

import pytest

from qlint.diagnostic import Applicability
from tests.conftest import lint, write_package

HEAD = """\
import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e import allow_exported_model_train_eval
from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e

X = (torch.randn(2, 3, 8, 8),)


class Holder:
    def __init__(self):
        self.core = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8))
        self.head = nn.Linear(8, 8)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.core = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8))


def attach(m, q):
    m.core = prepare_qat_pt2e(export(m.core, X).module(), q)


def set_train(x):
    x.core.train()


def in_dict(m, q):
    prepared = prepare_qat_pt2e(export(m, X).module(), q)
    return {"model": prepared, "steps": 3}


def in_tuple(m, q):
    prepared = prepare_qat_pt2e(export(m, X).module(), q)
    return prepared, {"steps": 3}

"""  # the snippets start on line 39


def found(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL203",))


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in found(src)]


def _package(tmp_path, main: str):
    (tmp_path / ".git").mkdir()
    write_package(tmp_path, "pkg", helpers=HEAD)
    path = tmp_path / "pkg" / "main.py"
    path.write_text(textwrap.dedent(main))
    return lint(path.read_text(), path=str(path), select=("QL203",))


# -- 1. a helper of another module that only stores the graph ------------------------------


def test_a_storing_helper_of_another_module_is_followed_to_the_callers_switch(tmp_path):
    ds = _package(
        tmp_path,
        """\
        from pkg.helpers import Net, attach


        def whole(q):
            m = Net()
            attach(m, q)
            m.train()


        def part(m, q):
            attach(m, q)
            m.core.eval()
        """,
    )
    assert [d.range.start.row for d in ds] == [7, 12]
    assert ds[0].message.startswith(
        "`m` holds the graph from `prepare_qat_pt2e` (helpers.py:23, stored in what the call at line 6 was given)"
    )
    assert ds[0].fix.applicability is Applicability.DISPLAY_ONLY  # the holder: as for an inline store
    assert ds[1].message.startswith(
        "`m.core` comes from `prepare_qat_pt2e` (helpers.py:23, stored in what the call at line 11 was given)"
    )
    assert ds[1].fix.applicability is Applicability.SAFE  # `move_exported_model_to_eval(m.core)`


def test_a_storing_helper_of_another_module_quiet_look_alikes(tmp_path):
    assert not _package(
        tmp_path,
        """\
        from torch import nn

        from pkg.helpers import Net, attach


        def replaced(q):
            m = Net()
            attach(m, q)
            m.core = nn.Identity()
            m.train()


        def other_object(q):
            m, n = Net(), Net()
            attach(n, q)
            m.train()
        """,
    )


# -- 2. a holder handed to a helper that switches its field -------------------------------


def test_a_holder_handed_to_a_helper_switching_its_field():
    ds = found(
        """
        def left(q):
            h = Holder()
            attach(h, q)
            set_train(h)


        def inline(m, q):
            h = Holder()
            h.core = prepare_qat_pt2e(export(m, X).module(), q)
            set_train(h)


        def outer(x):
            set_train(x)


        def through(q):
            h = Holder()
            attach(h, q)
            outer(h)
        """
    )
    assert [d.range.start.row for d in ds] == [43, 49, 59]
    assert ds[0].message == (
        "`h.core` comes from `prepare_qat_pt2e` (line 23) and this call runs `.train()` on it (line 27),"
        " which raises NotImplementedError on torch 2.13"
    )
    # The helper's switch is right for eager holders: the fix allows the graph before the call.
    assert ds[0].fix.applicability is Applicability.UNSAFE
    assert ds[0].fix.message == "Call `allow_exported_model_train_eval(h.core)` before this call"


def test_a_holder_handed_to_a_switching_helper_quiet_look_alikes():
    assert not found(
        """
        def set_head(x):
            x.head.train()


        def maybe_train(x, flag):
            if flag:
                x.core.train()


        def f(q):
            a = Holder()
            attach(a, q)
            a.core = nn.Linear(3, 3)  # re-assigned to an eager module before the switch
            set_train(a)
            b = Holder()
            attach(b, q)
            set_head(b)  # a helper that switches another field
            c = Holder()
            attach(c, q)
            allow_exported_model_train_eval(c.core)
            set_train(c)
            d = Holder()
            attach(d, q)
            maybe_train(d, False)
            e = Holder()
            set_train(e)
        """
    )


# -- 3. a graph inside a container the helper returns -------------------------------------


def test_a_graph_in_a_returned_dict_or_tuple_read_back_and_switched():
    ds = found(
        """
        def f(q):
            out = in_dict(Net(), q)
            out["model"].train()
            in_dict(Net(), q)["model"].eval()
            pair = in_tuple(Net(), q)
            pair[0].eval()
            in_tuple(Net(), q)[0].train()
            g, _ = in_tuple(Net(), q)
            g.train()


        def named(m, q):
            d = {"model": prepare_qat_pt2e(export(m, X).module(), q)}
            return d


        def g(q):
            named(Net(), q)["model"].train()
        """
    )
    assert [d.range.start.row for d in ds] == [42, 43, 45, 46, 48, 57]
    assert ds[0].message.startswith('`out["model"]` comes from `prepare_qat_pt2e` (line 31)')
    assert ds[0].fix.applicability is Applicability.SAFE


def test_a_graph_in_a_returned_container_of_another_module(tmp_path):
    ds = _package(
        tmp_path,
        """\
        from pkg.helpers import Net, in_dict, in_tuple


        def f(q):
            out = in_dict(Net(), q)
            out["model"].train()
            g, _ = in_tuple(Net(), q)
            g.train()
        """,
    )
    assert [d.range.start.row for d in ds] == [6, 8]
    assert "(helpers.py:31, returned by the call at line 5)" in ds[0].message


def test_a_returned_container_quiet_look_alikes():
    assert not found(
        """
        def some(m, q, qat):
            if qat:
                return {"model": prepare_qat_pt2e(export(m, X).module(), q)}
            return {"model": m}  # an eager module under the same key on the other path


        def allowed(m, q):
            gm = prepare_qat_pt2e(export(m, X).module(), q)
            allow_exported_model_train_eval(gm)
            return {"model": gm}


        def f(q, qat):
            some(Net(), q, qat)["model"].train()
            a = allowed(Net(), q)
            a["model"].train()
            b = in_dict(Net(), q)
            b["model"] = Net()  # replaced before the switch
            b["model"].train()
            c = in_dict(Net(), q)
            c["steps"].train()  # another key
            _, stats = in_tuple(Net(), q)  # positions swapped
            stats.train()
            in_tuple(Net(), q)[1].train()
            d = in_tuple(Net(), q)
            d[1].eval()
        """
    )


def test_the_trigger_reads_a_tuple_target_bound_to_no_call_in_linear_time():
    """`g, <long name> = 1, 2` binds `g` to no call: the pattern for the names after `g` once
    split a long name into names in exponentially many ways before failing (the whole run on
    the installed torchao never ended). The alarm turns a hang into a failure."""
    import signal

    from qlint.analysis.flow.switched_callees import switched_results

    text = f"g = f(x)\ng, self.{'a' * 60} = g, 2\nh, {'b' * 60}.c = attach(g)\ng.eval()\n"
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("the tuple-target pattern backtracks"))
    signal.alarm(20)
    try:
        found = switched_results(text)
    finally:
        signal.alarm(0)
    assert {"f", "attach"} <= found
