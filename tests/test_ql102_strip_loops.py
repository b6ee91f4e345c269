"""QL102 and graphs the project strips to packets with its own loop (brevitas's MLIR export,
after SHARK's: a pass nested in the lowering function inserts `aten.zero_` into the make_fx
graph, which the same function then strips with a copy of torch's `strip_overloads` before
scripting it). The strip is recognised by what the loop does: over the graph's nodes, every
overload target set to its packet. Loud look-alikes: a loop that strips only some nodes, or
does more, a strip of another graph or of a copy, a pass keyed on the op (or handed it) before
the strip, a strip that never runs, a nested pass called elsewhere without one."""

from __future__ import annotations

import textwrap

from tests.test_ql102_stripped_later import _rows  # a one-package project, QL102 only

# The insertion's row (1-based) in every module below.
ROW = 14

LOWER = """
    import copy

    import torch


    def lower(module):
        gm = copy.deepcopy(module)

        def add_zero(fx_g):
            for node in list(fx_g.graph.nodes):
                if node.target == torch.ops.aten.empty.memory_format:
                    with fx_g.graph.inserting_after(node):
                        new = fx_g.graph.call_function(torch.ops.aten.zero_, (node,))
                    node.replace_all_uses_with(new)
                    new.args = (node,)

{defs}
        add_zero(gm)
{body}
        return torch.jit.script(gm)
"""

STRIP = """
        def strip_overloads(g):
            \"\"\"Every overload target becomes its packet.\"\"\"
            for node in g.graph.nodes:
                if isinstance(node.target, torch._ops.OpOverload):
                    node.target = node.target.overloadpacket
            g.recompile()
"""

# A second pass of the function, reading only the output node (`_remove_nones`).
BLIND = """
        def drop_nones(g):
            for node in g.graph.nodes:
                if node.op == "output":
                    node.args = (tuple(a for a in node.args[0] if a is not None),)
            g.graph.eliminate_dead_code()
            return len(node.args)
"""

KEYED = """
        def undo_zero(g):
            for node in g.graph.nodes:
                if node.target == torch.ops.aten.zero_.default:
                    node.replace_all_uses_with(node.args[0])
"""


def _module(body: str, defs: str = STRIP) -> str:
    text = LOWER.replace("{defs}", textwrap.indent(textwrap.dedent(defs), " " * 8))
    text = text.replace("{body}", textwrap.indent(textwrap.dedent(body), " " * 8))
    assert "call_function(torch.ops.aten.zero_" in textwrap.dedent(text).splitlines()[ROW - 1]
    return text


def _loop(guard: str, graph: str = "gm") -> str:
    return f"for node in {graph}.graph.nodes:\n    if {guard}:\n        node.target = node.target.overloadpacket\n"


# -- quiet: the function strips the graph with its own loop before anything reads it -----------


def test_nested_strip_helper_after_upkeep_and_a_blind_pass_is_quiet(tmp_path):
    body = "gm.recompile()\nn = drop_nones(gm)\ngm.graph.set_codegen(torch.fx.graph.CodeGen())\nprint('lowered')\n"
    body += "strip_overloads(gm)\n"
    assert _rows(tmp_path, _module(body, BLIND + STRIP)) == []


def test_strip_helper_under_another_name_is_quiet(tmp_path):
    defs = STRIP.replace("strip_overloads", "to_packets")
    assert _rows(tmp_path, _module("to_packets(gm)\n", defs)) == []


def test_strip_loop_written_in_the_function_is_quiet(tmp_path):
    assert _rows(tmp_path, _module(_loop("isinstance(node.target, torch._ops.OpOverload)"), "")) == []


def test_strip_loop_guards_that_let_every_overload_through_are_quiet(tmp_path):
    guards = (
        'hasattr(node.target, "overloadpacket")',
        'node.op == "call_function" and isinstance(node.target, (torch._ops.OpOverload,))',
    )
    for number, guard in enumerate(guards):
        (tmp_path / str(number)).mkdir()
        assert _rows(tmp_path / str(number), _module(_loop(guard), "")) == [], guard
    nested = "for node in gm.graph.nodes:\n    if node.op == 'call_function':\n"
    nested += "        if isinstance(node.target, OpOverload):\n"
    nested += "            node.target = node.target.overloadpacket\n"
    assert _rows(tmp_path, _module(nested, "")) == []


def test_strip_helper_of_another_module_is_quiet(tmp_path):
    util = "import torch\n\n\ndef normalise(gm):\n" + textwrap.indent(
        _loop("isinstance(node.target, torch._ops.OpOverload)"), "    "
    )
    text = "from pkg.util import normalise\n" + textwrap.dedent(_module("normalise(gm)\n", ""))
    assert _rows(tmp_path, text, {"util.py": util}) == []
    # ... and loud (one row lower: the import) when that module's function strips only one op.
    (tmp_path / "partial").mkdir()
    util = util.replace("isinstance(node.target, torch._ops.OpOverload)", "node.target == torch.ops.aten.add.Tensor")
    assert _rows(tmp_path / "partial", text, {"util.py": util}) == [ROW + 1]


