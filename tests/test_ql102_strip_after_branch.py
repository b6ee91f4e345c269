"""QL102 and a pass called in an arm of an `if` (or in a `with`) whose caller strips the graph
after the block (SHARK's importer: `transform_fx(g, quantized=True)` in the quantized arm,
its own strip loop after the `else`, then `transform_fx(g)` for f16 on the stripped graph).
Loud look-alikes: a pass keyed on the op's overload between the call and the strip (in the
arm or after it), the strip in one arm only, the call in a loop, a `try` or a `with` handed
the graph, an arm that leaves first, a call after the strip by a pass that spells an
overload, and a call of another library in between."""

from __future__ import annotations

from tests.test_ql102_stripped_later import BLIND, KEYED, PASS, ROW, _lower, _rows

OVERLOAD = PASS.replace(
    "        gm.graph.call_function(", "        kind = torch.ops.aten.add.Tensor\n        gm.graph.call_function("
)


def _quiet(tmp_path, body: str, text: str = PASS) -> bool:
    return _rows(tmp_path, text + _lower(body)) == []


def _loud(tmp_path, body: str, text: str = PASS, row: int = ROW) -> bool:
    return _rows(tmp_path, text + _lower(body)) == [row]


def _contrast(tmp_path, right: str, wrong: str, text: str = PASS) -> None:
    """`right` (the strip after the block) is quiet, and `wrong`, its look-alike, loud."""
    (tmp_path / "right").mkdir()
    (tmp_path / "wrong").mkdir()
    assert _quiet(tmp_path / "right", right, text)
    assert _loud(tmp_path / "wrong", wrong, text)


# -- quiet: the strip after the block covers the call in it -------------------------------------


def test_strip_after_the_if_covers_the_call_in_its_arm(tmp_path):
    body = (
        "if module.training:\n    add_seed(gm)\n    gm.recompile()\nelse:\n    drop_outputs(gm)\nstrip_overloads(gm)\n"
    )
    assert _quiet(tmp_path, body, PASS + BLIND)


def test_strip_after_the_if_covers_the_call_in_its_else(tmp_path):
    assert _quiet(tmp_path, "if module.training:\n    pass\nelse:\n    add_seed(gm)\nstrip_overloads(gm)\n")


def test_strip_after_an_elif_chain_covers_the_call_in_it(tmp_path):
    body = "if module.training:\n    pass\nelif module.half:\n    add_seed(gm)\ngm.graph.lint()\nstrip_overloads(gm)\n"
    assert _quiet(tmp_path, body)


def test_strip_after_a_with_covers_the_call_in_it(tmp_path):
    assert _quiet(tmp_path, "with torch.no_grad():\n    add_seed(gm)\nstrip_overloads(gm)\nreturn gm\n")


def test_call_in_the_arm_and_another_after_the_strip_is_quiet(tmp_path):
    # SHARK's shape: the second call runs on the graph already stripped to packets.
    body = (
        "if module.training:\n    add_seed(gm)\nstrip_overloads(gm)\nif HALF:\n    gm = gm.half()\n    add_seed(gm)\n"
    )
    assert _quiet(tmp_path, body)


def test_own_namesake_in_another_module_is_quiet(tmp_path):
    other = "def add_seed(gm):\n    return gm\n\n\ndef run(gm):\n    add_seed(gm)\n"
    text = PASS + _lower("if module.training:\n    add_seed(gm)\nstrip_overloads(gm)\n")
    assert _rows(tmp_path, text, {"training.py": other}) == []


# -- loud: the node may meet a matcher keyed on the overload, or no strip -----------------------

ARM = "if module.training:\n    add_seed(gm)\n"


def test_pass_keyed_on_the_overload_in_the_arm_is_loud(tmp_path):
    right = "if module.training:\n    add_seed(gm)\n    drop_outputs(gm)\nstrip_overloads(gm)\n"
    wrong = "if module.training:\n    add_seed(gm)\n    undo_seed(gm)\nstrip_overloads(gm)\n"
    _contrast(tmp_path, right, wrong, PASS + BLIND + KEYED)


def test_pass_keyed_on_the_overload_after_the_block_is_loud(tmp_path):
    right = ARM + "drop_outputs(gm)\nstrip_overloads(gm)\n"
    _contrast(tmp_path, right, ARM + "undo_seed(gm)\nstrip_overloads(gm)\n", PASS + BLIND + KEYED)


def test_strip_in_one_arm_only_is_loud(tmp_path):
    _contrast(tmp_path, ARM + "strip_overloads(gm)\n", ARM + "else:\n    strip_overloads(gm)\n")
    (tmp_path / "other").mkdir()
    body = ARM + "    strip_overloads(gm)\nelse:\n    add_seed(gm)\n"
    assert _loud(tmp_path / "other", body)


def test_call_in_a_loop_before_the_strip_is_loud(tmp_path):
    # The next round runs the pass on the graph holding the packet, before the strip.
    right = "with torch.no_grad():\n    add_seed(gm)\nstrip_overloads(gm)\n"
    _contrast(tmp_path, right, "for _ in range(2):\n    add_seed(gm)\nstrip_overloads(gm)\n")


def test_call_in_a_try_before_the_strip_is_loud(tmp_path):
    wrong = "try:\n    add_seed(gm)\nexcept RuntimeError:\n    pass\nstrip_overloads(gm)\n"
    _contrast(tmp_path, ARM + "strip_overloads(gm)\n", wrong)


def test_call_in_a_with_handed_the_graph_is_loud(tmp_path):
    right = "with torch.no_grad():\n    add_seed(gm)\nstrip_overloads(gm)\n"
    _contrast(tmp_path, right, "with tracing(gm):\n    add_seed(gm)\nstrip_overloads(gm)\n")


def test_arm_that_leaves_before_the_strip_is_loud(tmp_path):
    wrong = ARM + "    return gm\nstrip_overloads(gm)\n"
    _contrast(tmp_path, ARM + "    gm.recompile()\nstrip_overloads(gm)\n", wrong)


def test_call_after_the_strip_of_a_pass_spelling_an_overload_is_loud(tmp_path):
    # On the stripped graph the pass sets an overload the packets then sit beside; called only
    # before the strip, the same pass is quiet.
    body = ARM + "strip_overloads(gm)\nadd_seed(gm)\n"
    assert _loud(tmp_path, body, OVERLOAD, ROW + 1)
    (tmp_path / "before").mkdir()
    assert _quiet(tmp_path / "before", ARM + "strip_overloads(gm)\n", OVERLOAD)


def test_another_library_handed_the_graph_in_between_is_loud(tmp_path):
    # What it keys on cannot be read (SHARK's quantized arm calls brevitas's rewrite here).
    right = ARM + "    gm.graph.lint()\nstrip_overloads(gm)\n"
    wrong = ARM + "    from lib import rewrite\n\n    rewrite(gm, src=A)\nstrip_overloads(gm)\n"
    _contrast(tmp_path, right, wrong)
