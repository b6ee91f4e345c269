"""A function written in an `except ImportError:` handler for a PT2E API the `try` imports from
torchao (`try: from torchao.quantization.pt2e import move_exported_model_to_train / except
ImportError: def move_exported_model_to_train(model): ...`, a user's QAT tutorial copy in an
OpenOCR fork): the torchao qlint targets (0.18) has the API, so the handler never runs and the
call is the library's. It was followed as the module's own function: the move's fallback
(`allow_exported_model_train_eval` then `.train()`) did not count as a move (QL202 false alarm),
and a stand-in that only raises hid the prepare or convert it replaces (misses).

Checked on torch 2.13 + torchao 0.18: `from torchao.quantization.pt2e import
move_exported_model_to_train, move_exported_model_to_eval` and `from
torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e, convert_pt2e`
import. `from torch.ao.quantization import move_exported_model_to_train` raises ImportError there: its
fallback runs, and is still followed.
"""

from __future__ import annotations

import pytest

from tests.conftest import lint
from tests.snippets import BN_DROPOUT_NET

NET = "\nimport torch\nfrom torch.export import export\n\n\n" + BN_DROPOUT_NET + "\n"

QAT_WITH_MOVE = """
def qat(q, x, steps):
    model = Net()
    model.eval()
    prepared = prepare_qat_pt2e(export(model, (x,)).module(), q)
    move_exported_model_to_train(prepared)
    for _ in range(steps):
        prepared(x).sum().backward()
    return prepared
"""


def rows(src: str, code: str) -> list[int]:
    return [d.range.start.row for d in lint(src, select=(code,)) if d.code == code]


def line_of(src: str, text: str) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if text in line)


def test_the_move_a_handler_stands_in_for_is_torchaos_move():
    src = (
        NET
        + """
from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e

try:
    from torchao.quantization.pt2e import move_exported_model_to_train
except ImportError:
    from torchao.quantization.pt2e import allow_exported_model_train_eval

    def move_exported_model_to_train(model):
        allow_exported_model_train_eval(model)
        model.train()
"""
        + QAT_WITH_MOVE
    )
    assert rows(src, "QL202") == []


def test_a_prepare_a_handler_stands_in_for_is_the_api():
    # The stand-in raises: followed as the module's function, no graph left it to be judged.
    src = (
        NET
        + """
try:
    from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e
except ImportError:

    def prepare_qat_pt2e(model, quantizer):
        raise RuntimeError("QAT needs torchao")


def qat(q, x, steps):
    model = Net()
    model.eval()
    prepared = prepare_qat_pt2e(export(model, (x,)).module(), q)
    for _ in range(steps):
        prepared(x).sum().backward()
    return prepared
"""
    )
    assert rows(src, "QL202") == [line_of(src, "prepared = prepare_qat_pt2e(")]


def test_a_ptq_prepare_a_handler_stands_in_for_is_the_api():
    src = (
        NET
        + """
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e

try:
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
except ModuleNotFoundError:

    def prepare_pt2e(model, quantizer):
        raise RuntimeError("PTQ needs torchao")


def ptq(q, x):
    gm = export(Net(), (x,)).module()
    prepared = prepare_pt2e(gm, q)
    prepared(x)
    return convert_pt2e(prepared)
"""
    )
    assert rows(src, "QL201") == [line_of(src, "gm = export(")]


@pytest.mark.parametrize(
    ("module", "caught"),
    [
        # `torch.ao.quantization` has no move on torch 2.13: the handler's function is what runs,
        # and it moves nothing.
        ("torch.ao.quantization", "ImportError"),
        # A handler that does not catch a failed import is no stand-in for it.
        ("torchao.quantization.pt2e", "AttributeError"),
    ],
)
def test_a_handler_that_may_run_is_still_followed(module, caught):
    src = (
        NET
        + f"""
from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e

try:
    from {module} import move_exported_model_to_train
except {caught}:

    def move_exported_model_to_train(model):
        return model
"""
        + QAT_WITH_MOVE
    )
    assert rows(src, "QL202") == [line_of(src, "prepared = prepare_qat_pt2e(")]


def test_a_function_the_module_defines_itself_is_its_own():
    # Defined outside any handler, the function replaces the import whatever torchao has.
    src = (
        NET
        + """
from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e
from torchao.quantization.pt2e import move_exported_model_to_train


def move_exported_model_to_train(model):
    return model
"""
        + QAT_WITH_MOVE
    )
    assert rows(src, "QL202") == [line_of(src, "prepared = prepare_qat_pt2e(")]
