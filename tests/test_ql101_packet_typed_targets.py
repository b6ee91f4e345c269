"""QL101 on comparisons that run only where the node target is known to be a packet.

Under `isinstance(node.target, torch._ops.OpOverloadPacket)` the target is a packet, so a
packet is the right thing to compare it with (sdpython's FX-to-ONNX interpreter names
`sym_size` nodes of symbolically traced graphs that way). Any other shape of test, class or
expression leaves the comparison a matcher that misses the overloads graphs carry.
"""

from tests.conftest import lint

HEAD = """
    import torch
    from torch._ops import OpOverload, OpOverloadPacket
"""


def rows(body: str) -> list[int]:
    return [d.range.start.row for d in lint(HEAD + body, select=("QL101",))]


# -- quiet: the comparison runs only where the target is a packet ------------------------


def test_comparison_in_the_body_of_an_isinstance_packet_test_is_quiet():
    src = """
    def aten_name(node):
        if isinstance(node.target, torch._ops.OpOverloadPacket):
            if node.target != torch.ops.aten.sym_size:
                raise RuntimeError(node)
            return "sym_size"
        return node.target.name()
    """
    assert rows(src) == []


def test_later_operand_of_an_and_is_quiet():
    src = """
    def is_size(node):
        return isinstance(node.target, OpOverloadPacket) and node.target == torch.ops.aten.sym_size
    """
    assert rows(src) == []


def test_membership_under_the_test_is_quiet():
    src = """
    def is_size(node):
        if node.op == "call_function" and isinstance(node.target, OpOverloadPacket):
            return node.target in (torch.ops.aten.sym_size, torch.ops.aten.sym_numel)
        return False
    """
    assert rows(src) == []


def test_else_of_a_negated_test_is_quiet():
    src = """
    def is_size(node):
        if not isinstance(node.target, OpOverloadPacket):
            return False
        else:
            return node.target == torch.ops.aten.sym_size
    """
    assert rows(src) == []


def test_after_an_early_exit_unless_packet_is_quiet():
    src = """
    def sizes(gm):
        found = []
        for node in gm.graph.nodes:
            if node.op != "call_function" or not isinstance(node.target, OpOverloadPacket):
                continue
            if node.target == torch.ops.aten.sym_size:
                found.append(node)
        return found
    """
    assert rows(src) == []


def test_a_local_bound_to_the_target_is_quiet():
    src = """
    def aten_name(node):
        target = node.target
        if isinstance(target, OpOverloadPacket) and target == torch.ops.aten.sym_size:
            return "sym_size"
        return None
    """
    assert rows(src) == []


# -- loud: the test proves nothing about the compared target -----------------------------


def test_isinstance_overload_test_stays_loud():
    src = """
    def is_size(node):
        if isinstance(node.target, OpOverload):
            return node.target == torch.ops.aten.sym_size
        return False
    """
    assert rows(src) == [7]


def test_tuple_with_overload_stays_loud():
    src = """
    def is_size(node):
        if isinstance(node.target, (OpOverload, OpOverloadPacket)):
            return node.target == torch.ops.aten.sym_size
        return False
    """
    assert rows(src) == [7]


def test_test_of_another_node_stays_loud():
    src = """
    def is_size(node, user):
        if isinstance(user.target, OpOverloadPacket):
            return node.target == torch.ops.aten.sym_size
        return False
    """
    assert rows(src) == [7]


def test_else_branch_of_the_test_stays_loud():
    src = """
    def is_size(node):
        if isinstance(node.target, OpOverloadPacket):
            return False
        else:
            return node.target == torch.ops.aten.sym_size
    """
    assert rows(src) == [9]


def test_or_with_the_test_stays_loud():
    src = """
    def is_size(node):
        return isinstance(node.target, OpOverloadPacket) or node.target == torch.ops.aten.sym_size
    """
    assert rows(src) == [6]


def test_branch_of_an_or_with_the_test_stays_loud():
    src = """
    def is_size(node):
        if isinstance(node.target, OpOverloadPacket) or node.op == "call_method":
            return node.target == torch.ops.aten.sym_size
        return False
    """
    assert rows(src) == [7]


def test_code_after_the_guarded_branch_stays_loud():
    src = """
    def is_size(node):
        if isinstance(node.target, OpOverloadPacket):
            pass
        return node.target == torch.ops.aten.sym_size
    """
    assert rows(src) == [8]


def test_target_rebound_after_the_test_stays_loud():
    src = """
    def is_size(node, graph):
        if isinstance(node.target, OpOverloadPacket):
            node = graph.find(node.name)
            return node.target == torch.ops.aten.sym_size
        return False
    """
    assert rows(src) == [8]


def test_early_exit_on_a_packet_stays_loud():
    src = """
    def sizes(gm):
        for node in gm.graph.nodes:
            if isinstance(node.target, OpOverloadPacket):
                continue
            if node.target == torch.ops.aten.sym_size:
                yield node
    """
    assert rows(src) == [9]


def test_lambda_under_the_test_stays_loud():
    src = """
    def make_check(node):
        if isinstance(node.target, OpOverloadPacket):
            return lambda node: node.target == torch.ops.aten.sym_size  # its own parameter
        return None
    """
    assert rows(src) == [7]


def test_a_class_of_another_name_stays_loud():
    src = """
    class OpOverloadPacketLike:
        pass

    def is_size(node):
        if isinstance(node.target, OpOverloadPacketLike):
            return node.target == torch.ops.aten.sym_size
        return False
    """
    assert rows(src) == [10]
