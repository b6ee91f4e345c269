"""QL201/QL202: a base class's capture helper called as `self.<method>(...)` by subclasses in
other modules (issue 14, item 7; `subclass_self_calls`).

ExecuTorch's `TestQNN.get_qdq_module` and ao's `PT2EQuantizationTestCase._test_quantizer` are
called from test classes of other modules. Such a call used to leave the callers unknown:
it is read now, with the modes it passes, when the lookup along the subclass's bases finds
the helper's own class first. An override found first is no caller; a base that cannot be
placed before it, `super().<method>(...)` and a model that cannot be classified keep the
report.
"""

from __future__ import annotations

import os
import textwrap
import weakref

from tests.conftest import check_file, package_repository, rows_of
from tests.snippets import NET_BN2D

SUITE = (
    NET_BN2D
    + """
from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e


class Evaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)
        self.eval()

    def forward(self, x):
        return self.bn(x)


class Suite:
    def quantize(self, model, x):
        captured = export(model, (x,)).module()
        return prepare_pt2e(captured, None)

    def check_quantizer(self, model, x, is_qat=False):
        m = model.eval()
        captured = export(m, (x,)).module()
        if is_qat:
            return prepare_qat_pt2e(captured, None)
        return prepare_pt2e(captured, None)
"""
)
LINES = SUITE.splitlines()
PTQ_ROW = LINES.index("        captured = export(model, (x,)).module()") + 1
QAT_ROW = LINES.index("        captured = export(m, (x,)).module()") + 1
IMPORT = "import torch\nfrom pkg.suite import Evaled, Net, Suite\n"
EVALED = """
class TestOps(Suite):
    def test_it(self):
        self.quantize(Net().eval(), torch.randn(1, 3, 4, 4))
"""


def _rows(tmp_path, rule: str, **tests: str) -> list[int]:
    modules = {name: IMPORT + textwrap.dedent(body) for name, body in tests.items()}
    root = package_repository(tmp_path / "repo", suite=SUITE, **modules)
    return rows_of(check_file(root / "pkg" / "suite.py", (rule,)).diagnostics)


# Quiet: the constructs in minimal form.


def test_subclass_callers_passing_eval_mode_models_vouch_for_the_helper(tmp_path):
    tests = """
class TestOps(Suite):
    def test_evaled_here(self):
        self.quantize(Net().eval(), torch.randn(1, 3, 4, 4))

    def test_evaled_in_its_constructor(self):
        model = Evaled()
        self.quantize(model, torch.randn(1, 3, 4, 4))
"""
    assert _rows(tmp_path, "QL201", test_ops=tests) == []


def test_a_subclass_of_a_subclass_in_a_third_module_is_read(tmp_path):
    middle = "\nclass Middle(Suite):\n    pass\n"
    leaf = "from pkg.middle import Middle\n" + EVALED.replace("TestOps(Suite)", "TestLeaf(Middle)")
    assert _rows(tmp_path, "QL201", middle=middle, leaf=leaf) == []


def test_subclass_callers_that_never_pass_is_qat_never_reach_the_qat_capture(tmp_path):
    tests = """
class TestOps(Suite):
    def test_ptq(self):
        self.check_quantizer(Net(), torch.randn(1, 3, 4, 4))

    def test_ptq_spelled(self):
        self.check_quantizer(Net(), torch.randn(1, 3, 4, 4), is_qat=False)
"""
    assert _rows(tmp_path, "QL202", test_ops=tests) == []


def test_an_override_found_first_is_no_caller(tmp_path):
    # Its own `quantize` runs for `TestOwn`'s `self.quantize(Net())`: not the helper's caller.
    own = """
class TestOwn(Suite):
    def quantize(self, model, x):
        return model

    def test_it(self):
        self.quantize(Net(), torch.randn(1, 3, 4, 4))
"""
    assert _rows(tmp_path, "QL201", test_own=own, test_ops=EVALED) == []


# Loud: what must keep the report.


def test_a_subclass_caller_passing_a_train_mode_model_is_reported(tmp_path):
    tests = """
class TestOps(Suite):
    def test_evaled(self):
        self.quantize(Net().eval(), torch.randn(1, 3, 4, 4))

    def test_train(self):
        self.quantize(Net(), torch.randn(1, 3, 4, 4))
"""
    assert _rows(tmp_path, "QL201", test_ops=tests) == [PTQ_ROW]
    dropout = EVALED.replace("Net().eval()", "torch.nn.Dropout(0.5)")
    assert _rows(tmp_path / "d", "QL201", test_drop=dropout) == [PTQ_ROW]


def test_a_subclass_caller_passing_is_qat_true_is_reported(tmp_path):
    tests = """
class TestOps(Suite):
    def test_ptq(self):
        self.check_quantizer(Net(), torch.randn(1, 3, 4, 4))

    def test_qat(self):
        self.check_quantizer(Net(), torch.randn(1, 3, 4, 4), is_qat=True)
"""
    assert _rows(tmp_path, "QL202", test_ops=tests) == [QAT_ROW]


