"""QL201/QL202: a test's parameter named after a pytest fixture is what the fixture returns
(issue 14, item 4), found as pytest finds it: the test's module, then the conftest.py of its
directory and of each parent. Look-alikes stay as they were (any mode a caller left it in):
a parametrization of the same name, a conftest of another directory, a fixture of wider scope,
a yielding one, a name the module imports, a plain function that is not a test."""

from __future__ import annotations

import textwrap
from pathlib import Path

from qlint.runner import run_check
from qlint.settings import Settings
from tests.conftest import check_file, old_file

HEAD = """\
import pytest
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)


"""

TRAIN = "@pytest.fixture\ndef model():\n    return Net()\n"
EVALED = "@pytest.fixture\ndef model():\n    return Net().eval()\n"
PTQ = "\n\ndef test_ptq(model, q, x):\n    prepare_pt2e(export(model, (x,)).module(), q)\n"
CONFTEST = "import pytest\nfrom torch import nn\n\n\n@pytest.fixture\ndef model():\n    return nn.Linear(3, 3).eval()\n"
CALLER_LEFT = "(as parameter `model`, in whatever mode the caller left it)"
QAT = "\n\ndef test_qat(model, q, x):\n    prepare_qat_pt2e(export(model, (x,)).module(), q)\n"


