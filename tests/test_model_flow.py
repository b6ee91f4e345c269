"""The model flow helper on its own: origins, modes per path, sinks, helpers, callers."""

from __future__ import annotations

import ast
import os
import textwrap

from qlint.analysis.flow.model_flow import (
    CONSTRUCTED,
    CONVERTED,
    EXPORTED,
    PARAM,
    PARAM_PART,
    PREPARED,
    PREPARED_QAT,
    PRETRAINED,
    caller_facts,
    module_flows,
)
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.project import ProjectIndex
from qlint.optable import load_op_table
from qlint.rules.base import FileContext
from qlint.source import LineIndex
from tests.conftest import write_package

HEAD = """\
import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e
"""


def flows(src: str, path: str = "snippet.py", head: str = HEAD):
    text = head + textwrap.dedent(src)
    path = os.path.abspath(path)
    ctx = FileContext(
        path=path,
        text=text,
        tree=ast.parse(text),
        lines=LineIndex(text),
        optable=load_op_table(),
        project=ProjectIndex(),
        module=module_name_for(path),
    )
    return module_flows(ctx)


def captures(src: str, **kw):
    return [c for f in flows(src, **kw) for c in f.captures]


def only_capture(src: str, **kw):
    found = captures(src, **kw)
    assert len(found) == 1, found
    return found[0]


def states(cap, flow=None) -> set[str]:
    return {f.state for f in (cap.modes_for(flow) if flow else cap.modes)}


def switches(src: str, **kw):
    return [s for f in flows(src, **kw) for s in f.switches]


# -- capture APIs and their aliases --------------------------------------------------------
def test_capture_reaches_prepare_through_names_and_module():
    cap = only_capture(
        """
        def f(q, x):
            model = torch.nn.Linear(2, 2)
            ep = export(model, (x,))
            gm = ep.module()
            prepared = prepare_pt2e(gm, q)
        """
    )
    assert cap.api == "torch.export.export"
    assert [s.flow for s in cap.sinks] == ["ptq"]
    assert states(cap) == {"train"}
    assert {o.kind for o in cap.origins} == {CONSTRUCTED}


def test_aliases_count():
    src = """
    import torch.export as te
    from torch.ao.quantization.quantize_pt2e import prepare_pt2e as prep

    def f(m, q, x):
        prep(te.export(m, (x,)).module(), q)

    def g(m, q, x):
        from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e as pq
        from torch import export as ex

        pq(ex.export_for_training(m, (x,)).module(), q)
    """
    found = captures(src, head="")
    assert [(c.api, [s.flow for s in c.sinks]) for c in found] == [
        ("torch.export.export", ["ptq"]),
        ("torch.export.export_for_training", ["qat"]),
    ]


def test_local_module_aliases_resolve():
    cap = only_capture(
        """
        def f(m, q, x):
            ex = torch.export
            prep = prepare_pt2e
            prep(ex.export(m, (x,)).module(), q)
        """
    )
    assert [s.flow for s in cap.sinks] == ["ptq"]


def test_a_capture_that_reaches_no_prepare_has_no_sink():
    cap = only_capture(
        """
        def f(m, x):
            return export(m, (x,))
        """
    )
    assert not cap.sinks


def test_unrelated_export_functions_are_not_captures():
    src = """
    from mylib import export

    def f(m, q, x):
        prepare_pt2e(export(m, (x,)), q)
    """
    assert captures(src, head=HEAD.replace("from torch.export import export\n", "")) == []


# -- modes on every path -------------------------------------------------------------------
def test_eval_earlier_on_every_path_dominates():
    cap = only_capture(
        """
        def f(model, q, x):
            model.eval()
            with torch.no_grad():
                gm = export(model, (x,)).module()
            prepare_pt2e(gm, q)
        """
    )
    assert states(cap) == {"eval"}
    assert "torch.no_grad" in cap.contexts


def test_eval_on_one_branch_does_not_dominate():
    cap = only_capture(
        """
        def f(model, q, x, fast):
            if fast:
                model.eval()
            prepare_pt2e(export(model, (x,)).module(), q)
        """
    )
    assert states(cap) == {"eval", "unset"}
    (unset,) = [f for f in cap.modes if f.state == "unset"]
    assert unset.origin.kind == PARAM and unset.origin.name == "model"


