"""Caller modules kept across an editor's checks of the module they call (`caller_modules`).

Each case edits the helper's module in the buffer of one long-lived index (as the language
server holds it), checks it, and compares the findings with a fresh index's check of the same
buffer: a kept analysis must give exactly what a new one gives. The loud cases first assert
that the edit changes the findings; the work counter (`caller_modules.BUILT`) says whether a
caller module was analysed again.
"""

from __future__ import annotations

from qlint.analysis.flow import caller_modules
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from tests.conftest import settings_for

HEAD = """\
import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
"""
# The helper QL201 judges from its callers, one they call first (`prep`), one nobody calls.
HELPER = (
    HEAD
    + """

def quantize_module(module, quantizer, x):
    captured = export(module, (x,)).module()
    return prepare_pt2e(captured, quantizer)


def prep(model):
    model.eval()
    return model


def unrelated(path):
    return path + ".pte"


class Runner:
    def run(self, model):
        return model

    def other(self, x):
        return x


class Steps:
    @staticmethod
    def keep(model):
        return model

    def other(self, x):
        return x
"""
)
CALLER = """\
from torch import nn
from pkg.utils.export_utils import Runner, Steps, prep, quantize_module


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)


def main(quantizer, x):
    model = Runner().run(prep(Net()))
    Steps.keep(x)
    quantize_module(model, quantizer, x)
"""


def _repo(tmp_path, callers: int = 2):
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "pkg" / "utils").mkdir(parents=True)
    (root / "pkg" / "__init__.py").touch()
    (root / "pkg" / "utils" / "__init__.py").touch()
    (root / "pkg" / "utils" / "export_utils.py").write_text(HELPER)
    (root / "scripts").mkdir()
    for i in range(callers):
        (root / "scripts" / f"c{i}.py").write_text(CALLER)
    return root, str(root / "pkg" / "utils" / "export_utils.py")


def _findings(text: str, path: str, project: ProjectIndex) -> list[tuple]:
    project.set_overlay(path, text)
    result = check_source(text, path, settings_for(("QL201", "QL202")), project)
    assert not result.errors, result.errors
    return [(d.code, d.range.start.row, d.message) for d in result.diagnostics]


def _edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1
    return text.replace(old, new)


class _Editor:
    """One index across the edits (the server's), checked against a fresh one each time."""

    def __init__(self, tmp_path):
        self.root, self.path = _repo(tmp_path)
        self.project = ProjectIndex()
        self.text = HELPER
        self.before = _findings(HELPER, self.path, self.project)

    def type(self, old: str, new: str) -> tuple[list[tuple], int]:
        """(the findings after the edit, caller modules analysed for it)."""
        self.text = _edit(self.text, old, new)
        built = caller_modules.BUILT[0]
        found = _findings(self.text, self.path, self.project)
        analysed = caller_modules.BUILT[0] - built
        assert found == _findings(self.text, self.path, ProjectIndex())
        return found, analysed


def test_a_helper_that_stops_calling_eval_changes_the_findings(tmp_path):
    editor = _Editor(tmp_path)
    assert editor.before == []  # every caller hands over a model `prep` put in eval mode
    found, analysed = editor.type("    model.eval()\n    return model", "    model.cpu()\n    return model")
    # The callers read `prep`: analysed again (the first one handing over a risky model decides).
    assert [code for code, _, _ in found] == ["QL201"] and analysed >= 1
    found, analysed = editor.type("    model.cpu()\n    return model", "    model.eval()\n    return model")
    assert found == [] and analysed == 2


def test_a_renamed_parameter_of_a_helper_changes_the_findings(tmp_path):
    editor = _Editor(tmp_path)
    # `prep(net)` now evals a global `model`, not what it is given (an edit of its header).
    found, analysed = editor.type("def prep(model):\n    model.eval()", "def prep(net):\n    model.eval()")
    assert [code for code, _, _ in found] == ["QL201"] and analysed >= 1


