"""QL202: a move made by a method of the class or by a function of another module of the project
(issue 14, items 5 and 6; `rules/moving_callees.py`): `self._to_train(prepared)`,
`from pkg.utils import put_in_train_mode`. Each counts when the function that runs is the one
read and it moves that parameter on every path before anything could train it; the other
module is a dependency of the check.

Checked on torch 2.13 + torchao 0.18 (XNNPACK QAT config, `Net` captured after `.eval()`): a
training step after `self._to_train(g)` or `put_in_train_mode(g)` (each calling
`move_exported_model_to_train(g)`) moves the batch norm's running mean and drops about half the
activations; after a function that moves another argument, or moves only on one branch not
taken, the running mean stays and nothing is dropped.
"""

from __future__ import annotations

import os

from qlint.analysis.names.project import ProjectIndex
from qlint.runner import run_check
from qlint.settings import Settings
from tests.conftest import check_file, package_repository
from tests.test_ql202_move_order import HEAD

RUN = """
class Runner:
    def __init__(self, q, x):
        self.q = q
        self.x = x

    def run(self, data):
        m = Net().eval()
        prepared = prepare_qat_pt2e(export(m, (self.x,)).module(), self.q)
        self._to_train(prepared)
        train_loop(prepared, data)

    def _to_train(self, gm):
        move_exported_model_to_train(gm)
"""
PREPARE = "        prepared = prepare_qat_pt2e(export(m, (self.x,)).module(), self.q)"
UTILS = """\
from torchao.quantization.pt2e import move_exported_model_to_train


def put_in_train_mode(gm):
    move_exported_model_to_train(gm)
"""
ONE_BRANCH = UTILS.replace(
    "    move_exported_model_to_train(gm)\n", "    if gm.training:\n        move_exported_model_to_train(gm)\n"
)
IMPORTED = (
    "from pkg.utils import put_in_train_mode\n"
    + HEAD
    + RUN.replace("        self._to_train(prepared)\n", "        put_in_train_mode(prepared)\n")
)


def _row(src: str) -> int:
    return src.splitlines().index(PREPARE) + 1


def _rows(tmp_path, src: str, **others: str) -> list[int]:
    root = package_repository(tmp_path / f"repo{len(list(tmp_path.iterdir()))}", runner=src, **others)
    return [d.range.start.row for d in check_file(root / "pkg" / "runner.py", ("QL202",)).diagnostics]


def test_a_method_of_the_class_that_moves_its_parameter_counts(tmp_path):
    src = HEAD + RUN
    assert _rows(tmp_path, src) == []
    assert _rows(tmp_path, src.replace("        self._to_train(prepared)\n", "")) == [_row(src)]
    # By keyword, and through a module function the method hands it to.
    keyword = src.replace("self._to_train(prepared)", "self._to_train(gm=prepared)")
    assert _rows(tmp_path, keyword) == []
    relayed = (
        src.replace("        move_exported_model_to_train(gm)\n", "        train_mode(gm)\n")
        + "\n\ndef train_mode(gm):\n    move_exported_model_to_train(gm)\n"
    )
    assert _rows(tmp_path, relayed) == []


def test_a_method_that_does_not_move_its_parameter_first_is_no_move(tmp_path):
    src = HEAD + RUN
    other = src.replace("move_exported_model_to_train(gm)", "move_exported_model_to_train(self.x)")
    one_branch = src.replace(
        "        move_exported_model_to_train(gm)\n",
        "        if self.q:\n            move_exported_model_to_train(gm)\n",
    )
    trains_first = src.replace(
        "    def _to_train(self, gm):\n", "    def _to_train(self, gm):\n        train_loop(gm, [self.x])\n"
    )
    static = src.replace("    def _to_train(self, gm):", "    @staticmethod\n    def _to_train(gm):")
    for shape in (other, one_branch, trains_first, static):
        assert _rows(tmp_path, shape) == [_row(shape)], shape


def test_a_method_a_subclass_may_override_is_no_move(tmp_path):
    src = HEAD + RUN
    # In the module, or in another module of the project (any text naming the method).
    here = src + "\n\nclass Lazy(Runner):\n    def _to_train(self, gm):\n        pass\n"
    assert _rows(tmp_path, here) == [_row(here)]
    elsewhere = "from pkg.runner import Runner\n\n\nclass Lazy(Runner):\n    def _to_train(self, gm):\n        pass\n"
    assert _rows(tmp_path, src, other=elsewhere) == [_row(src)]
    assert _rows(tmp_path, src, other=elsewhere.replace("_to_train", "_warm_up")) == []