def test_blind_pass_of_another_module_before_the_strip_is_quiet(tmp_path):
    util = "def retarget(gm, src, target):\n    for node in gm.graph.nodes:\n        if node.target is src:\n"
    util += "            node.target = target\n    gm.recompile()\n"
    text = "from pkg.util import retarget\n" + textwrap.dedent(
        _module("retarget(gm, src=copy.copy, target=torch.ops.quant.matmul)\nstrip_overloads(gm)\n")
    )
    assert _rows(tmp_path, text, {"util.py": util}) == []


# -- loud: the packet may meet code that reads overloads ----------------------------------------


def test_no_strip_is_loud(tmp_path):
    assert _rows(tmp_path, _module("gm.recompile()\n")) == [ROW]


def test_strip_loop_guarded_by_an_op_is_loud(tmp_path):
    for number, guard in enumerate(("node.target == torch.ops.aten.add.Tensor", "node.target in KNOWN")):
        (tmp_path / str(number)).mkdir()
        assert _rows(tmp_path / str(number), _module(_loop(guard), "")) == [ROW], guard
    packets = _loop("isinstance(node.target, torch._ops.OpOverloadPacket)")
    assert _rows(tmp_path, _module(packets, "")) == [ROW]


def test_strip_loop_that_does_more_is_loud(tmp_path):
    more = _loop("isinstance(node.target, torch._ops.OpOverload)") + "    else:\n        KEEP.append(node)\n"
    assert _rows(tmp_path, _module(more, "")) == [ROW]
    (tmp_path / "two").mkdir()
    twice = _loop("isinstance(node.target, torch._ops.OpOverload)") + "    SEEN.append(node.target)\n"
    assert _rows(tmp_path / "two", _module(twice, "")) == [ROW]


def test_strip_of_a_copy_or_another_graph_is_loud(tmp_path):
    assert _rows(tmp_path, _module("other = copy.deepcopy(gm)\nstrip_overloads(other)\n")) == [ROW]
    (tmp_path / "loop").mkdir()
    other = _loop("isinstance(node.target, torch._ops.OpOverload)", graph="module")
    assert _rows(tmp_path / "loop", _module(other, "")) == [ROW]


def test_pass_keyed_on_the_op_before_the_strip_is_loud(tmp_path):
    assert _rows(tmp_path, _module("undo_zero(gm)\nstrip_overloads(gm)\n", KEYED + STRIP)) == [ROW]


def test_matcher_loop_before_the_strip_is_loud(tmp_path):
    body = (
        "for node in gm.graph.nodes:\n    if node.target == torch.ops.aten.zero_.default:\n        SEEN.append(node)\n"
    )
    assert _rows(tmp_path, _module(body + "strip_overloads(gm)\n")) == [ROW]


def test_blind_pass_handed_the_op_is_loud(tmp_path):
    util = "def retarget(gm, src, target):\n    for node in gm.graph.nodes:\n        if node.target is src:\n"
    util += "            node.target = target\n"
    text = "from pkg.util import retarget\n" + textwrap.dedent(
        _module("retarget(gm, src=torch.ops.aten.zero_.default, target=F)\nstrip_overloads(gm)\n")
    )
    assert _rows(tmp_path, text, {"util.py": util}) == [ROW + 1]


def test_blind_pass_returning_the_graph_is_loud(tmp_path):
    defs = BLIND.replace("return len(node.args)", "return g") + STRIP
    assert _rows(tmp_path, _module("h = drop_nones(gm)\nstrip_overloads(gm)\n", defs)) == [ROW]


def test_strip_that_never_runs_is_loud(tmp_path):
    assert _rows(tmp_path, _module("")) == [ROW]  # defined, never called
    (tmp_path / "branch").mkdir()
    assert _rows(tmp_path / "branch", _module("if False:\n    strip_overloads(gm)\n")) == [ROW]
    (tmp_path / "late").mkdir()
    late = _module("").replace(
        "        return torch.jit.script(gm)\n", "        return gm\n        strip_overloads(gm)\n"
    )
    assert _rows(tmp_path / "late", late) == [ROW]


def test_nested_pass_also_called_without_a_strip_is_loud(tmp_path):
    defs = STRIP + "\n        def again(g):\n            add_zero(g)\n"
    assert _rows(tmp_path, _module("strip_overloads(gm)\n", defs)) == [ROW]


def test_module_pass_then_a_module_strip_helper_is_quiet(tmp_path):
    from tests.test_ql102_stripped_later import PASS
    from tests.test_ql102_stripped_later import ROW as PASS_ROW

    helper = "\n\n    def packets(gm):\n" + textwrap.indent(
        _loop("isinstance(node.target, torch._ops.OpOverload)"), " " * 8
    )
    caller = "\n\n    def lower(gm):\n        add_seed(gm)\n        packets(gm)\n        return torch.jit.script(gm)\n"
    assert _rows(tmp_path, PASS + helper + caller) == []
    (tmp_path / "keyed").mkdir()
    keyed = helper.replace("isinstance(node.target, torch._ops.OpOverload)", "node.target is torch.ops.aten.mul.Tensor")
    assert _rows(tmp_path / "keyed", PASS + keyed + caller) == [PASS_ROW]
