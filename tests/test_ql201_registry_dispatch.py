"""QL201: a method that captures its parameter, reached through a registry of classes (issue 14).

`HANDLERS[kind](q).quantize(model, inputs)`: the class that handles the model is picked from
a dict of classes (or the stages are a list of instances run in turn), and the method of every
class the registry holds is a target of the call (`registry_dispatch`). What the call passes is
what the method's callers pass: an eval-mode model vouches for the capture, a train-mode model
with batch norm keeps it reported. A registry the walk cannot read in full (a class it does not
summarise, a table of another module, one handed in as a parameter) leaves the call unread and
the method's callers unknown, as before.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import check_file, lint, package_repository, rows_of
from tests.snippets import CATCHING_TRACED
from tests.snippets import CONV_BN_MODULE as MODELS

HANDLERS = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class PtqHandler:
    def __init__(self, quantizer):
        self.quantizer = quantizer

    def quantize(self, model, inputs):
        captured = torch.export.export(model, inputs).module()
        return prepare_pt2e(captured, self.quantizer)


class CopyHandler:
    def __init__(self, quantizer):
        self.quantizer = quantizer

    def quantize(self, model, inputs):
        return model
"""
CAPTURE_ROW = HANDLERS.splitlines().index("        captured = torch.export.export(model, inputs).module()") + 1


HEAD = """\
from pkg.handlers import CopyHandler, PtqHandler
from pkg.models import ConvBn

"""

EXTRA = """\
class ExtHandler:
    def __init__(self, quantizer):
        self.quantizer = quantizer

    def quantize(self, model, inputs):
        return model.eval()
"""

DECORATED = EXTRA.replace("    def quantize", "    @traced\n    def quantize").replace(
    "class ExtHandler", f"{CATCHING_TRACED}\n\nclass ExtHandler"
)


def _rows(tmp_path: Path, runner: str, **more: str) -> list[int]:
    """The QL201 rows of `pkg/handlers.py` in a package whose `runner` dispatches to it."""
    root = package_repository(tmp_path / "repo", handlers=HANDLERS, models=MODELS, runner=HEAD + runner, **more)
    return rows_of(check_file(root / "pkg" / "handlers.py", ("QL201",)).diagnostics)


def test_an_eval_mode_model_through_a_dict_of_classes_vouches_for_the_capture(tmp_path):
    runner = """
HANDLERS = {"ptq": PtqHandler, "copy": CopyHandler}


def run(kind, quantizer, inputs):
    return HANDLERS[kind](quantizer).quantize(ConvBn().eval(), inputs)
"""
    assert _rows(tmp_path, runner) == []


def test_a_train_mode_model_through_a_dict_of_classes_is_reported(tmp_path):
    runner = """
HANDLERS = {"ptq": PtqHandler, "copy": CopyHandler}


def run(kind, quantizer, inputs):
    return HANDLERS[kind](quantizer).quantize(ConvBn(), inputs)
"""
    assert _rows(tmp_path, runner) == [CAPTURE_ROW]


def test_a_class_looked_up_with_get_then_built_is_followed(tmp_path):
    runner = """
HANDLERS = {"ptq": PtqHandler, "copy": CopyHandler}


def run(kind, quantizer, inputs):
    cls = HANDLERS.get(kind)
    handler = cls(quantizer)
    model = ConvBn()
    model.eval()
    return handler.quantize(model, inputs)
"""
    assert _rows(tmp_path, runner) == []


def test_stage_instances_run_in_turn_are_each_a_target(tmp_path):
    quiet = """
def run(quantizer, inputs):
    model = ConvBn().eval()
    for stage in [CopyHandler(quantizer), PtqHandler(quantizer)]:
        model = stage.quantize(model, inputs)
"""
    assert _rows(tmp_path / "quiet", quiet) == []
    # The first stage hands its model on unchanged: the capturing stage gets the train-mode model.
    loud = quiet.replace("ConvBn().eval()", "ConvBn()")
    assert _rows(tmp_path / "loud", loud) == [CAPTURE_ROW]


