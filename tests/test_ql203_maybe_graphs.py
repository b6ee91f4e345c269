"""QL203 on a value that is an exported graph on some paths only (`maybe_graphs`): a helper
returning the prepared graph under a flag and the eager model otherwise (d2go's
`setup_qat_model` under `QUANTIZATION.PT2E`), or a graph made under a branch in the body."""

from __future__ import annotations

import textwrap

from qlint.diagnostic import Applicability
from tests.conftest import lint

HEAD = """\
import torch
from torchao.quantization.pt2e import allow_exported_model_train_eval, move_exported_model_to_eval
from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e


def prepare(model, use_pt2e, quantizer, x):
    if use_pt2e:
        return prepare_qat_pt2e(torch.export.export(model, (x,)).module(), quantizer)
    return model

"""  # the graph is made on line 8; the snippets start on line 11


def found(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL203",))


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in found(src)]


def test_a_switch_after_a_helper_that_may_return_the_graph_is_reported():
    diagnostics = found(
        """
        def build(model, use_pt2e, quantizer, x, eval_only):
            model = prepare(model, use_pt2e, quantizer, x)
            if eval_only:
                model.eval()
        """
    )
    assert [d.range.start.row for d in diagnostics] == [15]
    (d,) = diagnostics
    assert "may be the graph from `prepare_qat_pt2e` (line 8)" in d.message
    # The eager path needs the switch: no rewrite is right for both.
    assert d.fix.applicability is Applicability.DISPLAY_ONLY


def test_a_call_whose_argument_sets_the_flag_is_reported():
    assert rows(
        """
        def build(model, quantizer, x):
            m = prepare(model, True, quantizer, x)
            m.train()
        def build2(model, quantizer, x, flag):
            m = prepare(model, use_pt2e=flag, quantizer=quantizer, x=x)
            if flag:
                m.eval()
        """
    ) == [14, 18]


def test_a_graph_made_under_a_branch_of_the_body_is_reported():
    assert rows(
        """
        def build(model, use_pt2e, quantizer, x):
            if use_pt2e:
                model = prepare_qat_pt2e(torch.export.export(model, (x,)).module(), quantizer)
            model.eval()
        def pick(model, x, exported):
            m = torch.export.export(model, (x,)).module() if exported else model
            m.eval()
        """
    ) == [15, 18]


def test_a_switch_under_the_flag_that_chose_the_eager_model_is_quiet():
    assert (
        rows(
            """
        def build(model, use_pt2e, quantizer, x):
            model = prepare(model, use_pt2e, quantizer, x)
            if not use_pt2e:
                model.eval()
        def build2(model, use_pt2e, quantizer, x):
            if use_pt2e:
                model = prepare_qat_pt2e(torch.export.export(model, (x,)).module(), quantizer)
            if use_pt2e:
                move_exported_model_to_eval(model)
            else:
                model.eval()
        """
        )
        == []
    )


def test_a_call_that_rules_the_graph_out_is_quiet():
    assert (
        rows(
            """
        def build(model, quantizer, x):
            model = prepare(model, False, quantizer, x)
            model.eval()
        """
        )
        == []
    )


def test_a_type_test_on_the_value_is_quiet():
    assert (
        rows(
            """
        def build(model, use_pt2e, quantizer, x):
            model = prepare(model, use_pt2e, quantizer, x)
            if isinstance(model, torch.fx.GraphModule):
                move_exported_model_to_eval(model)
            else:
                model.eval()
        def build2(model, use_pt2e, quantizer, x):
            model = prepare(model, use_pt2e, quantizer, x)
            if not hasattr(model, "graph"):
                model.eval()
        """
        )
        == []
    )


def test_a_switch_that_expects_the_error_is_quiet():
    assert (
        rows(
            """
        def build(model, use_pt2e, quantizer, x):
            model = prepare(model, use_pt2e, quantizer, x)
            try:
                model.eval()
            except NotImplementedError:
                pass
        def build2(model, use_pt2e, quantizer, x):
            model = prepare(model, use_pt2e, quantizer, x)
            try:
                model.eval()
            except Exception:
                move_exported_model_to_eval(model)
        """
        )
        == []
    )


def test_a_graph_allowed_on_its_branch_is_quiet():
    assert (
        rows(
            """
        def prepare_allowed(model, use_pt2e, quantizer, x):
            if use_pt2e:
                gm = prepare_qat_pt2e(torch.export.export(model, (x,)).module(), quantizer)
                allow_exported_model_train_eval(gm)
                return gm
            return model
        def build(model, use_pt2e, quantizer, x):
            model = prepare_allowed(model, use_pt2e, quantizer, x)
            model.eval()
        def build2(model, use_pt2e, quantizer, x):
            if use_pt2e:
                model = prepare_qat_pt2e(torch.export.export(model, (x,)).module(), quantizer)
                allow_exported_model_train_eval(model)
            model.eval()
        """
        )
        == []
    )


