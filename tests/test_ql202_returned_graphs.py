"""QL202 through a helper's callers: the QAT graph of an eval-mode capture, returned to them
(Autoware's `train_autodrive_qat.py` and `autodrive_qat.py`, corpus `autoware-pov-2026-07`).

Quiet when every caller in the project moves the returned graph to train mode before running
it (`move_exported_model_to_train` restores training batch norm and dropout), or moves it to
eval / converts it: the moves QL202 accepts in the capturing function. Loud when one caller
trains it without the move, moves another variable, moves it only after the training loop or
in a branch the training does not lie in, hands it on, or when the helper has no caller (or
one that cannot be read).
"""

from __future__ import annotations

import textwrap

from tests.conftest import check_file, lint, package_repository
from tests.snippets import BN_DROPOUT_NET

HEAD = (
    """\
import copy

import torch
from torch.export import export
from torchao.quantization.pt2e import move_exported_model_to_eval, move_exported_model_to_train
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e


"""
    + BN_DROPOUT_NET
    + """

def _prepare(q, x):
    m = Net().eval()
    return prepare_qat_pt2e(export(m, (x,)).module(), q)

"""
)
PREPARE_ROW = HEAD.splitlines().index("    return prepare_qat_pt2e(export(m, (x,)).module(), q)") + 1
BUILD = """

def _build(q, x, device):
    m = Net().eval()
    exported = export(m, (x,)).module()
    prepared = prepare_qat_pt2e(exported, q)
    prepared.to(device)
    return prepared, q


def _freeze(prepared, path):
    missing, unexpected = prepared.load_state_dict(torch.load(path), strict=False)
    prepared.apply(torch.ao.quantization.disable_observer)
    return missing
"""
BUILD_ROW = (HEAD + BUILD).splitlines().index("    exported = export(m, (x,)).module()") + 1


def ql202(src: str, tmp_path):
    root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
    (root / ".git").mkdir(parents=True)
    return lint(HEAD + textwrap.dedent(src), path=str(root / "h.py"), select=("QL202",))


def rows(src: str, tmp_path) -> list[int]:
    return sorted(d.range.start.row for d in ql202(src, tmp_path))


TRAINED = """

def main(q, x, data):
    model = _prepare(q, x)
    model.load_state_dict(torch.load("float.pt"), strict=False)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    move_exported_model_to_train(model)
    for b in data:
        model(b).sum().backward()
        opt.step()
    return convert_pt2e(model)
"""
EPOCHS = """

def main(q, x, data, epochs):
    model = _prepare(q, x)
    for epoch in range(epochs):
        if epoch > 2:
            model.apply(torch.ao.quantization.disable_observer)
        for n in model.graph.nodes:
            pass
        model.recompile()
        move_exported_model_to_train(model)
        for b in data:
            model(b).sum().backward()
        move_exported_model_to_eval(model)
        model(x)
    model.load_state_dict(torch.load("best.pt"))
    int8 = convert_pt2e(copy.deepcopy(model).cpu())
    return int8
"""
CONVERTED = (
    BUILD
    + """

def export_int8(q, x, path):
    prepared, _ = _build(q, x, "cpu")
    _freeze(prepared, path)
    move_exported_model_to_eval(prepared)
    with torch.no_grad():
        prepared(x)
    prepared = prepared.to("cpu")
    return convert_pt2e(prepared)


def bench(q, x, path):
    prepared, _ = _build(q, x, "cuda")
    _freeze(prepared, path)
    move_exported_model_to_eval(prepared)
    prepared.to("cuda")
    return prepared(x)
"""
)


def test_callers_that_move_the_returned_graph_first_are_quiet(tmp_path):
    assert ql202(TRAINED, tmp_path) == []
    assert ql202(EPOCHS, tmp_path) == []
    assert ql202(TRAINED.replace("main", "train_it") + EPOCHS, tmp_path) == []
    rebound = TRAINED.replace(
        "    move_exported_model_to_train(model)", "    model = move_exported_model_to_train(model)"
    )
    assert rebound != TRAINED
    assert ql202(rebound, tmp_path) == []
    # `_build` returns the graph as the first item of a tuple; its callers only convert it.
    assert rows(CONVERTED + TRAINED, tmp_path) == []
    only_converted = textwrap.dedent("""

    def main(q, x):
        model = _prepare(q, x)
        convert_pt2e(model)
        return model
    """)
    assert ql202(only_converted, tmp_path) == []