def test_eval_on_both_branches_dominates():
    cap = only_capture(
        """
        def f(model, q, x, fast):
            if fast:
                model.eval()
            else:
                model.train(False)
            prepare_pt2e(export(model, (x,)).module(), q)
        """
    )
    assert states(cap) == {"eval"}


def test_a_branch_that_returns_does_not_reach_the_capture():
    cap = only_capture(
        """
        def f(model, q, x, skip):
            if skip:
                model.train()
                return None
            model.eval()
            prepare_pt2e(export(model, (x,)).module(), q)
        """
    )
    assert states(cap) == {"eval"}


def test_train_after_eval_wins_and_inline_modes_count():
    later = only_capture(
        """
        def f(model, q, x):
            model.eval()
            model.train()
            prepare_pt2e(export(model, (x,)).module(), q)
        """
    )
    inline = only_capture(
        """
        def f(q, x):
            prepare_pt2e(export(torch.nn.Linear(2, 2).eval(), (x,)).module(), q)
        """
    )
    assert states(later) == {"train"}
    assert states(inline) == {"eval"}


def test_reassignment_and_aliases_follow_the_object():
    cap = only_capture(
        """
        def f(q, x):
            model = torch.nn.Linear(2, 2)
            other = model
            other.eval()
            model = model.to("cpu")
            prepare_pt2e(export(model, (x,)).module(), q)
        """
    )
    assert states(cap) == {"eval"}


def test_rebinding_a_name_drops_the_old_mode():
    cap = only_capture(
        """
        def f(q, x):
            model = torch.nn.Linear(2, 2).eval()
            model = torch.nn.Linear(2, 2)
            prepare_pt2e(export(model, (x,)).module(), q)
        """
    )
    assert states(cap) == {"train"}


def test_from_pretrained_is_eval_and_ifexp_arms_are_separate():
    pretrained = only_capture(
        """
        from transformers import AutoModel

        def f(q, x):
            model = AutoModel.from_pretrained("m")
            prepare_pt2e(export(model, (x,)).module(), q)
        """
    )
    assert states(pretrained) == {"eval"}
    assert {o.kind for o in pretrained.origins} == {PRETRAINED}
    chosen = only_capture(
        """
        def f(module, q, x, is_qat):
            module = module.train() if is_qat else module.eval()
            gm = export(module, (x,)).module()
            (prepare_qat_pt2e(gm, q) if is_qat else prepare_pt2e(gm, q))
        """
    )
    assert states(chosen, "ptq") == {"eval"}
    assert states(chosen, "qat") == {"train"}


def test_self_attribute_within_a_method():
    cap = only_capture(
        """
        class Runner:
            def run(self, q, x):
                self.model = torch.nn.Linear(2, 2)
                self.model.eval()
                prepare_pt2e(export(self.model, (x,)).module(), q)
        """
    )
    assert states(cap) == {"eval"}


def test_self_attribute_set_elsewhere_is_known_only_when_always_built_fresh():
    built = only_capture(
        """
        class T:
            def setUp(self):
                self.model = torch.nn.Linear(2, 2)

            def test(self, q, x):
                prepare_pt2e(export(self.model, (x,)).module(), q)
        """
    )
    stored = only_capture(
        """
        class T:
            def __init__(self, model):
                self.model = model

            def run(self, q, x):
                prepare_pt2e(export(self.model, (x,)).module(), q)
        """
    )
    assert states(built) == {"train"}
    # Stored from `__init__` (issue 14 item 2): as the caller passed it, like a parameter.
    assert states(stored) == {"unset"}
    assert {f.origin.kind for f in stored.modes} == {"stored constructor parameter"}


def test_loop_item_of_a_parameter_is_part_of_it():
    cap = only_capture(
        """
        def run(artifact, q, x):
            for name, model in artifact.data.items():
                prepare_pt2e(export(model, (x,)).module(), q)
        """
    )
    assert {f.origin.kind for f in cap.modes} == {PARAM_PART}


def test_a_loop_carries_modes_into_the_next_iteration():
    cap = only_capture(
        """
        def f(q, x, batches):
            model = torch.nn.Linear(2, 2)
            model.eval()
            for batch in batches:
                prepare_pt2e(export(model, (x,)).module(), q)
                model.train()
        """
    )
    assert states(cap) == {"eval", "train"}


