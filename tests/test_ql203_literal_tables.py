"""QL203 through a dict or list of functions written in place and subscripted at the call
(`{"a": build_a, "b": build_b}[kind](m, q, x)`, `{"eval": to_eval, "log": log}[kind](gm)`),
a constant key picking one element (`[...][0]`, `{...}["log"]`), and tables changed before the
lookup (`changed_tables`: not followed)."""

from __future__ import annotations

import textwrap

from tests.conftest import lint

HEAD = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def build_graph(model, q, x):
    return prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)


def build_eager(model, q, x):
    return model


def to_eval(m):
    m.eval()


def log(m):
    print(m)


def capture(model, q, x):
    return prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)

"""  # the snippets' first line is 24 (blank), their first `def` line 25


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in lint(HEAD + textwrap.dedent(src), select=("QL203",))]


def test_a_dict_of_builders_written_in_place_and_indexed_by_a_variable():
    assert rows(
        """
        def f(kind, model, q, x):
            gm = {"graph": build_graph, "eager": build_eager}[kind](model, q, x)
            gm.eval()
        """
    ) == [27]


def test_a_dict_of_handlers_written_in_place_receives_the_graph():
    assert rows(
        """
        def f(kind, model, q, x):
            gm = capture(model, q, x)
            {"eval": to_eval, "log": log}[kind](gm)
        """
    ) == [27]


def test_a_constant_key_picks_only_its_value():
    assert rows(
        """
        def picked(model, q, x):
            gm = capture(model, q, x)
            {"eval": to_eval, "log": log}["eval"](gm)


        def other_picked(model, q, x):
            gm = capture(model, q, x)
            {"eval": to_eval, "log": log}["log"](gm)
            [to_eval, log][1](gm)
            [to_eval, log][-1](gm)


        def built(model, q, x):
            a = {"graph": build_graph, "eager": build_eager}["eager"](model, q, x)
            a.eval()
            b = (build_eager, build_graph)[1](model, q, x)
            b.eval()
        """
    ) == [27, 41]


def test_a_constant_key_ignores_the_values_it_does_not_pick():
    # `unknown` is no function qlint follows: with a variable key nothing is judged.
    assert rows(
        """
        def f(kind, model, q, x, unknown):
            gm = capture(model, q, x)
            {"eval": to_eval, "other": unknown}["eval"](gm)
            {"eval": to_eval, "other": unknown}[kind](gm)
        """
    ) == [27]


def test_a_later_duplicate_key_replaces_the_earlier_one():
    assert rows(
        """
        def f(model, q, x):
            gm = capture(model, q, x)
            {"h": to_eval, "h": log}["h"](gm)
            {"h": log, "h": to_eval}["h"](gm)
        """
    ) == [28]


def test_a_local_table_with_a_constant_key():
    assert rows(
        """
        def f(model, q, x):
            gm = capture(model, q, x)
            handlers = {"eval": to_eval, "log": log}
            handlers["log"](gm)
            handlers["eval"](gm)
        """
    ) == [29]


def test_values_that_neither_return_nor_receive_graphs_are_quiet():
    assert (
        rows(
            """
        def f(kind, model, q, x):
            m = {"a": build_eager, "b": build_eager}[kind](model, q, x)
            m.eval()
            gm = capture(model, q, x)
            {"log": log, "print": print}[kind](gm)
            {"eval": to_eval}[kind](model)
        """
        )
        == []
    )


def test_a_table_changed_before_the_lookup_is_not_followed():
    assert (
        rows(
            """
        def stored(kind, model, q, x, other):
            gm = capture(model, q, x)
            handlers = {"eval": to_eval, "log": log}
            handlers["eval"] = other
            handlers[kind](gm)


        def updated(kind, model, q, x, other):
            gm = capture(model, q, x)
            handlers = {"eval": to_eval, "log": log}
            handlers.update(other)
            handlers[kind](gm)


        def deleted(kind, model, q, x):
            gm = capture(model, q, x)
            handlers = {"eval": to_eval, "log": log}
            del handlers["eval"]
            handlers[kind](gm)


        def through_an_alias(kind, model, q, x, other):
            gm = capture(model, q, x)
            handlers = {"eval": to_eval, "log": log}
            h = handlers
            h.clear()
            handlers[kind](gm)


        def rebound(kind, model, q, x, other):
            gm = capture(model, q, x)
            handlers = {"eval": to_eval, "log": log}
            handlers = other
            handlers[kind](gm)


        def grown(kind, model, q, x, other):
            gm = capture(model, q, x)
            handlers = {"eval": to_eval}
            handlers |= other
            handlers[kind](gm)
        """
        )
        == []
    )


def test_a_module_table_changed_by_a_function_is_not_followed():
    assert rows(
        """
        HANDLERS = {"eval": to_eval, "log": log}
        KEPT = {"eval": to_eval, "log": log}


        def register(name, fn):
            HANDLERS[name] = fn


        def f(kind, model, q, x):
            gm = capture(model, q, x)
            HANDLERS[kind](gm)
            KEPT[kind](gm)
        """
    ) == [36]


def test_a_get_called_at_once_and_a_get_with_a_constant_key():
    assert rows(
        """
        def f(kind, model, q, x):
            gm = capture(model, q, x)
            handlers = {"eval": to_eval, "log": log}
            handlers.get(kind)(gm)
            handlers.get("log")(gm)
            picked = handlers.get("log")
            picked(gm)
            chosen = handlers.get("eval")
            chosen(gm)
        """
    ) == [28, 33]