def test_the_dispatchers_own_callers_decide_through_the_registry(tmp_path):
    runner = """
HANDLERS = {"ptq": PtqHandler, "copy": CopyHandler}


def run(kind, model, quantizer, inputs):
    return HANDLERS[kind](quantizer).quantize(model, inputs)


def main(quantizer, inputs):
    run("ptq", ConvBn().eval(), quantizer, inputs)
"""
    assert _rows(tmp_path / "quiet", runner) == []
    # One dispatch of the two passes a train-mode model with batch norm: reported.
    loud = runner + '    run("copy", ConvBn(), quantizer, inputs)\n'
    assert _rows(tmp_path / "loud", loud) == [CAPTURE_ROW]


def test_a_registry_class_the_walk_does_not_read_keeps_the_callers_unknown(tmp_path):
    # `ExtHandler.quantize` is wrapped by a decorator that may return something else: the walk
    # does not read what it runs, so the call is not read as one of `PtqHandler.quantize`
    # (which it may be): the callers are unknown.
    runner = """
from pkg.extra import ExtHandler

HANDLERS = {"ptq": PtqHandler, "ext": ExtHandler}


def run(kind, quantizer, inputs):
    return HANDLERS[kind](quantizer).quantize(ConvBn().eval(), inputs)
"""
    assert _rows(tmp_path, runner, extra=DECORATED) == [CAPTURE_ROW]
    # Another module's class whose method the walk reads, as it reads that module's functions
    # (one that names a mode switch, `method_words`).
    assert _rows(tmp_path / "read", runner, extra=EXTRA) == []
    assert _rows(tmp_path / "unnamed", runner, extra=EXTRA.replace("model.eval()", "model")) == [CAPTURE_ROW]


def test_a_registry_read_from_another_module_stays_reported(tmp_path):
    # The table is dispatched in a module that imports it: a table of another module is not
    # read there, so that dispatch is a caller that cannot be classified.
    runner = """
HANDLERS = {"ptq": PtqHandler, "copy": CopyHandler}


def run(kind, quantizer, inputs):
    return HANDLERS[kind](quantizer).quantize(ConvBn().eval(), inputs)
"""
    other = """\
from pkg.models import ConvBn
from pkg.runner import HANDLERS


def run_again(kind, quantizer, inputs):
    return HANDLERS[kind](quantizer).quantize(ConvBn().eval(), inputs)
"""
    assert _rows(tmp_path, runner, other=other) == [CAPTURE_ROW]


def test_a_registry_handed_in_as_a_parameter_stays_reported(tmp_path):
    runner = """
HANDLERS = {"ptq": PtqHandler, "copy": CopyHandler}


def dispatch(registry, kind, quantizer, inputs):
    return registry[kind](quantizer).quantize(ConvBn().eval(), inputs)


def run(kind, quantizer, inputs):
    return dispatch(HANDLERS, kind, quantizer, inputs)
"""
    assert _rows(tmp_path, runner) == [CAPTURE_ROW]


_SWITCHERS = """
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class ConvBn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.conv(x))


class Evaluating:
    def ready(self, model):
        model.eval()


class AlsoEvaluating:
    def ready(self, model):
        model.eval()


class Keeping:
    def ready(self, model):
        return None


def run(kind, quantizer, inputs):
    model = ConvBn()
    READY[kind]().ready(model)
    captured = torch.export.export(model, inputs).module()
    return prepare_pt2e(captured, quantizer)
"""


def test_a_model_every_target_sets_to_eval_is_in_eval_mode_after_the_call():
    source = _SWITCHERS + '\n\nREADY = {"a": Evaluating, "b": AlsoEvaluating}\n'
    assert rows_of(lint(source, select=("QL201",))) == []


def test_a_model_one_target_leaves_as_it_came_may_be_in_train_mode_after_the_call():
    source = _SWITCHERS + '\n\nREADY = {"a": Evaluating, "b": Keeping}\n'
    row = source.splitlines().index("    captured = torch.export.export(model, inputs).module()") + 1
    assert rows_of(lint(source, select=("QL201",))) == [row]


# The registry and its classes in one module: the registry must be closed (`closed_registries`)
# for the calls read here to be every call of the method.
_ONE_MODULE = """
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class ConvBn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.conv(x))


class PtqHandler:
    def __init__(self, quantizer):
        self.quantizer = quantizer

    def quantize(self, model, inputs):
        captured = torch.export.export(model, inputs).module()
        return prepare_pt2e(captured, self.quantizer)


class CopyHandler:
    def __init__(self, quantizer):
        self.quantizer = quantizer

    def quantize(self, model, inputs):
        return model


HANDLERS = {"ptq": PtqHandler, "copy": CopyHandler}
"""
_ONE_ROW = _ONE_MODULE.splitlines().index("        captured = torch.export.export(model, inputs).module()") + 1