def test_the_same_shapes_with_the_graph_trained_in_the_capture_mode_are_reported(tmp_path):
    # The caller trains without any move.
    assert rows(TRAINED.replace("    move_exported_model_to_train(model)\n", ""), tmp_path) == [PREPARE_ROW]
    # One of two callers trains without the move.
    unmoved = textwrap.dedent("""

    def finetune(q, x, data):
        model = _prepare(q, x)
        for b in data:
            model(b).sum().backward()
    """)
    assert rows(TRAINED + unmoved, tmp_path) == [PREPARE_ROW]
    # The move on another variable.
    other = TRAINED.replace("move_exported_model_to_train(model)", "move_exported_model_to_train(opt)")
    assert rows(other, tmp_path) == [PREPARE_ROW]
    rebound = TRAINED.replace(
        "    move_exported_model_to_train(model)", "    model = move_exported_model_to_train(opt)"
    )
    assert rows(rebound, tmp_path) == [PREPARE_ROW]
    # The move after the training loop.
    late = textwrap.dedent("""

    def main(q, x, data):
        model = _prepare(q, x)
        for b in data:
            model(b).sum().backward()
        move_exported_model_to_train(model)
    """)
    assert rows(late, tmp_path) == [PREPARE_ROW]
    # The move in a branch, the training after it.
    branch = textwrap.dedent("""

    def main(q, x, data, fast):
        model = _prepare(q, x)
        if fast:
            move_exported_model_to_train(model)
        for b in data:
            model(b).sum().backward()
    """)
    assert rows(branch, tmp_path) == [PREPARE_ROW]
    # A move in the loop after the training step: the first step trains the capture's mode.
    after_step = EPOCHS.replace(
        "        move_exported_model_to_train(model)\n        for b in data:\n            model(b).sum().backward()\n",
        "        for b in data:\n            model(b).sum().backward()\n        move_exported_model_to_train(model)\n",
    )
    assert after_step != EPOCHS
    assert rows(after_step, tmp_path) == [PREPARE_ROW]
    # A tuple-returning helper whose caller trains the graph without the move.
    trained_build = CONVERTED.replace("    _freeze(prepared, path)\n    move_exported_model_to_eval(prepared)\n", "", 1)
    assert trained_build != CONVERTED
    assert rows(trained_build + TRAINED, tmp_path) == [BUILD_ROW]


def test_a_graph_handed_on_or_copied_before_the_move_is_reported(tmp_path):
    stored = TRAINED.replace(
        "    move_exported_model_to_train(model)\n",
        "    STORE.append(model)\n    move_exported_model_to_train(model)\n",
    )
    assert rows(stored, tmp_path) == [PREPARE_ROW]
    returned = textwrap.dedent("""

    def main(q, x):
        model = _prepare(q, x)
        return model
    """)
    assert rows(returned, tmp_path) == [PREPARE_ROW]
    assert rows("\n\ndef main(q, x):\n    return _prepare(q, x)\n", tmp_path) == [PREPARE_ROW]
    copied = TRAINED.replace(
        "    move_exported_model_to_train(model)\n",
        "    twin = copy.deepcopy(model)\n    move_exported_model_to_train(model)\n",
    )
    assert rows(copied, tmp_path) == [PREPARE_ROW]
    unknown = TRAINED.replace(
        "    move_exported_model_to_train(model)\n", "    warm_up(model)\n    move_exported_model_to_train(model)\n"
    )
    assert rows(unknown, tmp_path) == [PREPARE_ROW]
    # A function of the module that runs what it is handed, before the move.
    runs = TRAINED.replace(
        "    move_exported_model_to_train(model)\n", "    _run(model, x)\n    move_exported_model_to_train(model)\n"
    )
    assert rows(runs + "\n\ndef _run(m, x):\n    m(x).sum().backward()\n", tmp_path) == [PREPARE_ROW]
    # The helper itself runs the graph before returning it; its caller moves it first.
    trained_inside = textwrap.dedent("""

    def _build2(q, x):
        m = Net().eval()
        prepared = prepare_qat_pt2e(export(m, (x,)).module(), q)
        prepared(x).sum().backward()
        return prepared


    def main2(q, x):
        model = _build2(q, x)
        move_exported_model_to_train(model)
        model(x).sum().backward()
    """)
    found = rows(TRAINED + trained_inside, tmp_path)
    assert len(found) == 1 and found[0] > PREPARE_ROW


def test_no_caller_or_one_that_cannot_be_read_keeps_the_report(tmp_path):
    assert rows("", tmp_path) == [PREPARE_ROW]  # a public-looking helper nobody here calls
    assert rows(TRAINED + "\n\nHOOKS = [_prepare]\n", tmp_path) == [PREPARE_ROW]


CALLER = """\
import torch
from torchao.quantization.pt2e import move_exported_model_to_train

from pkg.helpers import prepare


def main(q, x, data):
    model = prepare(q, x)
    move_exported_model_to_train(model)
    for b in data:
        model(b).sum().backward()
"""
HELPER = HEAD.replace("def _prepare(", "def prepare(")


def test_callers_in_other_modules(tmp_path):
    root = package_repository(tmp_path / "repo")
    (root / "pkg" / "helpers.py").write_text(HELPER)
    helper = root / "pkg" / "helpers.py"
    found = lambda: [d.range.start.row for d in check_file(helper, ("QL202",)).diagnostics]  # noqa: E731
    assert found() == [PREPARE_ROW]  # no caller anywhere
    (root / "pkg" / "main.py").write_text(CALLER)
    assert found() == []
    # A second caller, training without the move, is not hidden by the first.
    (root / "pkg" / "other.py").write_text(CALLER.replace("    move_exported_model_to_train(model)\n", ""))
    assert found() == [PREPARE_ROW]
