"""QL201: what is done to a model after its graph is taken, or to the original after a copy is
taken, is not in the captured graph; classes of installed packages are read from their source.

Each construct has a quiet test for the right code and a loud one where the bug is real.
"""

from __future__ import annotations

import os
import textwrap

import pytest

from qlint.analysis.flow import installed_classes
from tests.test_model_sources import check

CONV = """
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3)
"""


def _test(body: str, classes: str = CONV) -> str:
    return textwrap.dedent(classes) + "\n\ndef test_q(quantizer, x):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def _ql201(src: str) -> list[int]:
    return [d.range.start.row for d in check(src, select=("QL201",))]


# -- the name rebound to the graph ------------------------------------------------------------------
def test_calls_on_the_name_after_it_holds_the_graph_are_quiet():
    after = """
    m = Net()
    ep = export(m, (x,))
    m = ep.module()
    m = prepare_pt2e(m, quantizer)
    self_check(m)
    m.head = make_head()
    """
    assert _ql201(_test(after)) == []


def test_parts_given_before_the_name_is_rebound_are_reported():
    before = """
    m = Net()
    m.head = make_head()
    ep = export(m, (x,))
    m = ep.module()
    m = prepare_pt2e(m, quantizer)
    """
    assert len(_ql201(_test(before))) == 1


def test_a_rebinding_in_a_branch_ends_nothing():
    branch = """
    m = Net()
    if x:
        m = export(m, (x,)).module()
    m.head = make_head()
    prepare_pt2e(export(m, (x,)).module(), quantizer)
    """
    assert len(_ql201(_test(branch))) == 1


def test_a_value_made_from_the_model_may_be_the_model():
    wrapped = """
    m = Net()
    m = m.to("cpu")
    m.head = make_head()
    prepare_pt2e(export(m, (x,)).module(), quantizer)
    """
    assert len(_ql201(_test(wrapped))) == 1


# -- after the statement that captures (directly or through a helper) -------------------------------
HELPER = """

def quantize(m, quantizer, x):
    m = export(m, (x,)).module()
    m = prepare_pt2e(m, quantizer)
    m(x)
    return convert_pt2e(m)
"""


def test_changes_after_the_helper_call_that_captures_are_quiet():
    after = """
    m = Net()
    m = quantize(m, quantizer, x)
    check_nodes(m)
    """
    assert _ql201(_test(after) + HELPER) == []


def test_changes_before_the_helper_call_are_reported():
    before = """
    m = Net()
    add_parts(m)
    m = quantize(m, quantizer, x)
    """
    assert len(_ql201(_test(before) + HELPER)) == 1


def test_a_capture_in_a_loop_sees_the_changes_of_the_previous_turn():
    loop = """
    m = Net()
    for _ in range(2):
        m = quantize(m, quantizer, x)
        add_parts(m)
    """
    assert len(_ql201(_test(loop) + HELPER)) == 1


# -- copies -------------------------------------------------------------------------------------------
def test_a_deep_copy_does_not_see_what_is_done_to_the_original_afterwards():
    copied = """
    model_fx = Net()
    model_graph = copy.deepcopy(model_fx)
    model_fx = prepare_fx(model_fx, qconfig)
    model_fx(x)
    graph = export(model_graph, (x,)).module()
    prepare_pt2e(graph, quantizer)
    """
    assert _ql201("import copy\n" + _test(copied)) == []


def test_a_deep_copy_taken_after_the_original_was_changed_is_reported():
    changed = """
    model_fx = Net()
    add_parts(model_fx)
    model_graph = copy.deepcopy(model_fx)
    prepare_pt2e(export(model_graph, (x,)).module(), quantizer)
    """
    assert len(_ql201("import copy\n" + _test(changed))) == 1


def test_a_deep_copy_of_a_batch_norm_model_keeps_its_mode_and_its_parts():
    bn = CONV.replace("nn.Conv2d(3, 3, 3)", "nn.BatchNorm2d(3)")
    copied = """
    model_fx = Net()
    model_graph = copy.deepcopy(model_fx)
    prepare_pt2e(export(model_graph, (x,)).module(), quantizer)
    """
    (d,) = check("import copy\n" + _test(copied, bn), select=("QL201",))
    assert "in train mode" in d.message and "BatchNorm2d" in d.message


