"""QL202's two readings through helpers (issue 14, item 7; the gaps lane `ql202order` left).

1. A method returning the QAT graph of an eval-mode capture, called on an instance outside
   its class (`t = Trainer(q, x); g = t._prepare()`) in a module whose class another module
   names too (its instances may leave: `confined_instances` does not hold), is judged by its
   callers as a call through `self` is: quiet when each moves the graph before training it.
2. A move done inside a function the graph is handed to (`def train_mode(gm):
   move_exported_model_to_train(gm)`; `train_mode(prepared)`) counts when the function moves
   that parameter on every path before anything could train it; not when it moves it on one
   branch, moves another argument, or a copy.

Checked on torch 2.13 + torchao 0.18 (XNNPACK QAT config): after `t._prepare()` with no move,
`one_branch(g, False)`, `other(g, side)` or `copy_moved(g)`, a training step leaves the batch
norm's running mean unchanged and dropout drops nothing; after `train_mode(g)` the running
mean moves and half the outputs are dropped.
"""

from __future__ import annotations

import textwrap

from tests.conftest import check_file, package_repository
from tests.test_ql202_move_order import HEAD, in_function, prepare_row, ql202, rows

TRAINER = (
    HEAD
    + """
class Trainer:
    def __init__(self, q, x):
        self.q = q
        self.x = x

    def describe(self):
        return str(self.x)

    def _prepare(self):
        m = Net().eval()
        return prepare_qat_pt2e(export(m, (self.x,)).module(), self.q)
"""
)
TRAINER_ROW = TRAINER.splitlines().index("        return prepare_qat_pt2e(export(m, (self.x,)).module(), self.q)") + 1

OUTSIDE = """

def main(q, x, data):
    t = Trainer(q, x)
    g = t._prepare()
    move_exported_model_to_train(g)
    train_loop(g, data)
"""
UNMOVED = OUTSIDE.replace("    move_exported_model_to_train(g)\n", "")
# Another module of the project naming the class (it is not confined to its module), whose
# instances stay in the function that builds them: every call on one is in a module naming it.
ELSEWHERE = "from pkg.trainer import Trainer\n\n\ndef build(q, x):\n    t = Trainer(q, x)\n    print(t.describe())\n"


def _trainer_rows(tmp_path, home: str, **others: str) -> list[int]:
    root = package_repository(tmp_path / f"repo{len(list(tmp_path.iterdir()))}", trainer=TRAINER + home, **others)
    return [d.range.start.row for d in check_file(root / "pkg" / "trainer.py", ("QL202",)).diagnostics]


def test_a_method_called_on_an_instance_outside_its_class_is_judged_by_that_caller(tmp_path):
    assert _trainer_rows(tmp_path, OUTSIDE, other=ELSEWHERE) == []
    assert _trainer_rows(tmp_path, UNMOVED, other=ELSEWHERE) == [TRAINER_ROW]
    # Moved only after the training, or on one path of two.
    late = UNMOVED + "    move_exported_model_to_train(g)\n"
    one_path = OUTSIDE.replace(
        "    move_exported_model_to_train(g)\n", "    if data:\n        move_exported_model_to_train(g)\n"
    )
    assert one_path != OUTSIDE
    for src in (late, one_path):
        assert _trainer_rows(tmp_path, src, other=ELSEWHERE) == [TRAINER_ROW], src
    # Built and called at once: the same.
    at_once = OUTSIDE.replace("    t = Trainer(q, x)\n    g = t._prepare()\n", "    g = Trainer(q, x)._prepare()\n")
    assert at_once != OUTSIDE
    assert _trainer_rows(tmp_path, at_once, other=ELSEWHERE) == []
    assert _trainer_rows(tmp_path, at_once.replace("    move_exported_model_to_train(g)\n", ""), other=ELSEWHERE) == [
        TRAINER_ROW
    ]


def test_every_caller_of_the_method_must_move_first(tmp_path):
    # A caller that moves, beside one in the class or in another module that does not.
    inside = "\n    def run(self, data):\n        g = self._prepare()\n        train_loop(g, data)\n"
    assert _trainer_rows(tmp_path, inside + OUTSIDE, other=ELSEWHERE) == [TRAINER_ROW]
    other_caller = ELSEWHERE + "\n\ndef bench(q, x, data):\n    g = Trainer(q, x)._prepare()\n    train_loop(g, data)\n"
    assert _trainer_rows(tmp_path, OUTSIDE, other=other_caller) == [TRAINER_ROW]
    moving_caller = other_caller.replace(
        "    train_loop(g, data)\n", "    move_exported_model_to_train(g)\n    train_loop(g, data)\n"
    )
    moving_caller = "from torchao.quantization.pt2e import move_exported_model_to_train\n" + moving_caller
    assert _trainer_rows(tmp_path, OUTSIDE, other=moving_caller) == []


def test_an_instance_whose_calls_cannot_be_read_keeps_the_report(tmp_path):
    # Called on a parameter (any instance a caller hands in), or taken as a value.
    on_parameter = OUTSIDE + "\n\ndef again(t, data):\n    g = t._prepare()\n    move_exported_model_to_train(g)\n"
    taken = OUTSIDE + "\n\ndef hook(q, x):\n    return Trainer(q, x)._prepare\n"
    for src in (on_parameter, taken):
        assert _trainer_rows(tmp_path, src, other=ELSEWHERE) == [TRAINER_ROW], src
    # An instance that leaves the function building it, here or in another module: calls on
    # it may happen where qlint cannot see (the project's users).
    returned = ELSEWHERE.replace("    t = Trainer(q, x)\n    print(t.describe())\n", "    return Trainer(q, x)\n")
    assert returned != ELSEWHERE
    assert _trainer_rows(tmp_path, OUTSIDE, other=returned) == [TRAINER_ROW]
    handed = OUTSIDE + "\n\ndef make(q, x):\n    return Trainer(q, x)\n"
    assert _trainer_rows(tmp_path, handed, other=ELSEWHERE) == [TRAINER_ROW]
    # No caller at all vouches for nothing.
    assert _trainer_rows(tmp_path, "", other=ELSEWHERE) == [TRAINER_ROW]