def test_a_function_of_another_module_that_moves_its_parameter_counts(tmp_path):
    assert _rows(tmp_path, IMPORTED, utils=UTILS) == []
    relative = IMPORTED.replace("from pkg.utils import", "from .utils import")
    assert _rows(tmp_path, relative, utils=UTILS) == []
    # Re-exported by another module of the package.
    api = IMPORTED.replace("from pkg.utils import", "from pkg.api import")
    assert _rows(tmp_path, api, utils=UTILS, api="from pkg.utils import put_in_train_mode  # noqa: F401\n") == []
    # Moving on one branch, moving another argument, or not moving at all: no move.
    other = UTILS.replace("def put_in_train_mode(gm):", "def put_in_train_mode(gm, side=None):").replace(
        "move_exported_model_to_train(gm)", "move_exported_model_to_train(side)"
    )
    none = "def put_in_train_mode(gm):\n    gm.train_mode = True\n"
    for utils in (ONE_BRANCH, other, none):
        assert _rows(tmp_path, IMPORTED, utils=utils) == [_row(IMPORTED)], utils


def test_a_local_of_the_movers_name_is_not_the_mover(tmp_path):
    # A parameter of the same name: whatever the caller hands in runs.
    shadowed = IMPORTED.replace("    def run(self, data):", "    def run(self, data, put_in_train_mode=print):")
    assert _rows(tmp_path, shadowed, utils=UTILS) == [_row(shadowed)]
    local = (
        HEAD
        + RUN.replace(
            "        self._to_train(prepared)\n", "        train_mode = print\n        train_mode(prepared)\n"
        )
        + "\n\ndef train_mode(gm):\n    move_exported_model_to_train(gm)\n"
    )
    assert _rows(tmp_path, local) == [_row(local)]
    assert _rows(tmp_path, local.replace("        train_mode = print\n", "")) == []


def test_an_edit_of_the_moving_module_reaches_the_check(tmp_path):
    # The language server: the other module is a dependency, and its edited buffer decides.
    root = package_repository(tmp_path / "lsp", runner=IMPORTED, utils=UTILS)
    runner, utils = root / "pkg" / "runner.py", str(root / "pkg" / "utils.py")
    project = ProjectIndex()
    first = check_file(runner, ("QL202",), project)
    assert first.diagnostics == []
    assert utils in first.dependencies
    project.update(utils, ONE_BRANCH)
    assert [d.range.start.row for d in check_file(runner, ("QL202",), project).diagnostics] == [_row(IMPORTED)]
    project.update(utils, UTILS)
    assert check_file(runner, ("QL202",), project).diagnostics == []


def test_a_cached_result_is_checked_again_after_the_moving_module_changes(tmp_path):
    root = package_repository(tmp_path / "cli", runner=IMPORTED, utils=UTILS)
    runner, utils = root / "pkg" / "runner.py", root / "pkg" / "utils.py"
    settings = Settings(select=("QL202",), root=root, cache_dir=tmp_path / "cache")
    first = run_check([str(runner)], settings, use_cache=True, jobs=1)
    assert [r.diagnostics for r in first.results] == [[]]
    assert run_check([str(runner)], settings, use_cache=True, jobs=1).cached == 1
    utils.write_text(ONE_BRANCH)
    past = os.stat(utils).st_mtime_ns + 10**9
    os.utime(utils, ns=(past, past))
    again = run_check([str(runner)], settings, use_cache=True, jobs=1)
    assert again.cached == 0
    assert [[d.range.start.row for d in r.diagnostics] for r in again.results] == [[_row(IMPORTED)]]


def test_the_methods_that_may_move_are_found_once_per_class(tmp_path, monkeypatch):
    """Every QAT method of a suite asks which methods of its class may move a graph: the texts
    of the class's methods are searched once for all of them, not once per method asking."""
    from qlint.rules import moving_callees

    asked: list[str] = []
    may_move = moving_callees._may_move

    def counted(home, words):
        asked.append(words.strip().split("(")[0])
        return may_move(home, words)

    monkeypatch.setattr(moving_callees, "_may_move", counted)
    body = RUN[RUN.index("    def run(self, data):") : RUN.index("    def _to_train")]
    more = "".join(body.replace("def run(", f"def run{i}(") for i in range(3))
    src = HEAD + RUN.replace("    def _to_train", more + "    def _to_train")
    assert _rows(tmp_path, src) == []  # every run moves its graph through `self._to_train`
    methods = ["def __init__", "def run", "def run0", "def run1", "def run2", "def _to_train"]
    assert sorted(a for a in asked if a in methods) == sorted(methods)  # each searched once
    moved_nowhere = src.replace("        move_exported_model_to_train(gm)\n", "        pass\n")
    rows = [i + 1 for i, line in enumerate(moved_nowhere.splitlines()) if line == PREPARE]
    assert len(rows) == 4 and _rows(tmp_path, moved_nowhere) == rows