def test_a_single_layer_gru_without_dropout_copied_for_the_capture_is_quiet():
    gru = """
    class RNN(torch.nn.Module):
        def __init__(self, kind):
            super().__init__()
            if kind == "GRU":
                self.mod = torch.nn.GRU(2, 2).to(dtype=torch.float)
            if kind == "LSTM":
                self.mod = torch.nn.LSTM(2, 2, 2, True, False, 0.5)
    """
    body = """
    model_fx = RNN("GRU")
    model_graph = copy.deepcopy(model_fx)
    model_fx = prepare_fx(model_fx, qconfig)
    prepare_pt2e(export(model_graph, (x,)).module(), quantizer)
    """
    src = "import copy\n" + _test(body, gru)
    # The class may build an LSTM with dropout 0.5: its mode matters, whatever `kind` is.
    (d,) = check(src, select=("QL201",))
    assert "LSTM (dropout)" in d.message
    assert _ql201(src.replace("True, False, 0.5", "True, False, 0.0")) == []


# -- arithmetic arguments -----------------------------------------------------------------------------
def test_a_class_built_with_arithmetic_of_a_tensor_is_known_in_full():
    clamp = """
    class Clamp(torch.nn.Module):
        def __init__(self, top):
            super().__init__()
            self.top = top

        def forward(self, t):
            return torch.clamp(t, max=self.top)
    """
    assert _ql201(_test("prepare_pt2e(export(Clamp(x - 0.2), (x,)).module(), quantizer)\n", clamp)) == []
    # A variable handed to it may be a module: not known in full.
    assert len(_ql201(_test("prepare_pt2e(export(Clamp(y), (x,)).module(), quantizer)\n", clamp))) == 1


# -- classes of installed packages --------------------------------------------------------------------
HELPERS = """
import torch


class TestHelperModules:
    class ConvOnly(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 3, 3)

        def forward(self, x):
            return self.conv(x).squeeze(0)

    class ConvBn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = TestHelperModules.ConvOnly()
            self.bn = torch.nn.BatchNorm2d(3)

    class Loaded(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = load_body()

    class ConvBnEval(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = torch.nn.BatchNorm2d(3)
            self.eval()
"""


@pytest.fixture
def site_dir(tmp_path, monkeypatch):
    site = tmp_path / "site-packages"
    pkg = site / "fakeinstalled" / "testing"
    pkg.mkdir(parents=True)
    (site / "fakeinstalled" / "__init__.py").write_text("from .testing.helpers import TestHelperModules\n")
    (pkg / "__init__.py").touch()
    (pkg / "helpers.py").write_text(HELPERS)
    monkeypatch.setattr(installed_classes, "site_dirs", lambda: (str(site),))
    installed_classes.module_file.cache_clear()
    yield site
    installed_classes.module_file.cache_clear()


def _installed(build: str, imports: str = "from fakeinstalled.testing.helpers import TestHelperModules\n") -> str:
    return imports + _test(f"m = {build}\nprepare_pt2e(export(m, (x,)).module(), quantizer)\n", "")


def test_a_conv_only_class_of_an_installed_package_is_quiet(site_dir):
    assert _ql201(_installed("TestHelperModules.ConvOnly()")) == []
    # Re-exported by the package's `__init__`.
    assert _ql201(_installed("TestHelperModules.ConvOnly()", "from fakeinstalled import TestHelperModules\n")) == []


def test_an_installed_class_holding_batch_norm_is_reported_and_named(site_dir):
    (d,) = check(_installed("TestHelperModules.ConvBn()"), select=("QL201",))
    assert "in `TestHelperModules.ConvBn`, the mode changes BatchNorm2d" in d.message


