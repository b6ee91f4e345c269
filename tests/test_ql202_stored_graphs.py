"""QL202 for a QAT graph held on the instance (issue 14, item 2; `rules/stored_graph_moves.py`):
`self.prepared = prepare_qat_pt2e(...)` in one method of a trainer class, trained in another.

Checked on torch 2.13 + torchao 0.18 (XNNPACK QAT config, this module's `Net` captured after
`.eval()`): `fit` training `self.prepared` with no move leaves the batch norm's running mean
unchanged and dropout drops nothing; with `move_exported_model_to_train(self.prepared)` first in
`fit` (or `self._to_train(self.prepared)`, or `to_train(self.prepared)` imported from another
module, each moving it) the running mean moves and about half the activations are dropped.
"""

from __future__ import annotations

import textwrap

from tests.conftest import check_file, package_repository
from tests.test_ql202_move_order import HEAD

TRAINER = (
    HEAD
    + """
class Trainer:
    def __init__(self, q, x):
        self.q = q
        self.x = x
        self.prepared = None

    def prepare(self):
        m = Net().eval()
        self.prepared = prepare_qat_pt2e(export(m, (self.x,)).module(), self.q)

    def fit(self, data):
        move_exported_model_to_train(self.prepared)
        for b in data:
            self.prepared(b).sum().backward()
"""
)
STORE = "        self.prepared = prepare_qat_pt2e(export(m, (self.x,)).module(), self.q)\n"
MOVE = "        move_exported_model_to_train(self.prepared)\n"
UNMOVED = TRAINER.replace(MOVE, "")
EVALUATE = """
    def evaluate(self, data):
        move_exported_model_to_eval(self.prepared)
        return [self.prepared(b) for b in data]
"""


def _row(src: str) -> int:
    return src.splitlines().index(STORE.rstrip("\n")) + 1


def _rows(tmp_path, src: str, **others: str) -> list[int]:
    root = package_repository(tmp_path / f"repo{len(list(tmp_path.iterdir()))}", trainer=src, **others)
    return [d.range.start.row for d in check_file(root / "pkg" / "trainer.py", ("QL202",)).diagnostics]


def _edit(src: str, old: str, new: str) -> str:
    assert old in src, old
    return src.replace(old, new)


def test_a_graph_stored_on_self_and_moved_first_where_it_is_trained_is_quiet(tmp_path):
    assert _rows(tmp_path, TRAINER) == []
    assert _rows(tmp_path, UNMOVED) == [_row(UNMOVED)]
    # Another method that moves it to eval mode before running it; a method that stores `None`.
    assert _rows(tmp_path, TRAINER + EVALUATE + "\n    def reset(self):\n        self.prepared = None\n") == []
    # A method that only saves its weights runs nothing.
    save = "\n    def save(self, path):\n        torch.save(self.prepared.state_dict(), path)\n"
    assert _rows(tmp_path, TRAINER + save) == []
    assert _rows(tmp_path, UNMOVED + save) == [_row(UNMOVED + save)]
    # The storing method calls the training method, which moves first.
    called = _edit(TRAINER, STORE, STORE + "        self.fit(self.x)\n")
    assert _rows(tmp_path, called) == []
    assert _rows(tmp_path, called.replace(MOVE, "")) == [_row(called)]


def test_a_move_right_after_the_store_covers_every_other_method(tmp_path):
    moved = _edit(UNMOVED, STORE, STORE + MOVE)
    assert _rows(tmp_path, moved) == []
    # In `__init__`: the same.
    init = HEAD + textwrap.dedent("""
        class Trainer:
            def __init__(self, q, x):
                m = Net().eval()
                self.prepared = prepare_qat_pt2e(export(m, (x,)).module(), q)
                move_exported_model_to_train(self.prepared)

            def fit(self, data):
                for b in data:
                    self.prepared(b).sum().backward()
        """)
    init_row = init.splitlines().index("        self.prepared = prepare_qat_pt2e(export(m, (x,)).module(), q)") + 1
    assert _rows(tmp_path, init) == []
    assert _rows(tmp_path, init.replace(MOVE, "")) == [init_row]
    # Moved on one branch of the storing method only: `fit` may train the eval-mode graph.
    one_branch = _edit(UNMOVED, STORE, STORE + "        if self.q:\n    " + MOVE)
    assert _rows(tmp_path, one_branch) == [_row(one_branch)]
    # Moved, but after a `return` some path takes.
    returned = _edit(UNMOVED, STORE, STORE + "        if self.q:\n            return\n" + MOVE)
    assert _rows(tmp_path, returned) == [_row(returned)]


