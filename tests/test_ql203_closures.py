"""QL203 through a function written in another that switches a name of the enclosing function
(`closure_switches`; voyager-compiler's QA script: `run_eval()` evals the enclosing `model`,
the prepared graph on the `--pt2e` path)."""

from __future__ import annotations

import textwrap

from tests.conftest import lint

HEAD = """\
import torch
from torchao.quantization.pt2e import allow_exported_model_train_eval
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

"""  # the snippets start on line 5


def found(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL203",))


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in found(src)]


def test_a_nested_function_switching_the_enclosing_graph_is_reported_at_its_call():
    diagnostics = found(
        """
        def main(m, x, q):
            model = prepare_pt2e(torch.export.export(m.eval(), (x,)).module(), q)
            def evaluate():
                model.eval()
                return model(x)
            evaluate()
        """
    )
    assert [d.range.start.row for d in diagnostics] == [11]
    (d,) = diagnostics
    assert "`model` comes from `prepare_pt2e` (line 7) and this call runs `.eval()` on it (line 9)" in d.message
    assert len(d.message) <= 160


def test_an_assigned_switch_of_a_maybe_graph_is_reported_and_a_name_bound_inside_is_not_the_enclosing_one():
    assert rows(
        """
        def main(m, x, q, args):
            model = m
            if args.pt2e:
                model = prepare_pt2e(torch.export.export(m.eval(), (x,)).module(), q)
            def run_eval():
                print("evaluating")
                model = torch.nn.Linear(2, 2)
                model.eval()
            def to_train():
                trained = model.train()
                return trained
            if not args.do_train:
                run_eval()
            to_train()
        """
    ) == [19]


def test_conditional_switches_and_other_callers_are_quiet():
    assert (
        rows(
            """
        def main(m, x, q, args):
            model = prepare_pt2e(torch.export.export(m.eval(), (x,)).module(), q)
            def evaluate(flag):
                if flag:
                    model.eval()
            def late():
                return x
                model.eval()
            def own(model):
                model.eval()
            def nested_caller():
                run()
            def run():
                model.eval()
            evaluate(True)
            late()
            own(m)
            nested_caller()
        """
        )
        == []
    )


def test_a_value_bound_after_the_call_or_allowed_before_it_is_quiet():
    assert (
        rows(
            """
        def main(m, x, q):
            model = m
            def evaluate():
                model.eval()
            evaluate()
            model = prepare_pt2e(torch.export.export(m.eval(), (x,)).module(), q)
        def allowed(m, x, q):
            model = prepare_pt2e(torch.export.export(m.eval(), (x,)).module(), q)
            allow_exported_model_train_eval(model)
            def evaluate():
                model.eval()
            evaluate()
        def maybe_under_try(m, x, q, flag):
            model = m
            if flag:
                model = prepare_pt2e(torch.export.export(m.eval(), (x,)).module(), q)
            def evaluate():
                model.eval()
            try:
                evaluate()
            except NotImplementedError:
                pass
        """
        )
        == []
    )