def _one_module(dispatch: str) -> list[int]:
    return rows_of(lint(_ONE_MODULE + dispatch, select=("QL201",)))


def test_a_closed_registry_of_the_module_vouches_through_its_dispatches():
    subscript = """
def run(kind, quantizer, inputs):
    return HANDLERS[kind](quantizer).quantize(ConvBn().eval(), inputs)
"""
    looked_up = """
def run(kind, quantizer, inputs):
    cls = HANDLERS.get(kind)
    if cls is None:
        raise KeyError(kind)
    handler = cls(quantizer)
    return handler.quantize(ConvBn().eval(), inputs)
"""
    assert _one_module(subscript) == []
    assert _one_module(looked_up) == []


def test_a_train_mode_model_through_a_closed_registry_of_the_module_is_reported():
    dispatch = """
def run(kind, quantizer, inputs):
    return HANDLERS[kind](quantizer).quantize(ConvBn(), inputs)
"""
    assert _one_module(dispatch) == [_ONE_ROW]


def test_an_open_registry_of_the_module_keeps_the_callers_unknown():
    eval_dispatch = """
def run(kind, quantizer, inputs):
    return HANDLERS[kind](quantizer).quantize(ConvBn().eval(), inputs)
"""
    openings = {
        "stored into": "\n\ndef extend(name, cls):\n    HANDLERS[name] = cls\n",
        "handed on": "\n\ndef handlers():\n    return HANDLERS\n",
        "class handed on": "\n\ndef handler_class(kind):\n    cls = HANDLERS.get(kind)\n    return cls\n",
        "instance handed on": (
            "\n\ndef keep(kind, quantizer, kept):\n    h = HANDLERS[kind](quantizer)\n    kept.append(h)\n"
        ),
        "a parameter of that name": (
            "\n\ndef other(HANDLERS, kind, quantizer, inputs):\n"
            "    return HANDLERS[kind](quantizer).quantize(ConvBn(), inputs)\n"
        ),
    }
    for name, opening in openings.items():
        assert _one_module(eval_dispatch + opening) == [_ONE_ROW], name


def test_a_registry_of_the_module_another_module_names_is_open(tmp_path):
    module = (
        _ONE_MODULE
        + """
def run(kind, quantizer, inputs):
    return HANDLERS[kind](quantizer).quantize(ConvBn().eval(), inputs)
"""
    )
    other = "from pkg.handlers import HANDLERS\n\nHANDLERS['late'] = object\n"
    root = package_repository(tmp_path / "repo", handlers=module, other=other)
    assert rows_of(check_file(root / "pkg" / "handlers.py", ("QL201",)).diagnostics) == [_ONE_ROW]


def test_stages_of_the_module_run_in_turn_from_a_list_written_in_the_loop():
    quiet = """
def run(quantizer, inputs):
    model = ConvBn().eval()
    for stage in [CopyHandler(quantizer), PtqHandler(quantizer)]:
        model = stage.quantize(model, inputs)
"""
    assert _one_module(quiet) == []
    assert _one_module(quiet.replace("ConvBn().eval()", "ConvBn()")) == [_ONE_ROW]
    # The loop's variable outlives the loop and is handed on: the stage may run elsewhere.
    escaped = quiet + "    return stage\n"
    assert _one_module(escaped) == [_ONE_ROW]


def test_ql202_an_eval_mode_model_dispatched_to_a_qat_capture_is_reported():
    # The mirror (QL202): the registry's dispatch is a caller of the QAT method like any
    # other, and the one that hands it an eval-mode model with batch norm is named.
    source = (
        _ONE_MODULE.replace("prepare_pt2e", "prepare_qat_pt2e")
        + """
def run(kind, quantizer, inputs):
    return HANDLERS[kind](quantizer).quantize(MODEL, inputs)
"""
    )
    assert rows_of(lint(source.replace("MODEL", "ConvBn()"), select=("QL202",))) == []
    assert rows_of(lint(source.replace("MODEL", "ConvBn().eval()"), select=("QL202",))) == [_ONE_ROW]
