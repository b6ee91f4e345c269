"""QL203 on a graph (or a holder) reached through imported helpers in a row: module A's helper
calls module B's helper, which returns or stores the exported graph, and the caller switches
it (issue 14; `forwarded_graphs`). One imported helper was followed; two in a row were not,
since A's text names no graph source and its `GraphReturns` fact is empty, so the import
trigger never read the caller. Followed now up to `DEPTH` modules past the first helper, each
(module, function) once (a cycle of imports ends).

Quiet look-alikes, where the model flow reads the helpers' real returns and stores: a helper
that calls the graph helper and returns something else, one returning a copy (also through
one helper of another module: a copy's switches raise nothing), one allowing the graph before
returning it, a cycle of forwarders that never make a graph, a forwarder of a library helper.
"""

from __future__ import annotations

import textwrap

from qlint.analysis.flow.forwarded_graphs import DEPTH
from tests.conftest import lint, write_package

GRAPHS = """\
import copy

import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def capture(model, x):
    return torch.export.export(model, (x,)).module()


def capture_copy(model, x):
    return copy.deepcopy(torch.export.export(model, (x,)).module())


def store(holder, model, x, q):
    holder.gm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)
"""

FORWARD = """\
import copy

from torchao.quantization.pt2e import allow_exported_model_train_eval

from pkg import graphs
from pkg.graphs import capture, store
from pkg.loop import loop_back


def capture_a(model, x):
    return capture(model, x)


def capture_attr(model, x):
    return graphs.capture(model, x)


def keep(holder, model, x, q):
    store(holder, model, x, q)


def returns_model(model, x):
    capture(model, x)
    return model


def copied(model, x):
    return copy.deepcopy(capture(model, x))


def allowed(model, x):
    gm = capture(model, x)
    allow_exported_model_train_eval(gm)
    return gm


def cycle(model):
    return loop_back(model)


def library(model):
    return copy.deepcopy(model)
"""

LOOP = """\
from pkg.forward import cycle


def loop_back(model):
    return cycle(model)
"""


def _rows(tmp_path, main: str, **modules: str) -> list[int]:
    root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
    (root / ".git").mkdir(parents=True)
    write_package(root, "pkg", graphs=GRAPHS, forward=FORWARD, loop=LOOP, **modules)
    path = root / "main.py"
    path.write_text(textwrap.dedent(main))
    return [d.range.start.row for d in lint(path.read_text(), path=str(path), select=("QL203",))]


def test_a_graph_returned_through_two_imported_helpers_is_reported(tmp_path):
    main = """
    from pkg.forward import capture_a


    def run(model, x):
        gm = capture_a(model, x)
        gm.eval()
    """
    assert _rows(tmp_path, main) == [7]
    # Through a module imported whole in the middle module, and in the caller.
    assert _rows(tmp_path, main.replace("capture_a", "capture_attr")) == [7]
    whole = """
    from pkg import forward


    def run(model, x):
        gm = forward.capture_a(model, x)
        gm.train()
    """
    assert _rows(tmp_path, whole) == [7]


def test_a_holder_stored_through_two_imported_helpers_is_reported(tmp_path):
    main = """
    from pkg.forward import keep


    class Holder:
        pass


    def run(model, x, q):
        h = Holder()
        keep(h, model, x, q)
        h.gm.eval()
    """
    assert _rows(tmp_path, main) == [12]


def test_a_longer_chain_up_to_the_depth(tmp_path):
    # `c1.f1` calls `c2.f2` ... calls `pkg.forward.capture_a`, which calls `pkg.graphs.capture`:
    # forwarders in a row, the first one's module and `DEPTH` more.
    n = DEPTH
    chain = {
        f"c{i}": f"from pkg.c{i + 1} import f{i + 1}\n\n\ndef f{i}(model, x):\n    return f{i + 1}(model, x)\n"
        for i in range(1, n)
    }
    chain[f"c{n}"] = f"from pkg.forward import capture_a\n\n\ndef f{n}(model, x):\n    return capture_a(model, x)\n"
    main = """
    from pkg.c1 import f1


    def run(model, x):
        gm = f1(model, x)
        gm.eval()
    """
    # c1 .. c{DEPTH}, then forward: one forwarder too many for the trigger.
    assert _rows(tmp_path, main, **chain) == []
    nearer = main.replace("pkg.c1 import f1", "pkg.c2 import f2").replace("f1(", "f2(")
    assert _rows(tmp_path, nearer, **chain) == [7]


QUIET = {
    "returns something else": "returns_model",
    "returns a copy": "copied",
    "allows the graph": "allowed",
    "a cycle that makes no graph": "cycle",
    "forwards a library function": "library",
}


def test_look_alikes_are_quiet(tmp_path):
    for why, helper in QUIET.items():
        main = f"""
        from pkg.forward import {helper}


        def run(model, x):
            m = {helper}(model, x)
            m.eval()
        """
        assert _rows(tmp_path, main) == [], why


def test_a_copy_returned_by_a_helper_of_another_module_is_no_graph(tmp_path):
    main = """
    from pkg.graphs import capture_copy


    def run(model, x):
        gm = capture_copy(model, x)
        gm.eval()
    """
    assert _rows(tmp_path, main) == []
    assert _rows(tmp_path, main.replace("capture_copy", "capture")) == [7]