# -- branch guards -------------------------------------------------------------------------
def test_a_train_under_is_qat_does_not_reach_the_ptq_branch():
    cap = only_capture(
        """
        def run(model, q, x, recipe):
            if recipe.is_qat:
                model.train()
            gm = export(model, (x,)).module()
            if recipe.is_qat:
                prepare_qat_pt2e(gm, q)
            else:
                prepare_pt2e(gm, q)
        """
    )
    assert states(cap) == {"train", "unset"}
    assert states(cap, "ptq") == {"unset"}
    assert states(cap, "qat") == {"train"}


# -- helpers of the same module ------------------------------------------------------------
def test_helper_returning_the_captured_module_makes_the_call_a_capture():
    found = captures(
        """
        def capture(model, x):
            return export(model, (x,)).module()

        def quantize(q, x):
            model = torch.nn.Linear(2, 2)
            gm = capture(model, x)
            return prepare_pt2e(gm, q)
        """
    )
    helper, caller = found
    assert not helper.sinks  # the helper alone never prepares
    assert [s.flow for s in caller.sinks] == ["ptq"]
    assert isinstance(caller.call.func, ast.Name) and caller.call.func.id == "capture"
    assert ast.unparse(caller.model) == "model"
    assert states(caller) == {"train"}
    assert caller.inner[1] is helper.call


def test_helper_that_prepares_its_parameter_is_a_sink_and_helpers_set_modes():
    cap = only_capture(
        """
        def calibrate(gm, q):
            prepared = prepare_pt2e(gm, q)
            return convert_pt2e(prepared)

        def to_eval(m):
            m.eval()

        def main(q, x):
            model = torch.nn.Linear(2, 2)
            to_eval(model)
            calibrate(export(model, (x,)).module(), q)
        """
    )
    assert [s.flow for s in cap.sinks] == ["ptq"]
    assert states(cap) == {"eval"}


def test_methods_and_nested_helpers_are_followed():
    found = captures(
        """
        class Stage:
            @staticmethod
            def _apply(gm, passes):
                for p in passes:
                    gm = p(gm)
                return gm

            def run(self, model, q, x):
                def grab(m):
                    return export(m, (x,)).module()

                gm = self._apply(grab(model.eval()), [])
                prepare_pt2e(gm, q)
        """
    )
    reached = [c for c in found if c.sinks]
    assert len(reached) == 1 and states(reached[0]) == {"eval"}


def test_helper_in_another_module_of_the_project(tmp_path):
    pkg = write_package(
        tmp_path,
        "pkg",
        capture="import torch\n\ndef grab(model, x):\n    return torch.export.export(model, (x,)).module()\n",
    )
    cap = only_capture(
        """
        from pkg.capture import grab

        def main(q, x):
            prepare_pt2e(grab(torch.nn.Linear(2, 2), x), q)
        """,
        path=str(pkg / "main.py"),
    )
    assert [s.flow for s in cap.sinks] == ["ptq"]
    assert cap.inner[0] == str(pkg / "capture.py")
    assert states(cap) == {"train"}


def test_caller_facts_follow_parameters_to_the_calls_of_this_module():
    found = flows(
        """
        def quantize(m, q, x):
            prepare_pt2e(export(m, (x,)).module(), q)

        def wrapper(model, q, x):
            quantize(model, q, x)

        def main(q, x):
            wrapper(torch.nn.Linear(2, 2).eval(), q, x)
            wrapper(torch.nn.Linear(2, 2), q, x)
        """
    )
    cap = next(c for f in flows_with_captures(found) for c in f.captures)
    (fact,) = cap.modes
    assert fact.origin.kind == PARAM
    passed = caller_facts(found, fact.origin.node, fact.origin.index)
    assert sorted((f.state, call.lineno) for call, f in passed) == [("eval", 12), ("train", 13)]


def flows_with_captures(found):
    return [f for f in found if f.captures]


# -- ExecuTorch recipes --------------------------------------------------------------------
ET_HEAD = """\
from executorch.export import ExportRecipe, ExportSession, QuantizationRecipe, export
"""