def test_a_helper_handing_the_value_back_keeps_its_paths():
    assert rows(
        """
        def keep(m):
            m.tag = 1
            return m
        def build(model, use_pt2e, quantizer, x):
            model = keep(prepare(model, use_pt2e, quantizer, x))
            model.eval()
        """
    ) == [17]


def test_a_switch_under_a_denied_conjunction_of_the_graphs_conditions_is_quiet():
    # IPEX's trainer: `_wrap_model` compiles a converted graph under `self.args.inductor` and
    # `self.args.int8`; the evaluation loop switches under `not (inductor and int8)`.
    assert (
        rows(
            """
        class Trainer:
            def wrap(self, model, training=True):
                if self.args.inductor and not training:
                    if self.args.int8:
                        model = prepare_qat_pt2e(torch.export.export(model, ()).module(), None)
                return model
            def evaluate(self):
                model = self.wrap(self.model, training=False)
                if not (self.args.inductor and self.args.int8):
                    model.eval()
                if self.args.inductor and self.args.int8:
                    pass
                else:
                    model.train()
                if not (self.args.inductor and (self.args.int8 or self.args.fp8)):
                    model.eval()
        """
        )
        == []
    )
    # Denying only one of them leaves the graph's path.
    assert rows(
        """
        class Trainer:
            def wrap(self, model, training=True):
                if self.args.inductor and not training:
                    if self.args.int8:
                        model = prepare_qat_pt2e(torch.export.export(model, ()).module(), None)
                return model
            def evaluate(self):
                model = self.wrap(self.model, training=False)
                if not (self.args.inductor and self.args.bf16):
                    model.eval()
        """
    ) == [21]


def test_a_switch_under_the_other_identity_test_of_the_flag_is_quiet():
    # birder's `load_model`: the graph is loaded under `pt2 is True`, the switch runs under
    # `pt2 is False`; the same for `== True`/`== False` and for a bare test of the flag.
    assert (
        rows(
            """
        def load(path, model, pt2, inference):
            if pt2 is True:
                net = torch.export.load(path).module()
            else:
                net = model
            if inference is True:
                if pt2 is False:
                    net.eval()
            if not pt2:
                net.train()
        def load2(path, model, pt2):
            net = torch.export.load(path).module() if pt2 == True else model
            if pt2 == False:
                net.eval()
        def load3(path, model, pt2):
            net = model
            if pt2:
                net = torch.export.load(path).module()
            if pt2 is False:
                net.eval()
        """
        )
        == []
    )


def test_identity_tests_that_leave_the_graph_possible_are_reported():
    # `pt2 is not False` holds for the graph's `pt2 is True`; the arm where `pt2 is True` fails
    # may still have a true `pt2` (`1`); a test of another flag says nothing of `pt2`.
    assert rows(
        """
        def load(path, model, pt2):
            if pt2 is True:
                net = torch.export.load(path).module()
            else:
                net = model
            if pt2 is not False:
                net.eval()
        def load2(path, model, pt2):
            if pt2 is True:
                net = model
            else:
                net = torch.export.load(path).module()
            if pt2:
                net.eval()
        def load3(path, model, pt2, pts):
            if pt2 is True:
                net = torch.export.load(path).module()
            else:
                net = model
            if pts is False:
                net.eval()
        """
    ) == [18, 25, 32]


def test_type_tests_are_read_per_receiver_from_one_walk_of_the_body():
    import ast

    from qlint.analysis.flow.maybe_graphs import tests_type

    func = ast.parse(
        textwrap.dedent(
            """
            def helper(model, other, x, y, z, w):
                if isinstance(model, torch.fx.GraphModule):
                    pass
                if hasattr(other, "get_rand_input") or isinstance(y, int) or hasattr(w):
                    pass
                if type(x) is int or hasattr(z, "graph") or isinstance(self.model, GraphModule):
                    pass
            """
        )
    ).body[0]
    asked = {
        "model": True, "other": False, "x": True, "y": False, "z": True, "w": False, "self.model": True, "v": False,
    }  # fmt: skip
    # Asked twice each, in turn: the first answer is kept on the body, for every receiver.
    for _ in range(2):
        for text, expected in asked.items():
            assert tests_type(func, ast.parse(text, mode="eval").body) is expected, text
