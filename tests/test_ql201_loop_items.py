"""QL201: a helper whose callers pass loop items of lists and dicts written in the caller
(issue 14, item 7).

`for m in [A().eval(), B()]`, `for name, m, x in cases`, `for i, m in enumerate(models)`
with `models.append(...)`, `for name, m in models.items()`: the item is each model the
container holds, in its mode, so the caller is classified. Callers that pass only eval-mode
models or models with nothing mode-dependent keep the helper quiet (ExecuTorch's Qualcomm
share-qparams tests loop over shape-only modules); one train-mode model with batch norm
among them is the finding, named with the line that builds it.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from qlint.analysis.flow.loop_items import UNREAD, followed_names, split
from tests.conftest import lint
from tests.snippets import PTQ_HELPER_HEAD, PTQ_HELPER_HEAD_CAPTURE_ROW

HEAD = PTQ_HELPER_HEAD
CAPTURE_ROW = PTQ_HELPER_HEAD_CAPTURE_ROW


def ql201(caller: str):
    return lint(HEAD + "\n\n" + textwrap.dedent(caller), select=("QL201",))


QUIET = {
    "inline list": """
        def main(x, q):
            for m in [Net().eval(), Shuffle()]:
                quantize(m, (x,), q)
        """,
    "cases unpacked by position": """
        def main(x, q):
            cases = [
                ("a", Net().eval(), (torch.randn(2, 4),), torch.ops.aten.flip.default),
                ("b", Shuffle(), (x,), torch.ops.aten.flip.default),
            ]
            for name, module, sample, target in cases:
                quantize(module, sample, q)
        """,
    "appended then enumerated": """
        def main(x, q, n):
            models = []
            for i in range(n):
                models.append(Net().eval())
            models.insert(0, Shuffle())
            models.extend([Shuffle()])
            print(len(models), models[0])
            for i, m in enumerate(models):
                quantize(m, (x,), q)
        """,
    "dict values and items": """
        def main(x, q):
            table = {"a": Net().eval(), "b": Shuffle()}
            for m in table.values():
                quantize(m, (x,), q)
            for name, m in table.items():
                quantize(m, (x,), q)
        """,
    "set to eval in the loop body": """
        def main(x, q):
            for m in [Net(), Net()]:
                m.eval()
                quantize(m, (x,), q)
        """,
}


@pytest.mark.parametrize("caller", QUIET.values(), ids=QUIET.keys())
def test_loop_items_in_eval_mode_or_without_mode_dependent_parts_keep_the_helper_quiet(caller):
    assert ql201(caller) == []


LOUD = {
    "inline list": """
        def main(x, q):
            for m in [Net().eval(), Net()]:
                quantize(m, (x,), q)
        """,
    "cases unpacked by position": """
        def main(x, q):
            cases = [("a", Shuffle(), (x,)), ("b", Net(), (x,))]
            for name, module, sample in cases:
                quantize(module, sample, q)
        """,
    "appended then enumerated": """
        def main(x, q, n):
            models = []
            for i in range(n):
                models.append(Net())
            for i, m in enumerate(models):
                quantize(m, (x,), q)
        """,
    "dict items": """
        def main(x, q):
            table = {"a": Net().eval(), "b": Net()}
            for name, m in table.items():
                quantize(m, (x,), q)
        """,
}


@pytest.mark.parametrize("caller", LOUD.values(), ids=LOUD.keys())
def test_a_train_mode_loop_item_with_batch_norm_is_the_finding(caller):
    (d,) = ql201(caller)
    assert d.range.start.row == CAPTURE_ROW
    assert "modules start in train mode" in d.message and "passes it built at line" in d.message


def test_a_list_switched_to_eval_in_an_earlier_loop_is_not_read_as_train():
    # `m.eval()` switches each element in turn: what the list holds afterwards is not what
    # was written into it, so the second loop does not claim the elements are in train mode.
    caller = """
        def main(x, q):
            models = [Net(), Net()]
            for m in models:
                m.eval()
            for m in models:
                quantize(m, (x,), q)
        """
    assert ql201(caller) == []


def test_a_graph_passed_by_a_caller_is_in_the_mode_of_its_capture():
    # ExecuTorch's Arm Cortex-M path re-exports the GraphModule of an eval-mode capture.
    caller = """
        def main(model, x, q):
            gm = torch.export.export(model.eval(), (x,)).module()
            quantize(gm, (x,), q)
        """
    assert ql201(caller) == []


def test_a_caller_passing_a_model_qlint_does_not_read_keeps_the_helper_quiet():
    # What remains of the silence: results of calls it cannot resolve (MediaTek's
    # `load_weights()`), attributes of such results (`bundle.model`), and loop items of them.
    caller = """
        def main(x, q, state, chunk_class):
            from assets import create_bundle

            quantize(create_bundle().model, (x,), q)
            models = []
            for i in range(2):
                models.append(chunk_class(i).load_weights(state))
            for m in models:
                quantize(m, (x,), q)
        """
    assert ql201(caller) == []


def test_a_factory_passed_as_the_model_is_judged_as_if_callers_were_unknown():
    # Not a model made elsewhere: a value the walk read and cannot classify. The helper is
    # judged as if its callers were unknown.
    caller = """
        MAKERS = {"net": Net, "shuffle": Shuffle}

        def main(x, q, name):
            make = MAKERS[name]
            quantize(make, (x,), q)
        """
    (d,) = ql201(caller)
    assert "as parameter `model`, in whatever mode the caller left it" in d.message


# -- the container reading itself ---------------------------------------------------------------
def _followed(src: str) -> frozenset[str]:
    return followed_names(ast.parse(textwrap.dedent(src)).body[0])


def test_containers_changed_out_of_sight_are_not_followed():
    src = """
        def f(n, extra):
            kept = []
            kept.append(1)
            kept.extend([2])
            handed = []
            register(handed)
            rebound = []
            rebound = [3]
            grown = []
            grown += extra
            extended = []
            extended.extend(extra)
            stored = []
            stored[0] = 4
            sliced = []
            sliced[0:1] = extra
            augmented = [1]
            augmented[0] += 1
            in_dict = []
            kwargs = {"models": in_dict}
            for x in kept:
                pass
        """
    followed = _followed(src)
    # `stored[0] = 4` puts one more object in the list, which the walk sees (`indexed_items`).
    assert {"kept", "stored"} <= followed
    assert not followed & {"handed", "rebound", "grown", "extended", "sliced", "augmented", "in_dict"}


def test_targets_unpack_elements_by_position_only_when_every_element_has_the_shape():
    a, b = ast.parse("a, b").body[0].value.elts
    target = ast.Tuple([a, b], ast.Store())
    assert split(target, [(1, 2), (3, 4)]) == [(a, [1, 3]), (b, [2, 4])]
    assert split(target, [(1, 2), UNREAD]) is None
    assert split(target, [(1, 2, 3)]) is None