def test_a_method_the_callers_read_changes_the_findings(tmp_path):
    editor = _Editor(tmp_path)
    found, analysed = editor.type(
        "    def run(self, model):\n        return model", "    def run(self, model):\n        return model.train()"
    )
    assert [code for code, _, _ in found] == ["QL201"] and analysed >= 1


def test_an_edit_of_a_body_no_caller_reads_analyses_no_caller_again(tmp_path):
    editor = _Editor(tmp_path)
    assert caller_modules.BUILT[0] and len([k for k in caller_modules._MODULES if k[2] == editor.path]) == 2
    found, analysed = editor.type('return path + ".pte"', 'return path + ".bin"')
    assert found == editor.before and analysed == 0
    # Another method of a class whose static method they call (`Steps.keep`: finding it reads
    # no body of the class).
    steps = "def keep(model):\n        return model\n\n    def other(self, x):\n        return "
    found, analysed = editor.type(steps + "x", steps + "-x")
    assert found == editor.before and analysed == 0
    # A keystroke in the helper whose callers are read: every caller module reads it.
    found, analysed = editor.type(
        "    return prepare_pt2e(captured, quantizer)", "    return prepare_pt2e(captured, quantizer) "
    )
    assert found == editor.before and analysed == 2


def test_a_line_added_or_a_caller_edited_analyses_again(tmp_path):
    editor = _Editor(tmp_path)
    found, analysed = editor.type('return path + ".pte"', 'p = 1\n    return path + ".pte"')
    assert found == editor.before and analysed == 2  # lines moved: no edit of one body
    # A caller edited on disk: that module alone is analysed again.
    caller = editor.root / "scripts" / "c0.py"
    caller.write_text(CALLER.replace("prep(Net())", "Net()"))
    built = caller_modules.BUILT[0]
    found = _findings(editor.text, editor.path, editor.project)
    assert caller_modules.BUILT[0] - built == 1
    assert [code for code, _, _ in found] == ["QL201"]
    assert found == _findings(editor.text, editor.path, ProjectIndex())


def test_qat_rule_reads_the_callers_the_ptq_rule_read_in_the_same_check(tmp_path):
    _, path = _repo(tmp_path, callers=3)
    built = caller_modules.BUILT[0]
    _findings(HELPER, path, ProjectIndex())
    assert caller_modules.BUILT[0] - built == 3  # not 6: QL202 asked the modules QL201 asked


def test_a_command_line_index_keeps_the_caller_modules_until_the_check_ends(tmp_path):
    _, path = _repo(tmp_path, callers=3)
    built = caller_modules.BUILT[0]
    result = check_source(HELPER, path, settings_for(("QL201", "QL202")), ProjectIndex(track_dependents=False))
    assert not result.errors
    assert caller_modules.BUILT[0] - built == 3  # QL202 read the callers QL201 read
    assert len([k for k in caller_modules._MODULES if k[2] == path]) == 3
    caller_modules.checked_once(path)  # the run checks each file once: they go with the check
    assert not [k for k in caller_modules._MODULES if k[2] == path]


def test_another_module_a_caller_reads_edited_on_disk_changes_the_findings(tmp_path):
    editor = _Editor(tmp_path)
    nets = editor.root / "pkg" / "nets.py"
    nets.write_text("from torch import nn\n\n\ndef make_net():\n    return nn.BatchNorm2d(3).eval()\n")
    for i in range(2):
        (editor.root / "scripts" / f"c{i}.py").write_text(
            "from pkg.nets import make_net\nfrom pkg.utils.export_utils import quantize_module\n\n\n"
            "def main(quantizer, x):\n    quantize_module(make_net(), quantizer, x)\n"
        )
    found, _ = editor.type('return path + ".pte"', 'return path + ".bin"')
    assert found == []
    nets.write_text("from torch import nn\n\n\ndef make_net():\n    return nn.BatchNorm2d(3)\n")
    # Only a body no caller reads is edited: the callers' analyses read `pkg/nets.py`, which changed.
    found, analysed = editor.type('return path + ".bin"', 'return path + ".pt2"')
    assert [code for code, _, _ in found] == ["QL201"] and analysed >= 1
