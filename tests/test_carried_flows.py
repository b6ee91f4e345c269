"""A re-check after an edit of one function's body interprets that body and the ones that read
it, and carries the other flows from the last check (`carried_flows`, issue 13).

What is checked: the findings are exactly a fresh check's at every step, whatever the edit
changed that another body reads (a helper it calls, a method of its class, what its class
stores, a module constant, an import, another module, a name), and the work follows the edit
(bodies interpreted are counted, not timed).
"""

from __future__ import annotations

import itertools
import textwrap

import pytest

from qlint.analysis.flow import model_interp
from qlint.analysis.names.project import ProjectIndex
from tests.keystroke_support import counted_runs, example_edits, findings, same_as_fresh, steps

HEAD = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
"""

HELPER = HEAD + textwrap.dedent(
    """

    def prep(model):
        model.eval()
        return model


    def quantize(model, quantizer, data):
        model = prep(model)
        exported = torch.export.export(model, (data,))
        prepared = prepare_pt2e(exported.module(), quantizer)
        prepared(data)
        return convert_pt2e(prepared)


    def unrelated(model, quantizer, data):
        exported = torch.export.export(model.eval(), (data,))
        prepared = prepare_pt2e(exported.module(), quantizer)
        prepared(data)
        return convert_pt2e(prepared)
    """
)

METHODS = HEAD + textwrap.dedent(
    """

    class Runner:
        def __init__(self, model):
            self.model = model

        def _prep(self, model):
            model.eval()
            return model

        def other(self):
            pass

        def run(self, quantizer, data):
            model = self._prep(self.model)
            exported = torch.export.export(model, (data,))
            prepared = prepare_pt2e(exported.module(), quantizer)
            prepared(data)
            return convert_pt2e(prepared)

        def stored(self, quantizer, data):
            exported = torch.export.export(self.model, (data,))
            prepared = prepare_pt2e(exported.module(), quantizer)
            prepared(data)
            return convert_pt2e(prepared)


    def build(quantizer, data):
        net = torch.nn.Linear(2, 2)
        net.eval()
        return Runner(net).stored(quantizer, data)
    """
)


@pytest.fixture
def interpreted(monkeypatch):
    """The function names whose bodies the model flow interprets, in order."""
    return counted_runs(monkeypatch, model_interp.Interpreter)


def _findings(project, path, text):
    return findings(project, path, text, ("QL",))


def _steps(tmp_path, texts, others=None, files=None):
    return steps(tmp_path, texts, ("QL",), others, files)


def test_an_edited_helper_is_read_again_by_its_caller(tmp_path):
    train = HELPER.replace("    model.eval()\n    return model", "    model.train()\n    return model")
    seen = _steps(tmp_path, [HELPER, train, HELPER, HELPER.replace("return model\n", "return model  # x\n", 1)])
    assert seen[0] != seen[1] and seen[0] == seen[2] == seen[3]


def test_a_body_nothing_reads_is_the_only_one_interpreted(tmp_path, interpreted):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    path = str(pkg / "checked.py")
    project = ProjectIndex()
    first = _findings(project, path, HELPER)
    assert {"prep", "quantize", "unrelated"} <= set(interpreted)
    interpreted.clear()
    edited = HELPER.replace("model.eval(), (data,))", "model.eval(), (data, ))")
    assert _findings(project, path, edited) == first
    assert "unrelated" in interpreted and "quantize" not in interpreted and "prep" not in interpreted
    interpreted.clear()
    # The helper's edit: its caller reads it again, the unrelated body does not.
    edited = edited.replace("    model.eval()\n    return model", "    model.eval()  # \n    return model")
    _findings(project, path, edited)
    assert "prep" in interpreted and "quantize" in interpreted and "unrelated" not in interpreted


def test_methods_of_one_class(tmp_path):
    texts = [
        METHODS,
        # the helper method `run` calls
        METHODS.replace("        model.eval()\n        return model", "        model.train()\n        return model"),
        METHODS,
        # another method switches the stored model's mode: what `stored` knows of `self.model`
        METHODS.replace("    def other(self):\n        pass", "    def other(self):\n        self.model.train()"),
        METHODS,
        # `__init__` stores something else
        METHODS.replace("self.model = model", "self.model = torch.nn.Linear(1, 1)"),
        METHODS,
        # the function building the runner
        METHODS.replace("        net.eval()\n", "        net.train()\n"),
    ]
    seen = _steps(tmp_path, texts)
    assert seen[0] != seen[1] and seen[0] == seen[2]
    assert len({tuple(s) for s in seen}) > 2


def test_a_module_constant_an_import_and_a_rename(tmp_path):
    flagged = HEAD + textwrap.dedent(
        """
        CAPTURE = torch.export.export


        def quantize(model, quantizer, data):
            exported = CAPTURE(model, (data,))
            prepared = prepare_pt2e(exported.module(), quantizer)
            prepared(data)
            return convert_pt2e(prepared)


        def other(x):
            return x
        """
    )
    texts = [
        flagged,
        flagged.replace("CAPTURE = torch.export.export", "CAPTURE = torch.jit.trace"),
        flagged,
        flagged.replace("from torchao.quantization.pt2e.quantize_pt2e import", "from elsewhere import"),
        flagged,
        flagged.replace("def quantize(", "def quantized("),
        flagged.replace("    return x", "    return x + 1"),
    ]
    seen = _steps(tmp_path, texts)
    assert seen[0] != seen[1] and seen[0] != seen[3]


def test_another_module_changed(tmp_path):
    text = HEAD + textwrap.dedent(
        """
        from pkg.helpers import prep


        def quantize(model, quantizer, data):
            model = prep(model)
            exported = torch.export.export(model, (data,))
            prepared = prepare_pt2e(exported.module(), quantizer)
            prepared(data)
            return convert_pt2e(prepared)


        def other(x):
            return x
        """
    )
    evals = "def prep(model):\n    model.eval()\n    return model\n"
    trains = evals.replace("eval", "train")
    edited = text.replace("    return x", "    return x + 1")
    seen = _steps(tmp_path, [text, edited, text, edited], {"helpers.py": [evals, trains, trains, evals]})
    assert seen[0] != seen[1] and seen[1] == seen[2] and seen[0] == seen[3]


def test_edits_in_a_real_module_give_a_fresh_check_s_findings():
    # Top-level functions of the first six examples, edited in turn (a statement typed at the end).
    for path, text, edits in itertools.islice(example_edits(5), 6):
        same_as_fresh([text, *edits], path, ("QL",))
