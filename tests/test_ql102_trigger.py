"""QL102's text prefilter is exact for an insertion written across rows: the check reads the
attribute wherever its dot and name are split by blanks, line continuations or comments, so
the prefilter must not skip those files."""

from __future__ import annotations

import pytest

from qlint.rules.ql102_packet_insertion import PacketInsertion
from tests.conftest import codes, lint

SPELLINGS = {
    "dot-ends-the-row": "(gm.graph.\n        call_function(torch.ops.torchao.quantize_affine, node.args))",
    "dot-starts-the-row": "(gm.graph\n        .call_function)(torch.ops.torchao.quantize_affine, node.args)",
    "continuation": "gm.graph. \\\n        call_function(torch.ops.torchao.quantize_affine, node.args)",
    "comment-between": "(gm.graph.  # graph\n        call_function)(torch.ops.torchao.quantize_affine, node.args)",
    "create-node-in-brackets": '(gm.graph.create_node)("call_function", torch.ops.torchao.quantize_affine, node.args)',
    "target-store-without-blank": "node.target=torch.ops.torchao.quantize_affine",
}


@pytest.mark.parametrize("call", SPELLINGS.values(), ids=SPELLINGS.keys())
def test_insertion_spelled_across_rows_is_checked(call):
    src = f"""
        import torch

        def rewrite(gm, node):
            new = {call}
        """
    # Each spelling escaped the former triggers (".call_function(", "create_node(", ".target =").
    assert not any(t in src for t in (".call_function(", "create_node(", ".target ="))
    assert PacketInsertion().triggered_by(src)
    assert codes(lint(src, select=("QL102",))) == ["QL102"]


def test_names_that_are_not_the_attribute_leave_the_file_unparsed():
    src = """
        import torch

        def rewrite(gm, node):
            # call_function nodes only. A target == check
            if node.op == "call_function" and node.target in (torch.ops.aten.add.Tensor,):
                target = torch.ops.torchao.quantize_affine
                call_function(target, node.args)
                return create_node
        """
    assert not PacketInsertion().triggered_by(src)
    assert lint(src, select=("QL102",)) == []


def test_comment_full_of_hashes_after_a_dot_is_decided_quickly():
    # A comment is matched one `#` at a time, so a failing search does not try every split.
    src = "x = a.  " + "#" * 5000 + " y\ntarget == 1\n" + "call_function\n"
    assert not PacketInsertion().triggered_by(src)
