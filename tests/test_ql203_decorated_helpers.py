"""QL203 through a helper under a project decorator (issue 14; `pass_through`, `helper_callees.callee`).

d2go's runner switches to eval mode the QAT graph `setup_qat_model` returns
(`d2go/runner/default_runner.py:349`). `setup_qat_model` is under `@mock_quantization_type`,
whose wrapper calls it with its own arguments on each of three branches (one under
`mock.patch`) and returns what it returned: the graph is the function's, and the switch raises.
A wrapper that may hand back something else (the model it was given, the graph made
switchable) stops the flow: what the call returns is not known, and no finding rests on it.
"""

from __future__ import annotations

import pytest

from tests.conftest import lint

HEAD = """\
from unittest import mock

from torch.export import export
from torchao.quantization.pt2e import allow_exported_model_train_eval
from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e

"""
# d2go's decorator, cut down: set-up (`functools` imported there, not by the module), a helper
# def, and `return quant_func(cfg, model, ...)` on every path.
MOCKED = """
def mock_quantization_type(quant_func):
    import builtins
    import functools

    real_type = builtins.type

    def _new_type(obj):
        return real_type(obj)

    @functools.wraps(quant_func)
    def wrapper(cfg, model, *args, **kwargs):
        if cfg.EAGER_MODE is None:
            logger.warning("consider removing this code")
            return quant_func(cfg, model, *args, **kwargs)
        if not cfg.EAGER_MODE:
            return quant_func(cfg, model, *args, **kwargs)
        with mock.patch("torch.nn.quantized.modules.linear.type") as mock_type:
            mock_type.side_effect = _new_type
            return quant_func(cfg, model, *args, **kwargs)

    return wrapper
"""
LOGGED = """
def mock_quantization_type(quant_func):
    from functools import wraps

    @wraps(quant_func)
    def wrapper(*args, **kwargs):
        logger.info("calling %s", quant_func.__name__)
        return quant_func(*args, **kwargs)

    return wrapper
"""
RUNNER = """

@mock_quantization_type
def setup_qat_model(cfg, model, quantizer, x):
    return prepare_qat_pt2e(export(model, (x,)).module(), quantizer)


def build_model(cfg, model, quantizer, x, eval_only):
    model = setup_qat_model(cfg, model, quantizer, x)
    if eval_only:
        model.eval()
    return model
"""


def ql203(src: str) -> list[int]:
    return [d.range.start.row for d in lint(HEAD + src, select=("QL203",)) if d.code == "QL203"]


def _row(src: str, needle: str) -> int:
    return next(i for i, line in enumerate((HEAD + src).splitlines(), 1) if needle in line)


@pytest.mark.parametrize("deco", [MOCKED, LOGGED], ids=["d2go", "functools.wraps"])
def test_the_graph_a_decorated_helper_returns_is_followed(deco):
    src = deco + RUNNER
    assert ql203(src) == [_row(src, "model.eval()")]


# Each replaces d2go's wrapper: the call may return something other than the function's graph.
NOT_KEPT = {
    "returns the model it was given on one branch": """
        if not cfg.ENABLED:
            return model
        return quant_func(cfg, model, *args, **kwargs)
""",
    "makes the graph switchable": """
        gm = quant_func(cfg, model, *args, **kwargs)
        allow_exported_model_train_eval(gm)
        return gm
""",
    "hands on a model of its own": """
        return quant_func(cfg, model.module, *args, **kwargs)
""",
    "changes the graph it returns": """
        return quant_func(cfg, model, *args, **kwargs).eval_copy()
""",
}


@pytest.mark.parametrize("why", sorted(NOT_KEPT))
def test_a_wrapper_that_may_return_something_else_stops_the_flow(why):
    deco = (
        "\ndef mock_quantization_type(quant_func):\n"
        "    import functools\n\n"
        "    @functools.wraps(quant_func)\n"
        "    def wrapper(cfg, model, *args, **kwargs):"
        f"{NOT_KEPT[why]}\n"
        "    return wrapper\n"
    )
    assert ql203(deco + RUNNER) == []
