"""QL101 and QL102 in the rows of a pass that only the calls made after the caller's strip
reach, the pass's parameter read call by call (SHARK's importer: `transform_fx(g,
quantized=True)` on the traced graph, its own strip loop, then `transform_fx(g)` for f16, the
f16 matchers and insertions past `if quantized: continue`). Loud look-alikes: rows every call
reaches, a call before the strip whose flag lets it through (the other value, the default, a
variable, `*args`/`**kwargs`), a guard that does not leave, a flag the pass rebinds, and a
caller in another module."""

from __future__ import annotations

from pathlib import Path

PASS = """
    import torch


    def transform(gm, quantized=False):
        for node in gm.graph.nodes:
            if node.target == torch.ops.aten.empty:
                node.kwargs = {}
            if quantized:
                continue
            if node.target == torch.ops.aten.var_mean:
                with gm.graph.inserting_before(node):
                    new = gm.graph.call_function(torch.ops.aten._to_copy, (node.args[0],), {})
                node.args = (new,)
"""

# Rows (1-based) in PASS: the matcher every call reaches, and the guarded matcher and insertion.
EVERY, MATCH, INSERT = 7, 11, 13
FIRST = [(EVERY, "QL101")]
LOUD = [(EVERY, "QL101"), (MATCH, "QL101"), (INSERT, "QL102")]
# A call before the strip reaches the guarded matcher on a graph with overloads; the packet it
# may insert is stripped next with every other target (`stripped_later`), so only the matchers
# are reported.
STRIPPED_NEXT = [(EVERY, "QL101"), (MATCH, "QL101")]

SHARK = "transform(gm, quantized=True)\nstrip_overloads(gm)\nif half:\n    gm = gm.half()\n    transform(gm)\n"


def _rows(tmp_path: Path, body: str, extra: dict[str, str] | None = None, text: str = PASS) -> list[tuple[int, str]]:
    """The findings in `text` followed by `test_passes_after_strip.LOWER` (make_fx, its nested strip
    loop, then `body`)."""
    from tests.test_passes_after_strip import _rows as lowered

    return lowered(tmp_path, body, extra, text)


# -- quiet: the guarded rows run only on the stripped graph --------------------------------------


def test_shark_shape_by_keyword_is_quiet_past_the_guard(tmp_path):
    assert _rows(tmp_path, SHARK) == FIRST


def test_shark_shape_positional_is_quiet_past_the_guard(tmp_path):
    assert _rows(tmp_path, "transform(gm, True)\nstrip_overloads(gm)\ntransform(gm, False)\n") == FIRST


def test_default_that_stops_the_call_before_the_strip_is_quiet(tmp_path):
    text = PASS.replace("quantized=False", "quantized=True")
    assert _rows(tmp_path, "transform(gm)\nstrip_overloads(gm)\ntransform(gm, quantized=False)\n", text=text) == FIRST


ELSE = """
    import torch


    def transform(gm, quantized=False):
        for node in gm.graph.nodes:
            if node.target == torch.ops.aten.empty:
                node.kwargs = {}
            if quantized:
                pass
            elif node.target == torch.ops.aten.var_mean and node.op == "call_function":
                with gm.graph.inserting_before(node):
                    new = gm.graph.call_function(torch.ops.aten._to_copy, (node.args[0],), {})
                node.args = (new,)
"""

INSIDE = """
    import torch


    def transform(gm, f16=True):
        for node in gm.graph.nodes:
            if node.target == torch.ops.aten.empty:
                node.kwargs = {}
            if f16 and node.op == "call_function":
                if node.target == torch.ops.aten.var_mean:
                    with gm.graph.inserting_before(node):
                        new = gm.graph.call_function(torch.ops.aten._to_copy, (node.args[0],), {})
                    node.args = (new,)
"""


def test_rows_in_the_else_of_the_flag_are_quiet(tmp_path):
    assert _rows(tmp_path, SHARK, text=ELSE) == FIRST


def test_rows_under_the_flag_and_another_test_are_quiet(tmp_path):
    body = "transform(gm, f16=False)\nstrip_overloads(gm)\nif half:\n    transform(gm)\n"
    assert _rows(tmp_path, body, text=INSIDE) == FIRST


def test_rows_under_the_flag_or_another_test_are_loud(tmp_path):
    text = INSIDE.replace("if f16 and node.op", "if f16 or node.op")
    body = "transform(gm, f16=False)\nstrip_overloads(gm)\nif half:\n    transform(gm)\n"
    assert _rows(tmp_path, body, text=text) == [(EVERY, "QL101"), (MATCH - 1, "QL101")]