def _tree(root: Path, files: dict[str, str]) -> None:
    (root / ".git").mkdir(exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def messages(root: Path, files: dict[str, str], checked: str = "tests/test_q.py", select=("QL201", "QL202")):
    """{row: message} of the findings in `checked`, in a repository holding `files`."""
    _tree(root, files)
    result = check_file(root / checked, select)
    return {d.range.start.row: f"{d.code} {d.message}" for d in result.diagnostics}


def _row(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


# -- followed --------------------------------------------------------------------------------------
def test_fixture_of_the_module_in_train_mode_is_a_definite_finding(tmp_path):
    src = HEAD + TRAIN + PTQ
    found = messages(tmp_path, {"tests/test_q.py": src})
    row = _row(src, "prepare_pt2e(export(")
    assert list(found) == [row]
    assert f"in train mode (built at line {_row(src, 'return Net()')}" in found[row]
    assert "the mode changes BatchNorm2d" in found[row]


def test_fixture_of_the_module_that_evals_is_quiet_for_ptq_and_reported_for_qat(tmp_path):
    src = HEAD + EVALED + PTQ + QAT
    found = messages(tmp_path, {"tests/test_q.py": src})
    row = _row(src, "prepare_qat_pt2e(export(")
    assert list(found) == [row]
    assert found[row].startswith("QL202") and "in eval mode (after `Net().eval()`" in found[row]


def test_fixture_of_a_parent_conftest(tmp_path):
    conftest = CONFTEST.replace("nn.Linear(3, 3)", "nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3))")
    test = HEAD + PTQ + QAT
    files = {"tests/conftest.py": conftest, "tests/quant/test_q.py": test}
    found = messages(tmp_path, files, "tests/quant/test_q.py")
    assert list(found) == [_row(test, "prepare_qat_pt2e(export(")]
    where = f"(returned by fixture `model` of ../conftest.py for the parameter at line {_row(test, 'def test_qat')})"
    assert f"in eval mode {where}" in found[_row(test, "prepare_qat_pt2e(export(")]
    # The nearer conftest wins, and the test module's own fixture over both.
    near = conftest.replace(".eval()", "")
    found = messages(tmp_path, {**files, "tests/quant/conftest.py": near}, "tests/quant/test_q.py")
    assert list(found) == [_row(test, "prepare_pt2e(export(")]
    own = HEAD + EVALED + PTQ
    assert messages(tmp_path, {**files, "tests/quant/test_q.py": own}, "tests/quant/test_q.py") == {}


def test_fixture_requesting_a_fixture(tmp_path):
    src = (
        HEAD
        + TRAIN
        + (
            "\n\n@pytest.fixture\ndef evaled(model):\n    model.eval()\n    return model\n\n\n"
            "def test_ptq(evaled, q, x):\n    prepare_pt2e(export(evaled, (x,)).module(), q)\n"
        )
    )
    assert messages(tmp_path, {"tests/test_q.py": src}) == {}
    trained = src.replace("model.eval()", "model.train()")
    found = messages(tmp_path, {"tests/test_q.py": trained})
    assert "in train mode (after `model.train()`" in found[_row(trained, "prepare_pt2e(export(")]


def test_a_test_method_of_a_test_class(tmp_path):
    method = (
        "\n\nclass TestQuant:\n    def test_ptq(self, model, q, x):\n"
        "        prepare_pt2e(export(model, (x,)).module(), q)\n"
    )
    assert messages(tmp_path, {"tests/test_q.py": HEAD + EVALED + method}) == {}
    found = messages(tmp_path, {"tests/test_q.py": HEAD + TRAIN + method})
    assert "in train mode (built at line" in found[_row(HEAD + TRAIN + method, "prepare_pt2e(export(")]
    # A class with a base (`unittest.TestCase`, a suite of fixtures of its own): not read.
    based = (HEAD + EVALED + method).replace("class TestQuant:", "class TestQuant(Base):")
    assert CALLER_LEFT in messages(tmp_path, {"tests/test_q.py": based})[_row(based, "prepare_pt2e(export(")]


# -- look-alikes: as before, any mode a caller left it in ------------------------------------------


def test_parametrize_of_the_same_name_replaces_the_fixture(tmp_path):
    src = HEAD + EVALED + "\n\n@pytest.mark.parametrize('model', [Net()])\n" + PTQ.lstrip("\n")
    found = messages(tmp_path, {"tests/test_q.py": src})
    assert "in train mode (built at line" in found[_row(src, "prepare_pt2e(export(")]
    indirect = src.replace("[Net()])", "[Net()], indirect=True)")
    assert CALLER_LEFT in messages(tmp_path, {"tests/test_q.py": indirect})[_row(src, "prepare_pt2e(export(")]


def test_conftest_of_another_directory_is_not_read(tmp_path):
    conftest = CONFTEST
    test = HEAD + PTQ
    files = {"tests/other/conftest.py": conftest, "tests/quant/test_q.py": test}
    found = messages(tmp_path, files, "tests/quant/test_q.py")
    assert CALLER_LEFT in found[_row(test, "prepare_pt2e(export(")]


def test_fixtures_whose_value_is_not_fresh_or_not_returned_are_not_followed(tmp_path):
    for fixture in (
        EVALED.replace("@pytest.fixture", "@pytest.fixture(scope='module')"),
        "@pytest.fixture\ndef model():\n    yield Net().eval()\n",
        "@pytest.fixture(params=[0])\ndef model(request):\n    return Net().eval()\n",
        "@pytest.fixture\n@other\ndef model():\n    return Net().eval()\n",
    ):
        src = HEAD + fixture + PTQ
        found = messages(tmp_path, {"tests/test_q.py": src})
        assert CALLER_LEFT in found[_row(src, "prepare_pt2e(export(")], fixture


def test_a_test_under_another_decorator_than_a_mark_is_not_read(tmp_path):
    # `mock.patch` hands the test an argument of its own; a mark (`skipif`) hands none.
    patched = HEAD + EVALED + "\n\n@mock.patch('os.getcwd')" + PTQ.replace("(model, q, x)", "(model, q, x, getcwd)")
    src = "from unittest import mock\n" + patched
    assert CALLER_LEFT in messages(tmp_path, {"tests/test_q.py": src})[_row(src, "prepare_pt2e(export(")]
    marked = HEAD + EVALED + "\n\n@pytest.mark.skipif(False, reason='')" + PTQ
    assert messages(tmp_path, {"tests/test_q.py": marked}) == {}


def test_a_name_the_module_binds_otherwise_hides_the_conftest(tmp_path):
    conftest = CONFTEST
    test = HEAD + "from tests.shared import model  # noqa: F401\n" + PTQ
    found = messages(tmp_path, {"tests/conftest.py": conftest, "tests/test_q.py": test})
    assert CALLER_LEFT in found[_row(test, "prepare_pt2e(export(")]


def test_a_function_pytest_does_not_call_is_not_handed_the_fixture(tmp_path):
    # Bound, the train-mode fixture would make these definite findings; unbound they are as
    # before (a helper nothing calls, a test-named function outside a test module).
    helper = HEAD + TRAIN + "\n\ndef quantize(model, q, x):\n    prepare_pt2e(export(model, (x,)).module(), q)\n"
    assert messages(tmp_path, {"tests/test_q.py": helper}) == {}
    outside = HEAD + TRAIN + PTQ
    found = messages(tmp_path, {"tests/quant.py": outside}, "tests/quant.py")
    assert not any("in train mode" in m for m in found.values())


def test_a_conftest_fixture_with_parameters_is_not_followed(tmp_path):
    conftest = (
        "import pytest\nfrom torch import nn\n\n\n@pytest.fixture\ndef size():\n    return 3\n\n\n"
        "@pytest.fixture\ndef model(size):\n    return nn.Linear(size, size).eval()\n"
    )
    test = HEAD + PTQ
    found = messages(tmp_path, {"tests/conftest.py": conftest, "tests/test_q.py": test})
    assert CALLER_LEFT in found[_row(test, "prepare_pt2e(export(")]


def test_a_conftest_created_or_edited_after_a_cached_run_is_read(tmp_path):
    """Each conftest.py looked for, there or not, is a dependency of the test module's check."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "tests").mkdir()
    test = old_file(tmp_path / "tests" / "test_q.py", HEAD + PTQ)
    settings = Settings(root=tmp_path, cache_dir=tmp_path / "cache", select=("QL201",))

    def found():
        run = run_check([str(test)], settings, use_cache=True, jobs=1)
        return run.cached, [d.message for r in run.results for d in r.diagnostics]

    cached, (message,) = found()
    assert cached == 0 and CALLER_LEFT in message
    assert found()[0] == 1
    conftest = "import pytest\nfrom torch import nn\n\n\n@pytest.fixture\ndef model():\n    return nn.Linear(3, 3)\n"
    old_file(tmp_path / "conftest.py", conftest)  # the repository's top: a parent of tests/
    assert found() == (0, [])  # a Linear alone: nothing mode-dependent
    old_file(tmp_path / "conftest.py", conftest.replace("nn.Linear(3, 3)", "nn.BatchNorm1d(3)"))
    cached, (message,) = found()
    # Built in another file: named by the fixture, at the parameter where its value enters.
    row = _row(HEAD + PTQ, "def test_ptq")
    where = f"returned by fixture `model` of ../conftest.py for the parameter at line {row}"
    assert cached == 0 and f"in train mode ({where}, and modules start in train mode)" in message


# -- a fixture returning the capture itself --------------------------------------------------------
# Its value is made before the test's first statement: the capture is recorded at the test (these
# shapes raised IndexError in QL201/QL202/QL203 before, so the file was left unchecked).
CAPTURED = "ARGS = ()\n\n\n@pytest.fixture\ndef graph():\n    return export(MODEL, ARGS).module()\n"
PROGRAM = "ARGS = ()\n\n\n@pytest.fixture\ndef program():\n    return export(Net().eval(), ARGS)\n"
USES = "\n\ndef test_ptq(graph, q):\n    prepare_pt2e(graph, q)\n"
ALL_MODE_RULES = ("QL201", "QL202", "QL203")


def test_fixture_returning_a_train_mode_capture_is_reported_at_the_parameter(tmp_path):
    src = HEAD + CAPTURED.replace("MODEL", "Net()") + USES
    found = messages(tmp_path, {"tests/test_q.py": src}, select=ALL_MODE_RULES)
    row = _row(src, "def test_ptq")
    assert list(found) == [row]
    assert found[row].startswith("QL201") and "the mode changes BatchNorm2d" in found[row]


def test_fixture_returning_a_capture_of_an_evaled_model_is_quiet(tmp_path):
    src = HEAD + CAPTURED.replace("MODEL", "Net().eval()") + USES
    assert messages(tmp_path, {"tests/test_q.py": src}, select=ALL_MODE_RULES) == {}


def test_fixture_returning_an_exported_program_run_by_the_test_is_quiet(tmp_path):
    src = HEAD + PROGRAM + "\n\ndef test_runs(program):\n    assert program.module()(*ARGS) is not None\n"
    assert messages(tmp_path, {"tests/test_q.py": src}, select=ALL_MODE_RULES) == {}


def test_mode_switch_on_the_module_of_a_fixtures_exported_program_is_reported(tmp_path):
    src = HEAD + PROGRAM + "\n\ndef test_switches(program):\n    program.module().eval()\n"
    found = messages(tmp_path, {"tests/test_q.py": src}, select=ALL_MODE_RULES)
    row = _row(src, "program.module().eval()")
    assert list(found) == [row]
    assert found[row].startswith("QL203") and "raises NotImplementedError" in found[row]
