"""QL203 after an allow torch 2.13 cannot run: `torch.ao.quantization.allow_exported_model_train_eval`.

A book's chapter script (Efficient-AI-in-Practice, ch6) converts a graph, then calls the allow
through `torch.ao.quantization` inside `try`/`except (AttributeError, TypeError): pass`, and
evaluates the graph with helpers that call `.eval()`. torch 2.13's `torch.ao.quantization` has
no such function (torchao does): the lookup raises, the handler swallows it, and `.eval()`
raises NotImplementedError. Such an allow allows nothing after its `try`; the rest of its own
body does not run on 2.13 and stays quiet, and every allow that does run keeps its effect.
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint

HEAD = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def evaluate(model, data):
    model.eval()
    return [model(x) for x in data]


def run(model, quantizer, data):
    graph = torch.export.export(model.eval(), (data[0],)).module()
    prepared = prepare_pt2e(graph, quantizer)
    for x in data:
        prepared(x)
    quantized = convert_pt2e(prepared)
"""
OLD_ALLOW = "torch.ao.quantization.allow_exported_model_train_eval(quantized)"
TAIL = """\
    quantized.eval()
    return quantized
"""


def ql203(body: str, tail: str = TAIL, head: str = HEAD) -> list[int]:
    """Rows of the QL203 findings; `body` is indented into `run` after the convert."""
    src = head + textwrap.indent(textwrap.dedent(body), "    ") + tail
    return [d.range.start.row for d in lint(src, select=("QL203",)) if d.code == "QL203"]


def test_switch_after_a_swallowed_torch_ao_allow_is_reported():
    body = f"""\
        try:
            {OLD_ALLOW}
        except (AttributeError, TypeError):
            pass
        """
    assert ql203(body) == [20]


def test_broad_and_bare_handlers_swallow_it_too():
    for handler in ("except Exception:", "except:", "except BaseException:"):
        body = f"""\
            try:
                {OLD_ALLOW}
            {handler}
                pass
            """
        assert ql203(body) == [20], handler


def test_helper_switching_the_graph_is_reported_at_its_call():
    body = f"""\
        try:
            {OLD_ALLOW}
        except AttributeError:
            pass
        evaluate(quantized, data)
        """
    assert ql203(body, tail="    return quantized\n") == [20]


def test_switch_in_the_same_body_after_the_allow_is_quiet():
    # On torch 2.13 the allow raises first: the switch never runs; on an older torch it is allowed.
    body = f"""\
        try:
            {OLD_ALLOW}
            quantized.eval()
        except (AttributeError, TypeError):
            pass
        """
    assert ql203(body, tail="    return quantized\n") == []


def test_torchao_allow_in_the_same_try_is_quiet():
    body = """\
        try:
            from torchao.quantization.pt2e import allow_exported_model_train_eval
            allow_exported_model_train_eval(quantized)
        except (ImportError, AttributeError):
            pass
        """
    assert ql203(body) == []


def test_handler_allowing_through_torchao_is_quiet():
    body = f"""\
        try:
            {OLD_ALLOW}
        except AttributeError:
            from torchao.quantization.pt2e import allow_exported_model_train_eval
            allow_exported_model_train_eval(quantized)
        """
    assert ql203(body) == []


def test_graph_allowed_before_the_try_stays_allowed():
    body = f"""\
        from torchao.quantization.pt2e import allow_exported_model_train_eval
        allow_exported_model_train_eval(quantized)
        try:
            {OLD_ALLOW}
        except AttributeError:
            pass
        """
    assert ql203(body) == []


def test_handler_that_lets_the_attribute_error_through_is_quiet():
    # The AttributeError leaves `run` before the switch: nothing after the `try` runs.
    body = f"""\
        try:
            {OLD_ALLOW}
        except ImportError:
            pass
        """
    assert ql203(body) == []


def test_unguarded_torch_ao_allow_is_quiet_here():
    # It raises out of `run` on torch 2.13 (QL401 reports it); once fixed, it allows.
    assert ql203(f"{OLD_ALLOW}\n") == []


def test_name_imported_from_torch_ao_is_not_judged_by_its_spelling():
    # A bare name may be bound by a shim whose fallback imports torchao's function.
    head = HEAD.replace(
        "import torch\n",
        "import torch\ntry:\n    from torch.ao.quantization import allow_exported_model_train_eval\n"
        "except ImportError:\n    from torchao.quantization.pt2e import allow_exported_model_train_eval\n",
    )
    body = """\
        try:
            allow_exported_model_train_eval(quantized)
        except AttributeError:
            pass
        """
    assert ql203(body, head=head) == []