def test_return_at_the_top_of_the_pass_is_quiet(tmp_path):
    text = PASS.replace(
        "        for node in gm.graph.nodes:\n",
        "        if quantized or not gm:\n            return\n        for node in gm.graph.nodes:\n",
        1,
    )
    # Two rows more above each matcher: the one every call reaches is now guarded too.
    assert _rows(tmp_path, SHARK, text=text) == []


def test_own_namesake_in_another_module_is_quiet(tmp_path):
    other = "def transform(gm):\n    return gm\n\n\ndef run(gm):\n    transform(gm)\n"
    assert _rows(tmp_path, SHARK, {"training.py": other}) == FIRST


# -- loud: a call may reach the guarded rows on a graph with overloads ----------------------------


def test_no_guard_on_the_call_before_the_strip_is_loud(tmp_path):
    assert _rows(tmp_path, "transform(gm)\nstrip_overloads(gm)\ntransform(gm, quantized=True)\n") == STRIPPED_NEXT


def test_call_before_the_strip_that_passes_the_guard_is_loud(tmp_path):
    body = "transform(gm, quantized=True)\ntransform(gm, quantized=False)\nstrip_overloads(gm)\ntransform(gm)\n"
    assert _rows(tmp_path, body) == LOUD


def test_default_that_lets_the_call_before_the_strip_through_is_loud(tmp_path):
    assert _rows(tmp_path, "transform(gm)\nstrip_overloads(gm)\ntransform(gm)\n") == STRIPPED_NEXT


def test_non_constant_argument_is_loud(tmp_path):
    assert _rows(tmp_path, "transform(gm, quantized=half)\nstrip_overloads(gm)\ntransform(gm)\n") == STRIPPED_NEXT
    (tmp_path / "pos").mkdir()
    assert _rows(tmp_path / "pos", "transform(gm, not half)\nstrip_overloads(gm)\ntransform(gm)\n") == STRIPPED_NEXT


def test_arguments_unpacked_are_loud(tmp_path):
    # The default would stop the call before the strip; `*args`/`**kwargs` may pass anything.
    text = PASS.replace("quantized=False", "quantized=True")
    assert (
        _rows(tmp_path, "transform(gm, *FLAGS)\nstrip_overloads(gm)\ntransform(gm, False)\n", text=text)
        == STRIPPED_NEXT
    )
    (tmp_path / "kw").mkdir()
    body = "transform(gm, **OPTIONS)\nstrip_overloads(gm)\ntransform(gm, False)\n"
    assert _rows(tmp_path / "kw", body, text=text) == STRIPPED_NEXT


def test_guard_that_does_not_leave_is_loud(tmp_path):
    text = PASS.replace("                continue\n", "                node.meta = {}\n")
    assert _rows(tmp_path, SHARK, text=text) == STRIPPED_NEXT


def test_flag_rebound_in_the_pass_is_loud(tmp_path):
    text = PASS.replace(
        "        for node in gm.graph.nodes:\n",
        "        quantized = quantized and SKIP\n        for node in gm.graph.nodes:\n",
        1,
    )
    # One row more above each matcher.
    assert _rows(tmp_path, SHARK, text=text) == [(r + 1, code) for r, code in STRIPPED_NEXT]


def test_pass_that_spells_an_overload_is_loud(tmp_path):
    # The call after the strip sets nodes to an overload the packet matchers then miss.
    text = PASS.replace("node.kwargs = {}", "node.target = torch.ops.aten.var_mean.correction")
    assert _rows(tmp_path, SHARK, text=text) == LOUD


def test_guarded_call_also_made_on_another_graph_is_loud(tmp_path):
    body = "transform(gm, quantized=True)\nstrip_overloads(gm)\ntransform(gm)\ntransform(make_fx(model)(x))\n"
    assert _rows(tmp_path, body) == LOUD


def test_pass_handed_on_is_loud(tmp_path):
    body = SHARK + "PASSES.append(transform)\n"
    assert _rows(tmp_path, body) == LOUD


def test_caller_in_another_module_is_loud(tmp_path):
    other = "from pkg.importer import transform\n\n\ndef run(gm):\n    transform(gm)\n"
    assert _rows(tmp_path, SHARK, {"other.py": other}) == LOUD


def test_namesake_module_that_also_names_the_pass_is_loud(tmp_path):
    own = "def transform(gm):\n    return gm\n\n\n"
    other = "from pkg import importer\n\n\n" + own + "def run(gm):\n    importer.transform(gm)\n"
    assert _rows(tmp_path, SHARK, {"training.py": other}) == LOUD