def test_the_storing_method_training_before_its_own_move_is_reported(tmp_path):
    # Reported at the capture with the use that runs the eval-mode graph (quiet before: the
    # order test read no attribute).
    late = _edit(UNMOVED, STORE, STORE + "        self.prepared(self.x).sum().backward()\n" + MOVE)
    found = check_file(
        package_repository(tmp_path / "late", trainer=late) / "pkg" / "trainer.py", ("QL202",)
    ).diagnostics
    assert [d.range.start.row for d in found] == [_row(late)]
    assert "`self.prepared` is used at line" in found[0].message
    # The same move first: quiet.
    first = _edit(UNMOVED, STORE, STORE + MOVE + "        self.prepared(self.x).sum().backward()\n")
    assert _rows(tmp_path, first) == []


def test_a_method_that_trains_it_unmoved_keeps_the_report(tmp_path):
    late = _edit(TRAINER, MOVE, "").replace(
        "            self.prepared(b).sum().backward()\n",
        "            self.prepared(b).sum().backward()\n" + MOVE,
    )
    one_branch = _edit(TRAINER, MOVE, "        if data:\n    " + MOVE)
    # Another method that runs it unmoved, beside `fit` which moves it: it may run first.
    other = TRAINER + "\n    def warmup(self, data):\n        self.prepared(data[0])\n"
    # The storing method calls one that trains it unmoved.
    called = _edit(UNMOVED, STORE, STORE + "        self.fit(self.x)\n")
    for src in (late, one_branch, other, called):
        assert _rows(tmp_path, src) == [_row(src)], src


def test_a_graph_read_outside_the_class_keeps_the_report(tmp_path):
    outside = "\n\ndef main(q, x, data):\n    t = Trainer(q, x)\n    t.prepare()\n    train_loop(t.prepared, data)\n"
    subclass = "\n\nclass Fast(Trainer):\n    def fit(self, data):\n        train_loop(self.prepared, data)\n"
    by_name = TRAINER + '\n    def model(self):\n        return getattr(self, "prepared")\n'
    for src in (TRAINER + outside, TRAINER + subclass, by_name):
        assert _rows(tmp_path, src) == [_row(src)], src
    # Another module of the project loads the attribute.
    other = "from pkg.trainer import Trainer\n\n\ndef run(t: Trainer, data):\n    t.prepared(data)\n"
    assert _rows(tmp_path, TRAINER, other=other) == [_row(TRAINER)]
    assert _rows(tmp_path, TRAINER, other=other.replace("t.prepared(data)", "t.fit(data)")) == []
    # A base class from a library may read it (`transformers.Trainer` trains `self.model`).
    based = TRAINER.replace("class Trainer:", "class Trainer(torch.nn.Module):")
    assert _rows(tmp_path, based) == [_row(based)]
    local_base = TRAINER.replace("class Trainer:", "class Base:\n    pass\n\n\nclass Trainer(Base):")
    assert _rows(tmp_path, local_base) == []


def test_moves_made_by_a_method_or_by_another_modules_function_count(tmp_path):
    method = _edit(TRAINER, MOVE, "        self._to_train(self.prepared)\n") + (
        "\n    def _to_train(self, gm):\n        move_exported_model_to_train(gm)\n"
    )
    assert _rows(tmp_path, method) == []
    other_arg = method.replace("move_exported_model_to_train(gm)", "move_exported_model_to_train(self.x)")
    assert _rows(tmp_path, other_arg) == [_row(other_arg)]
    # A method handed nothing that moves `self.prepared` itself; not one moving on one branch.
    own = _edit(TRAINER, MOVE, "        self._to_train()\n") + (
        "\n    def _to_train(self):\n        move_exported_model_to_train(self.prepared)\n"
    )
    assert _rows(tmp_path, own) == []
    own_branch = own.replace(
        "        move_exported_model_to_train(self.prepared)\n",
        "        if self.q:\n            move_exported_model_to_train(self.prepared)\n",
    )
    assert _rows(tmp_path, own_branch) == [_row(own_branch)]
    utils = (
        "from torchao.quantization.pt2e import move_exported_model_to_train\n\n\n"
        "def put_in_train_mode(gm):\n    move_exported_model_to_train(gm)\n"
    )
    moved = _edit(TRAINER, MOVE, "        put_in_train_mode(self.prepared)\n")
    imported = "from pkg.utils import put_in_train_mode\n" + moved
    assert _rows(tmp_path, imported, utils=utils) == []
    one_branch = utils.replace(
        "    move_exported_model_to_train(gm)\n", "    if gm.training:\n        move_exported_model_to_train(gm)\n"
    )
    assert _rows(tmp_path, imported, utils=one_branch) == [_row(imported)]