def test_an_installed_class_whose_init_calls_eval_starts_in_eval_mode(site_dir):
    # ExecuTorch's installed gen_etrecord.py captures SimpleModel() of tests/models.py, whose
    # __init__ ends with self.eval(): a module of the same installed package.
    from qlint.analysis.names.project import ProjectIndex
    from qlint.engine import check_source
    from tests.conftest import settings_for

    head = "import torch\nimport torch.nn as nn\nfrom torch.export import export\n"
    head += "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n"
    src = head + _installed("TestHelperModules.ConvBnEval()")
    script = site_dir / "fakeinstalled" / "examples" / "gen.py"
    script.parent.mkdir()

    def found(text: str) -> int:
        result = check_source(text, str(script), settings_for(("QL201",)), ProjectIndex())
        return len(result.diagnostics)

    assert found(src) == 0
    # A later `.train()` still counts.
    assert found(src.replace("    prepare_pt2e", "    m.train()\n    prepare_pt2e")) == 1
    # Another package's classes are not read for their mode (only for what they hold).
    assert len(_ql201(_installed("TestHelperModules.ConvBnEval()"))) == 1


def test_an_installed_class_with_parts_from_elsewhere_is_reported(site_dir):
    assert len(_ql201(_installed("TestHelperModules.Loaded()"))) == 1


def test_a_class_of_a_package_that_is_not_installed_is_reported(site_dir):
    assert len(_ql201(_installed("TestHelperModules.ConvOnly()", "from notinstalled import TestHelperModules\n"))) == 1


def test_the_installed_module_is_a_dependency_of_the_check(site_dir, tmp_path):
    from qlint.analysis.names.project import ProjectIndex
    from qlint.engine import check_source
    from tests.conftest import settings_for

    path = str(tmp_path / "test_x.py")
    project = ProjectIndex()
    src = "import torch\nimport torch.nn as nn\nfrom torch.export import export\n"
    src += "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n" + _installed(
        "TestHelperModules.ConvOnly()"
    )
    result = check_source(src, path, settings_for(("QL201",)), project)
    assert result.diagnostics == []
    helpers = os.path.join(str(site_dir), "fakeinstalled", "testing", "helpers.py")
    assert helpers in result.dependencies


def test_the_real_torch_testing_helpers_resolve():
    if installed_classes.module_file("torch.testing._internal.common_quantization") is None:
        pytest.skip("torch is not installed")
    src = "from torch.testing._internal.common_quantization import TestHelperModules\n"
    quiet = src + _test(
        "m = TestHelperModules.Conv2dThenConv1d()\nprepare_pt2e(export(m, (x,)).module(), quantizer)\n", ""
    )
    assert _ql201(quiet) == []
    loud = quiet.replace("Conv2dThenConv1d()", "ConvWithBNRelu(relu=True)")
    (d,) = check(loud, select=("QL201",))
    assert "BatchNorm2d" in d.message


def test_an_installed_module_is_kept_as_its_summary_parsing_only_the_classes_asked_for(site_dir):
    # The whole tree of a large installed module was kept by every worker for the run.
    import ast

    from qlint.analysis.names.project import ProjectIndex

    path = str(site_dir / "fakeinstalled" / "testing" / "helpers.py")
    installed_classes._SCOPES.pop(path, None)
    found = installed_classes.installed_class(
        "fakeinstalled.testing.helpers.TestHelperModules.ConvBn", ProjectIndex(), "user.py"
    )
    assert found is not None
    node, scope = found
    assert installed_classes._SCOPES[path][1] is scope
    assert list(scope.classes) == ["TestHelperModules"]
    # A summarised scope's tables build an entry when it is asked for (an eager one is a dict).
    assert not isinstance(scope.classes, dict)
    assert scope.imports == {"torch": "torch"}
    # Positions as in a parse of the whole module: findings in it point at the same rows.
    whole = ast.parse(HELPERS)
    outer = next(s for s in whole.body if isinstance(s, ast.ClassDef))
    expected = next(s for s in outer.body if isinstance(s, ast.ClassDef) and s.name == "ConvBn")
    assert ast.dump(node, include_attributes=True) == ast.dump(expected, include_attributes=True)
    # The same node at the next ask, not a second parse.
    assert (
        installed_classes.installed_class(
            "fakeinstalled.testing.helpers.TestHelperModules.ConvBn", ProjectIndex(), "user.py"
        )[0]
        is node
    )
