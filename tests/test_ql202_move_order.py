"""QL202's excuse of a move to train mode respects order (`rules/moved_graphs.py`).

`move_exported_model_to_train` on the QAT graph of an eval-mode capture restores training
batch norm and dropout, from the move on: training before it runs the eval-mode graph
(checked on torch 2.13 and torchao 0.18: running statistics never change and dropout drops
nothing until the move). Only a move that comes before every use that could train the graph,
on every path, excuses the capture: in the capturing function and in the callers of a helper
that returns the graph (one order test for both).
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint
from tests.snippets import BN_DROPOUT_NET

HEAD = (
    """\
import torch
from torch.export import export
from torchao.quantization.pt2e import (
    allow_exported_model_train_eval,
    move_exported_model_to_eval,
    move_exported_model_to_train,
)
from torchao.quantization.pt2e import move_exported_model_to_train as to_train
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e


"""
    + BN_DROPOUT_NET
    + """

def train_loop(model, data):
    for b in data:
        model(b).sum().backward()

"""
)
PREPARE = "    prepared = prepare_qat_pt2e(export(m, (x,)).module(), q)\n"


def ql202(src: str, tmp_path):
    root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
    (root / ".git").mkdir(parents=True)
    return lint(HEAD + textwrap.dedent(src), path=str(root / "h.py"), select=("QL202",))


def in_function(steps: str, params: str = "q, x, data") -> str:
    """A function capturing `Net().eval()` for QAT, then `steps` (written at its indent)."""
    body = textwrap.indent(textwrap.dedent(steps).lstrip("\n"), "    ")
    return f"\ndef main({params}):\n    m = Net().eval()\n{PREPARE}{body}"


def prepare_row(src: str) -> int:
    return (HEAD + textwrap.dedent(src)).splitlines().index(PREPARE.rstrip("\n")) + 1


def rows(src: str, tmp_path) -> list[int]:
    return sorted(d.range.start.row for d in ql202(src, tmp_path))


LATE = {
    "after the loop": """
        for b in data:
            prepared(b).sum().backward()
        move_exported_model_to_train(prepared)
    """,
    "after a helper call that trains": """
        train_loop(prepared, data)
        move_exported_model_to_train(prepared)
    """,
    "in the loop after the step": """
        for b in data:
            prepared(b).sum().backward()
            move_exported_model_to_train(prepared)
    """,
    "in the else branch only": """
        if fast:
            pass
        else:
            move_exported_model_to_train(prepared)
        train_loop(prepared, data)
    """,
    "on one path of two": """
        if fast:
            prepared = move_exported_model_to_train(prepared)
        train_loop(prepared, data)
    """,
    "in one arm, the training in the other": """
        if fast:
            move_exported_model_to_train(prepared)
        else:
            train_loop(prepared, data)
    """,
    "in a with body after the training": """
        with torch.no_grad():
            train_loop(prepared, data)
            move_exported_model_to_train(prepared)
    """,
    "a keyword move after the training": """
        train_loop(prepared, data)
        move_exported_model_to_train(model=prepared)
    """,
    "an alias's move after the training": """
        mt = move_exported_model_to_train
        train_loop(prepared, data)
        mt(prepared)
    """,
    "`.train()` after the allow, after the training": """
        allow_exported_model_train_eval(prepared)
        train_loop(prepared, data)
        prepared.train()
    """,
}

MOVED_FIRST = {
    "before the loop": """
        move_exported_model_to_train(prepared)
        for b in data:
            prepared(b).sum().backward()
    """,
    "in the loop before the step": """
        opt = torch.optim.SGD(prepared.parameters(), lr=0.1)
        for b in data:
            move_exported_model_to_train(prepared)
            prepared(b).sum().backward()
            opt.step()
            move_exported_model_to_eval(prepared)
            prepared(b)
        return prepared
    """,
    "in both branches": """
        if fast:
            move_exported_model_to_train(prepared)
        else:
            prepared = move_exported_model_to_train(prepared)
        train_loop(prepared, data)
    """,
    "in a with body": """
        with torch.no_grad():
            move_exported_model_to_train(prepared)
        train_loop(prepared, data)
    """,
    "the keyword form": """
        move_exported_model_to_train(model=prepared)
        train_loop(prepared, data)
    """,
    "through an alias": """
        mt = move_exported_model_to_train
        mt(prepared)
        train_loop(prepared, data)
    """,
    "through an import alias": """
        prepared = to_train(prepared)
        train_loop(prepared, data)
    """,
    "`.train()` after the allow": """
        allow_exported_model_train_eval(prepared)
        prepared.train()
        train_loop(prepared, data)
    """,
    "after neutral uses": """
        prepared.load_state_dict(torch.load("qat.pt"), strict=False)
        prepared = prepared.to("cpu")
        move_exported_model_to_train(prepared)
        train_loop(prepared, data)
    """,
}


def test_a_move_after_a_use_that_trains_is_reported(tmp_path):
    for shape, steps in LATE.items():
        src = in_function(steps, "q, x, data, fast")
        found = ql202(src, tmp_path)
        assert [d.range.start.row for d in found] == [prepare_row(src)], shape
        assert "on a path that has not moved it to train mode yet" in found[0].message, shape


def test_the_message_names_the_use_and_the_move(tmp_path):
    src = in_function(LATE["after a helper call that trains"])
    (d,) = ql202(src, tmp_path)
    row = prepare_row(src)
    assert d.message.endswith(
        f"`prepared` is used at line {row + 1} on a path that has not moved it to train mode yet"
        f" (the move is at line {row + 2})"
    )


def test_a_move_before_every_use_that_trains_is_quiet(tmp_path):
    for shape, steps in MOVED_FIRST.items():
        assert ql202(in_function(steps, "q, x, data, fast"), tmp_path) == [], shape
    # The same functions without their moves are reported: the moves are what keeps them quiet.
    unmoved = in_function(
        """
        train_loop(prepared, data)
    """,
        "q, x, data, fast",
    )
    assert rows(unmoved, tmp_path) == [prepare_row(unmoved)]


def test_a_move_right_after_the_prepare_in_each_arm_covers_what_follows(tmp_path):
    # ExecuTorch's examples/nxp/aot_neutron_compile.py: one QAT capture, two trainers.
    src = textwrap.dedent("""

    def main(q, x, data, cifar, test):
        m = Net().eval()
        module = export(m, (x,)).module()
        if cifar:
            module = prepare_qat_pt2e(module, q)
            module = move_exported_model_to_train(module)
            module = train_loop(module, data)
            module = move_exported_model_to_eval(module)
            module = convert_pt2e(module)
        else:
            module = prepare_qat_pt2e(module, q)
            module = move_exported_model_to_train(module)
            module = convert_pt2e(train_loop(module, data))
        if test:
            train_loop(module, data)
        return module
    """)
    assert ql202(src, tmp_path) == []
    # A `continue` between the prepare and the move leaves the loop with an unmoved graph.
    looped = textwrap.dedent("""

    def main(q, x, data, configs):
        m = Net().eval()
        for cfg in configs:
            prepared = prepare_qat_pt2e(export(m, (x,)).module(), q)
            if cfg:
                continue
            move_exported_model_to_train(prepared)
        train_loop(prepared, data)
    """)
    assert len(ql202(looped, tmp_path)) == 1
    # A use in the other arm of the `if` that prepares is not reached from the prepare.
    other_arm = textwrap.dedent("""

    def main(q, x, data, qat, prepared):
        if qat:
            m = Net().eval()
            prepared = prepare_qat_pt2e(export(m, (x,)).module(), q)
        else:
            train_loop(prepared, data)
        move_exported_model_to_train(prepared)
        train_loop(prepared, data)
    """)
    assert ql202(other_arm, tmp_path) == []
    assert len(ql202(other_arm.replace("    else:\n", ""), tmp_path)) == 1
    assert ql202(looped.replace("continue", "pass"), tmp_path) == []


METHOD = """

