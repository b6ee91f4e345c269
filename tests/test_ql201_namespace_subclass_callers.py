"""QL201: a subclass's `self.<method>(...)` calls when the base class's module is imported
under a longer dotted name than the one it knows itself by (issue 14, items 6 and 7).

ExecuTorch's `backends/qualcomm/tests/` has no `__init__.py`: utils.py is module `utils` to
its own check, and test_qnn_delegate.py imports its suite as
`executorch.backends.qualcomm.tests.utils.TestQNN`. The caller search compared the two names,
found them different, read the suite as another project class defining `get_qdq_module`
itself, and dismissed all 250 `self.get_qdq_module(...)` calls as calls of some other
method: a subclass passing a train-mode model was no caller, and an eval-mode caller in the
helper's own module then vouched for it alone. The class is the same when its module's own
dotted name is (`method_references._canonical`).
"""

from __future__ import annotations

import textwrap

from tests.conftest import check_file, rows_of
from tests.snippets import NET_BN2D

SUITE = (
    NET_BN2D
    + """

class Suite:
    def quantize(self, model, x):
        captured = export(model, (x,)).module()
        return prepare_pt2e(captured, None)

    def test_own(self):
        self.quantize(Net().eval(), torch.randn(1, 3, 4, 4))
"""
)
PTQ_ROW = SUITE.splitlines().index("        captured = export(model, (x,)).module()") + 1
IMPORT = "import torch\nfrom tests.suite import Net, Suite\n"


def _rows(tmp_path, **modules: str) -> list[int]:
    """QL201 rows of tests/suite.py in a checkout whose `tests/` has no `__init__.py`."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "tests" / "suite.py").write_text(SUITE)
    for name, body in modules.items():
        (root / "tests" / f"{name}.py").write_text(textwrap.dedent(body))
    return rows_of(check_file(root / "tests" / "suite.py", ("QL201",)).diagnostics)


TRAIN = (
    IMPORT
    + """
class TestOps(Suite):
    def test_train(self):
        self.quantize(Net(), torch.randn(1, 3, 4, 4))
"""
)


def test_a_subclass_passing_a_train_mode_model_through_the_longer_name_is_reported(tmp_path):
    assert _rows(tmp_path, test_ops=TRAIN) == [PTQ_ROW]


def test_subclasses_passing_eval_mode_models_through_the_longer_name_vouch(tmp_path):
    assert _rows(tmp_path, test_ops=TRAIN.replace("Net()", "Net().eval()")) == []


def test_another_class_of_the_same_name_is_not_the_suite(tmp_path):
    # `other.Suite` defines its own `quantize`: its subclass's train-mode call is not a caller.
    other = "\nclass Suite:\n    def quantize(self, model, x):\n        return model\n"
    imports = "from tests.suite import Net\nfrom tests.other import Suite"
    tests = TRAIN.replace("from tests.suite import Net, Suite", imports)
    assert _rows(tmp_path, other=other, test_ops=tests) == []


def test_an_override_in_the_subclass_is_not_the_suite(tmp_path):
    override = "    def quantize(self, model, x):\n        return model\n\n"
    tests = TRAIN.replace("    def test_train(self):", override + "    def test_train(self):")
    assert _rows(tmp_path, test_ops=tests) == []