MOVERS = """

def train_mode(gm):
    torch.ao.quantization.move_exported_model_to_train(gm)


def train_mode_kw(gm, device="cpu"):
    gm.to(device)
    move_exported_model_to_train(model=gm)
    return gm


def train_mode_positional(gm, /):
    move_exported_model_to_train(gm)


def train_mode_aliased(gm):
    to_train(gm)


def both_arms(gm, fast):
    if fast:
        move_exported_model_to_train(gm)
    else:
        gm = move_exported_model_to_train(gm)


def through_another(gm):
    train_mode(gm)


def one_branch(gm, fast):
    if fast:
        move_exported_model_to_train(gm)


def other(gm, side):
    move_exported_model_to_train(side)


def copy_moved(gm):
    return move_exported_model_to_train(copy.deepcopy(gm))


def trains_first(gm, data):
    train_loop(gm, data)
    move_exported_model_to_train(gm)


def returns_first(gm, fast):
    if fast:
        return gm
    move_exported_model_to_train(gm)


def in_a_loop(gm, data):
    for _ in data:
        move_exported_model_to_train(gm)


def generator(gm):
    move_exported_model_to_train(gm)
    yield gm


async def coroutine(gm):
    move_exported_model_to_train(gm)


def moves_none(gm):
    move_exported_model_to_train(gm)
    return None
"""
HANDED_QUIET = {
    "a function moving it": "train_mode(prepared)",
    "by keyword, returning it": "prepared = train_mode_kw(gm=prepared)",
    "through an import alias": "train_mode_aliased(prepared)",
    "to a positional-only parameter": "train_mode_positional(prepared)",
    "in both arms": "both_arms(prepared, fast)",
    "through another function": "through_another(prepared)",
}
HANDED_LOUD = {
    "on one branch": "one_branch(prepared, fast)",
    "another argument": "other(prepared, x)",
    "a copy, the result ignored": "copy_moved(prepared)",
    "after training it": "trains_first(prepared, data)",
    "after a return": "returns_first(prepared, fast)",
    "in a loop that may not run": "in_a_loop(prepared, data)",
    "rebound to what it returns (None)": "prepared = moves_none(prepared)",
    "a generator, whose call runs nothing": "generator(prepared)",
    "a coroutine function, not awaited": "coroutine(prepared)",
    # A keyword naming a positional-only parameter binds nothing: the call raises TypeError.
    "by keyword to a positional-only parameter": "train_mode_positional(gm=prepared)",
}


def _handed(call: str, after: str = "train_loop(prepared, data)") -> str:
    return "\nimport copy\n" + MOVERS + in_function(f"{call}\n{after}\n", "q, x, data, fast")


def test_a_graph_handed_first_to_a_function_that_moves_it_is_quiet(tmp_path):
    for shape, call in HANDED_QUIET.items():
        assert ql202(_handed(call), tmp_path) == [], shape
    # Its own moves are what keep it quiet: the same training without the call is reported.
    unmoved = _handed("pass")
    assert rows(unmoved, tmp_path) == [prepare_row(unmoved)]


def test_a_function_that_does_not_move_its_parameter_on_every_path_first_is_no_move(tmp_path):
    for shape, call in HANDED_LOUD.items():
        src = _handed(call)
        assert rows(src, tmp_path) == [prepare_row(src)], shape


def test_a_handed_move_after_the_training_is_reported(tmp_path):
    src = "\nimport copy\n" + MOVERS + in_function("train_loop(prepared, data)\ntrain_mode(prepared)\n")
    assert rows(src, tmp_path) == [prepare_row(src)]
    # The walk's own move after the training is covered by the handed one before it.
    covered = (
        "\nimport copy\n"
        + MOVERS
        + in_function("train_mode(prepared)\ntrain_loop(prepared, data)\nmove_exported_model_to_train(prepared)\n")
    )
    assert ql202(covered, tmp_path) == []
    late = covered.replace("    train_mode(prepared)\n", "")
    assert late != covered
    assert rows(late, tmp_path) == [prepare_row(late)]


def test_a_helpers_caller_handing_the_returned_graph_to_a_mover_is_quiet(tmp_path):
    helper = textwrap.dedent("""

    def _prepare(q, x):
        m = Net().eval()
        return prepare_qat_pt2e(export(m, (x,)).module(), q)


    def main(q, x, data):
        model = _prepare(q, x)
        train_mode(model)
        train_loop(model, data)
    """)
    row = (HEAD + "\nimport copy\n" + MOVERS + helper).splitlines().index(
        "    return prepare_qat_pt2e(export(m, (x,)).module(), q)"
    ) + 1
    assert ql202("\nimport copy\n" + MOVERS + helper, tmp_path) == []
    for call in ("one_branch(model, data)", "copy_moved(model)"):
        src = "\nimport copy\n" + MOVERS + helper.replace("train_mode(model)", call)
        assert rows(src, tmp_path) == [row], call