def test_an_override_handing_on_through_super_is_reported(tmp_path):
    own = """
class TestOwn(Suite):
    def quantize(self, model, x):
        return super().quantize(model, x)

    def test_it(self):
        self.quantize(Net(), torch.randn(1, 3, 4, 4))
"""
    assert _rows(tmp_path, "QL201", test_own=own, test_ops=EVALED) == [PTQ_ROW]


def test_unresolvable_callers_keep_the_report(tmp_path):
    # A model from a loader nothing reads.
    loaded = """
class TestOps(Suite):
    def test_it(self, loader):
        self.quantize(loader.load(), torch.randn(1, 3, 4, 4))
"""
    assert _rows(tmp_path / "a", "QL201", test_ops=loaded) == [PTQ_ROW]
    # The method handed on as a value: no flow reads what calls it.
    taken = "\nclass TestTaken(Suite):\n    def test_it(self):\n        keep(self.quantize)\n"
    assert _rows(tmp_path / "t", "QL201", test_ops=EVALED, test_taken=taken) == [PTQ_ROW]
    # A library base before the helper's class may define `quantize` itself.
    library = """
import unittest


class TestOps(unittest.TestCase, Suite):
    def test_it(self):
        self.quantize(Net().eval(), torch.randn(1, 3, 4, 4))
"""
    assert _rows(tmp_path / "b", "QL201", test_ops=library) == [PTQ_ROW]
    # A class written inside a function: its bases are no names of the module.
    nested = """
def make():
    class TestOps(Suite):
        def test_it(self):
            self.quantize(Net().eval(), torch.randn(1, 3, 4, 4))

    return TestOps
"""
    assert _rows(tmp_path / "c", "QL201", test_ops=nested) == [PTQ_ROW]


# What the search holds: one subclass module at a time, in a command-line run.


def test_a_subclass_module_read_goes_before_the_next_is_read(tmp_path, monkeypatch):
    # torchao's `_test_quantizer` has its callers in 3 test modules of 62 to 177 KB: each
    # one's tree went only when the check ended, so they were all held at once (issue 13).
    from qlint.analysis.flow import caller_modules
    from qlint.analysis.names.project import ProjectIndex

    alive_at_build: list[list[str]] = []
    built: list[weakref.ref] = []
    build = caller_modules.caller_module

    def recording(ctx, path, data, *args):
        alive_at_build.append([os.path.basename(r().path) for r in built if r() is not None])
        module = build(ctx, path, data, *args)
        if module is not None:
            built.append(weakref.ref(module[0]))
        return module

    monkeypatch.setattr("qlint.analysis.flow.project_callers.caller_module", recording)
    ptq = "\nclass TestOps{n}(Suite):\n    def test_ptq(self):\n        self.check_quantizer(Net(), torch.randn(1))\n"
    modules = {f"test_ops{n}": IMPORT + ptq.format(n=n) for n in range(3)}
    root = package_repository(tmp_path / "repo", suite=SUITE, **modules)
    run = ProjectIndex(track_dependents=False)  # a command-line run's index
    assert rows_of(check_file(root / "pkg" / "suite.py", ("QL202",), run).diagnostics) == []
    assert alive_at_build == [[], [], []]
    # An editor's index keeps them for the next keystroke, as it keeps every caller module.
    alive_at_build.clear()
    built.clear()
    assert rows_of(check_file(root / "pkg" / "suite.py", ("QL202",)).diagnostics) == []
    assert alive_at_build == [[], ["test_ops0.py"], ["test_ops0.py", "test_ops1.py"]]


def test_a_subclass_module_summarised_over_the_handover_budget_is_parsed_once_for_its_calls(tmp_path, monkeypatch):
    # torchao's test_arm_inductor_quantizer.py: its summary (is `_test_quantizer` named
    # elsewhere?) was parsed with the run's handover budget full, the tree dropped, and the
    # module parsed again at once to read its calls (issue 13).
    import ast

    from qlint.analysis.names.project import ProjectIndex
    from qlint.analysis.names.tree_handover import HANDOVER

    tests = "\nclass TestOps(Suite):\n    def test_ptq(self):\n        self.check_quantizer(Net(), torch.randn(1))\n"
    root = package_repository(tmp_path / "repo", suite=SUITE, test_ops=IMPORT + tests)
    caller = root / "pkg" / "test_ops.py"
    text = caller.read_text()
    parsed: list[str] = []
    real = ast.parse

    def counting(source, filename="<unknown>", *args, **kwargs):
        if source == text:
            parsed.append(str(filename))
        return real(source, filename, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    monkeypatch.setattr(HANDOVER, "_pending", {str(caller)})  # the run checks it later
    monkeypatch.setattr(HANDOVER, "budget", 0)  # and holds trees enough already
    run = ProjectIndex(track_dependents=False)  # a command-line run's index
    assert rows_of(check_file(root / "pkg" / "suite.py", ("QL202",), run).diagnostics) == []
    assert parsed == [str(caller)]
