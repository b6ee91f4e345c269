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
# That allow in a `try` whose handler swallows its AttributeError, as a statement list of `run`.
SWALLOWED = f"try:\n    {OLD_ALLOW}\nexcept AttributeError:\n    pass\n"
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
    body = SWALLOWED + "evaluate(quantized, data)\n"
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


# -- the message says why the allow written before the switch did not count --------------

_WHY = "is looked up in `torch.ao.quantization`, which torch 2.13 lacks"
_PLAIN_HELP = "Exported GraphModules have no usable train/eval switch"


def ql203_findings(body: str, tail: str = TAIL):
    src = HEAD + textwrap.indent(textwrap.dedent(body), "    ") + tail
    return [d for d in lint(src, select=("QL203",)) if d.code == "QL203"]


def test_message_names_the_allow_that_did_not_count_and_its_handler():
    body = f"""\
        try:
            {OLD_ALLOW}
        except (AttributeError, TypeError):
            pass
        """
    (d,) = ql203_findings(body)
    assert d.message == (
        "`quantized` comes from `convert_pt2e` (line 15): `.eval()` on it raises NotImplementedError on torch 2.13;"
        " the `allow_exported_model_train_eval` at line 17 is looked up in `torch.ao.quantization`, which"
        " torch 2.13 lacks (its AttributeError is swallowed at line 18)"
    )
    assert d.help.startswith("Import `allow_exported_model_train_eval` from `torchao.quantization.pt2e` instead")
    assert _PLAIN_HELP in d.help


def test_message_names_the_module_as_spelled_and_the_handler_that_swallows():
    # `torch.quantization` is spelled out; of two handlers, the second catches the AttributeError.
    body = """\
        try:
            torch.quantization.allow_exported_model_train_eval(quantized)
        except ImportError:
            raise
        except Exception:
            pass
        """
    (d,) = ql203_findings(body)
    assert "is looked up in `torch.quantization`, which torch 2.13 lacks" in d.message
    assert "(its AttributeError is swallowed at line 20)" in d.message and "at line 17 " in d.message


def test_switch_in_the_handler_names_the_allow_too():
    body = f"""\
        try:
            {OLD_ALLOW}
        except AttributeError:
            quantized.eval()
        """
    (d,) = ql203_findings(body, tail="    return quantized\n")
    assert d.range.start.row == 19 and _WHY in d.message


def test_helper_switch_message_names_the_allow():
    body = SWALLOWED + "evaluate(quantized, data)\n"
    (d,) = ql203_findings(body, tail="    return quantized\n")
    assert d.message.startswith("`quantized` comes from `convert_pt2e` (line 15) and this call runs `.eval()`")
    assert _WHY in d.message and "(its AttributeError is swallowed at line 18)" in d.message
    assert d.help.startswith("Import `allow_exported_model_train_eval` from `torchao.quantization.pt2e`")


def test_no_allow_keeps_the_plain_message():
    (d,) = ql203_findings("pass\n")
    assert d.message == (
        "`quantized` comes from `convert_pt2e` (line 15): `.eval()` on it raises NotImplementedError on torch 2.13"
    )
    assert d.help.startswith(_PLAIN_HELP)


def test_graph_rebound_after_the_try_keeps_the_plain_message():
    # The allow was written for the old graph; the one switched is a new one nothing allowed.
    body = SWALLOWED + "quantized = convert_pt2e(prepare_pt2e(graph, quantizer))\n"
    (d,) = ql203_findings(body)
    assert "looked up in" not in d.message and d.help.startswith(_PLAIN_HELP)


def test_other_graph_switched_keeps_the_plain_message():
    body = SWALLOWED + "prepared.eval()\n"
    (d,) = ql203_findings(body, tail="    return quantized\n")
    assert d.message.startswith("`prepared` comes from `prepare_pt2e`") and "looked up in" not in d.message


def test_helper_handed_another_graph_keeps_the_plain_message():
    body = SWALLOWED + "evaluate(prepared, data)\n"
    (d,) = ql203_findings(body, tail="    return quantized\n")
    assert d.message.startswith("`prepared` comes from `prepare_pt2e`") and "looked up in" not in d.message


CALLBACK = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def to_eval(model):
    model.eval()


def experiment(model, quantizer, data, evaluate):
    graph = torch.export.export(model, (data[0],)).module()
    quantized = convert_pt2e(prepare_pt2e(graph, quantizer))
{allow}    return evaluate(quantized)


def main(model, quantizer, data):
    return experiment(model, quantizer, data, to_eval)