class Trainer:
    def __init__(self, q, x):
        self.q = q
        self.x = x

    def _prepare(self):
        m = Net().eval()
        return prepare_qat_pt2e(export(m, (self.x,)).module(), self.q)

    def run(self, data):
        model = self._prepare()
        move_exported_model_to_train(model)
        for b in data:
            model(b).sum().backward()
"""
METHOD_RETURN = "        return prepare_qat_pt2e(export(m, (self.x,)).module(), self.q)"
METHOD_ROW = (HEAD + METHOD).splitlines().index(METHOD_RETURN) + 1


def test_a_method_returning_the_graph_is_judged_by_its_callers(tmp_path):
    assert ql202(METHOD, tmp_path) == []
    keyword = METHOD.replace("move_exported_model_to_train(model)", "move_exported_model_to_train(model=model)")
    assert ql202(keyword, tmp_path) == []
    both = METHOD.replace(
        "        move_exported_model_to_train(model)\n",
        "        if data:\n            move_exported_model_to_train(model)\n"
        "        else:\n            model = move_exported_model_to_eval(model)\n",
    )
    assert both != METHOD
    assert ql202(both, tmp_path) == []
    # Trained first, moved after the loop, moved on one path, or a use that is not a call.
    late = METHOD.replace("        move_exported_model_to_train(model)\n", "") + (
        "        move_exported_model_to_train(model)\n"
    )
    one_path = METHOD.replace(
        "        move_exported_model_to_train(model)\n",
        "        if data:\n            move_exported_model_to_train(model)\n",
    )
    bench = METHOD + "\n    def bench(self, x):\n        model = self._prepare()\n        return model(x)\n"
    taken = METHOD + "\n    def hook(self):\n        return self._prepare\n"
    for src in (late, one_path, bench, taken):
        assert rows(src, tmp_path) == [METHOD_ROW], src


def test_a_helpers_callers_moving_in_both_branches_or_by_keyword_are_quiet(tmp_path):
    helper = textwrap.dedent("""

    def _prepare(q, x):
        m = Net().eval()
        return prepare_qat_pt2e(export(m, (x,)).module(), q)
    """)
    row = (HEAD + helper).splitlines().index("    return prepare_qat_pt2e(export(m, (x,)).module(), q)") + 1
    both = textwrap.dedent("""

    def main(q, x, data, fast):
        model = _prepare(q, x)
        if fast:
            move_exported_model_to_train(model)
        else:
            model = move_exported_model_to_train(model)
        train_loop(model, data)
    """)
    assert ql202(helper + both, tmp_path) == []
    keyword = both.replace("move_exported_model_to_train(model)", "move_exported_model_to_train(model=model)")
    assert ql202(helper + keyword, tmp_path) == []
    one_arm = both.replace("        model = move_exported_model_to_train(model)\n", "        pass\n")
    assert one_arm != both
    assert rows(helper + one_arm, tmp_path) == [row]
    moved_device = textwrap.dedent("""

    def main(q, x, data, device):
        model = _prepare(q, x)
        model = model.to(device)
        move_exported_model_to_train(model)
        train_loop(model, data)
    """)
    assert ql202(helper + moved_device, tmp_path) == []
    assert rows(helper + moved_device.replace("model.to(device)", "compile_for(model, device)"), tmp_path) == [row]
    late_keyword = textwrap.dedent("""

    def main(q, x, data):
        model = _prepare(q, x)
        train_loop(model, data)
        move_exported_model_to_train(model=model)
    """)
    assert rows(helper + late_keyword, tmp_path) == [row]


def test_moves_imported_in_the_function_are_read(tmp_path):
    # StarPansharpeing's qat.py and knowledge-distillation-edge's qat.py import the allow (or
    # the move) in the function that prepares: the graph handed to it is not trained there.
    src = textwrap.dedent("""

    def main(q, x, data):
        from torchao.quantization.pt2e import allow_exported_model_train_eval as allow
        from torchao.quantization.pt2e import move_exported_model_to_train as to_train_mode

        m = Net().eval()
        prepared = prepare_qat_pt2e(export(m, (x,)).module(), q)
        allow(prepared)
        prepared.to("cpu")
        for b in data:
            prepared.train()
            prepared(b).sum().backward()
        to_train_mode(prepared)
    """)
    assert ql202(src, tmp_path) == []
    late = src.replace("        prepared.train()\n", "").replace("    allow(prepared)\n", "")
    assert late != src
    (d,) = ql202(late, tmp_path)
    assert "`prepared` is used at line" in d.message