def test_executorch_export_with_a_ptq_recipe_is_a_capture():
    cap = only_capture(
        """
        def main(model, quantizer, inputs):
            recipe = ExportRecipe(quantization_recipe=QuantizationRecipe(quantizers=[quantizer]))
            return export(model, inputs, export_recipe=recipe)
        """,
        head=ET_HEAD,
    )
    assert cap.api == "executorch.export.export"
    assert [s.flow for s in cap.sinks] == ["ptq"]


def test_executorch_session_captures_when_it_exports():
    src = """
    def main(model, quantizer, inputs, run):
        quant = QuantizationRecipe(quantizers=[quantizer])
        recipe = ExportRecipe(quantization_recipe=quant)
        session = ExportSession(model=model, example_inputs=inputs, export_recipe=recipe)
        if run:
            session.export()
    """
    cap = only_capture(src, head=ET_HEAD)
    assert cap.api == "executorch.export.ExportSession"
    assert cap.call.func.attr == "export" and cap.fixable
    assert captures(src.replace("session.export()", "pass"), head=ET_HEAD) == []


def test_qat_recipes_no_quantizers_and_other_recipe_classes_are_not_ptq_captures():
    qat = """
    def main(model, quantizer, inputs, train):
        quant = QuantizationRecipe(quantizers=[quantizer], is_qat=True, train_fn=train)
        recipe = ExportRecipe(quantization_recipe=quant)
        return export(model, inputs, export_recipe=recipe)
    """
    ao_only = """
    def main(model, config, inputs):
        recipe = ExportRecipe(quantization_recipe=QuantizationRecipe(ao_quantization_configs=[config]))
        return export(model, inputs, export_recipe=recipe)
    """
    unrelated = """
    from executorch.export import ExportRecipe, export
    from torchao.prototype.quantization.module_swap import QuantizationRecipe

    def main(model, quantizer, inputs):
        recipe = ExportRecipe(quantization_recipe=QuantizationRecipe(quantizers=[quantizer]))
        return export(model, inputs, export_recipe=recipe)
    """
    assert captures(qat, head=ET_HEAD) == []
    assert captures(ao_only, head=ET_HEAD) == []
    assert captures(unrelated, head="") == []


# -- mode switches ------------------------------------------------------------------------
def test_switch_origins_for_each_graph_producer():
    found = switches(
        """
        def main(model, q, x):
            model.eval()
            gm = export(model, (x,)).module()
            gm.eval()
            p = prepare_pt2e(gm, q)
            p.train()
            qat = prepare_qat_pt2e(gm, q)
            qat.train(False)
            c = convert_pt2e(p)
            c.eval()
        """
    )
    assert [(ast.unparse(s.call), s.mode, {o.kind for o in s.origins}) for s in found] == [
        ("model.eval()", "eval", {PARAM}),
        ("gm.eval()", "eval", {EXPORTED}),
        ("p.train()", "train", {PREPARED}),
        ("qat.train(False)", "eval", {PREPARED_QAT}),
        ("c.eval()", "eval", {CONVERTED}),
    ]


def test_allowed_or_expected_switches_are_marked():
    found = switches(
        """
        from torchao.quantization.pt2e import allow_exported_model_train_eval

        def test(self, model, x):
            gm = export(model, (x,)).module()
            with self.assertRaises(NotImplementedError):
                gm.eval()
            try:
                gm.train()
            except NotImplementedError:
                pass
            allow_exported_model_train_eval(gm)
            gm.eval()
        """
    )
    assert [s.patched for s in found] == [True, True, True]


def test_facts_from_a_helper_in_another_file_point_at_the_call(tmp_path):
    pkg = write_package(
        tmp_path,
        "pkg2",
        load="import torch\n\n\ndef load():\n    m = torch.nn.Linear(2, 2)\n    m.eval()  # line 6\n    return m\n",
    )
    cap = only_capture(
        """
        from pkg2.load import load

        def main(q, x):
            model = load()
            prepare_pt2e(export(model, (x,)).module(), q)
        """,
        path=str(pkg / "main.py"),
    )
    (fact,) = cap.modes
    assert fact.state == "eval" and fact.node.lineno == 8 and fact.node.func.id == "load"