"""


def test_callback_given_the_graph_a_helper_made_names_the_helpers_allow():
    allow = textwrap.indent(SWALLOWED, "    ")
    (d,) = [d for d in lint(CALLBACK.format(allow=allow), select=("QL203",)) if d.code == "QL203"]
    assert d.range.start.row == 20 and d.message.startswith("`experiment` calls `to_eval` with the graph")
    assert f"at line 13 {_WHY}" in d.message and "(its AttributeError is swallowed at line 14)" in d.message
    assert d.help.startswith("Import `allow_exported_model_train_eval` from `torchao.quantization.pt2e`")


def test_callback_given_a_graph_nothing_allowed_keeps_the_plain_message():
    (d,) = [d for d in lint(CALLBACK.format(allow=""), select=("QL203",)) if d.code == "QL203"]
    assert d.message.startswith("`experiment` calls `to_eval` with the graph") and "looked up in" not in d.message
    assert d.help.startswith("Pass a callback")


# -- ... also where the graph is held by a container, may be the graph, or is relayed ------


def test_container_switch_names_the_allow_of_the_graph_it_holds():
    body = f"holder = torch.nn.ModuleList([quantized])\n{SWALLOWED}holder.eval()\n"
    (d,) = ql203_findings(body, tail="    return quantized\n")
    assert d.message.startswith("`holder` holds the graph from `convert_pt2e` (line 15): `.eval()` switches it too")
    assert f"at line 18 {_WHY}" in d.message and "(its AttributeError is swallowed at line 19)" in d.message
    assert d.help.startswith("Import `allow_exported_model_train_eval` from `torchao.quantization.pt2e`")


def test_container_handed_to_a_switching_helper_names_the_allow():
    body = f"holder = torch.nn.Sequential(quantized)\n{SWALLOWED}evaluate(holder, data)\n"
    (d,) = ql203_findings(body, tail="    return quantized\n")
    assert d.message.startswith("`holder` holds the graph from `convert_pt2e` (line 15) and this call runs")
    assert f"at line 18 {_WHY}" in d.message


def test_container_of_another_graph_keeps_the_plain_message():
    body = f"holder = torch.nn.ModuleList([prepared])\n{SWALLOWED}holder.eval()\n"
    (d,) = ql203_findings(body, tail="    return quantized\n")
    assert d.message.startswith("`holder` holds the graph from `prepare_pt2e`") and "looked up in" not in d.message
    assert d.help.startswith("`Module.eval()` switches every submodule")


def test_switch_of_what_may_be_the_graph_names_the_allow_on_that_path():
    body = f"""\
        if data:
            quantized = convert_pt2e(prepared)
            try:
                {OLD_ALLOW}
            except AttributeError:
                pass
        else:
            quantized = model
        quantized.eval()
        """
    (d,) = ql203_findings(body, tail="    return quantized\n")
    assert d.message.startswith("`quantized` may be the graph from `convert_pt2e` (line 17): on that path")
    assert f"at line 19 {_WHY}" in d.message and "(its AttributeError is swallowed at line 20)" in d.message
    assert d.help.startswith("Import `allow_exported_model_train_eval` from `torchao.quantization.pt2e`")


def test_switch_of_what_may_be_a_graph_nothing_allowed_keeps_the_plain_message():
    # The allow is written for the graph made before the branch, not for the one switched.
    body = f"""\
        try:
            {OLD_ALLOW}
        except AttributeError:
            pass
        if data:
            quantized = convert_pt2e(prepared)
        else:
            quantized = model
        quantized.eval()
        """
    (d,) = ql203_findings(body, tail="    return quantized\n")
    assert d.message.startswith("`quantized` may be the graph from `convert_pt2e` (line 21)")
    assert "looked up in" not in d.message and d.help.startswith("On the paths that make it an exported graph")


RELAY = """\
def relay(model, quantizer, data, evaluate):
    return experiment(model, quantizer, data, evaluate)


def main(model, quantizer, data):
    return relay("""


def _relayed(allow: str) -> str:
    return CALLBACK.format(allow=allow).replace("def main(model, quantizer, data):\n    return experiment(", RELAY)


def test_relaying_helper_keeps_the_allow_of_the_graph_its_helper_made():
    allow = textwrap.indent(SWALLOWED, "    ")
    (d,) = [d for d in lint(_relayed(allow), select=("QL203",)) if d.code == "QL203"]
    assert d.range.start.row == 24 and d.message.startswith("`relay` calls `to_eval` with the graph")
    assert f"at line 13 {_WHY}" in d.message and "(its AttributeError is swallowed at line 14)" in d.message


def test_relaying_helper_of_a_graph_nothing_allowed_keeps_the_plain_message():
    (d,) = [d for d in lint(_relayed(""), select=("QL203",)) if d.code == "QL203"]
    assert d.message.startswith("`relay` calls `to_eval` with the graph") and "looked up in" not in d.message


RELAY_MADE = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def to_eval(model):
    model.eval()


def apply(evaluate, graph):
    return evaluate(graph)


def relay(model, quantizer, data, evaluate):
    graph = torch.export.export(model, (data[0],)).module()
    quantized = convert_pt2e(prepare_pt2e(graph, quantizer))
{allow}    return apply(evaluate, quantized)


def main(model, quantizer, data):
    return relay(model, quantizer, data, to_eval)
"""


def test_graph_made_and_handed_on_with_the_callback_names_its_allow():
    allow = textwrap.indent(SWALLOWED, "    ")
    (d,) = [d for d in lint(RELAY_MADE.format(allow=allow), select=("QL203",)) if d.code == "QL203"]
    assert d.range.start.row == 24 and f"at line 17 {_WHY}" in d.message
    assert "(its AttributeError is swallowed at line 18)" in d.message


def test_graph_made_and_handed_on_with_nothing_allowed_keeps_the_plain_message():
    (d,) = [d for d in lint(RELAY_MADE.format(allow=""), select=("QL203",)) if d.code == "QL203"]
    assert d.message.startswith("`relay` calls `to_eval` with the graph") and "looked up in" not in d.message
