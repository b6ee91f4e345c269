"""QL102 and graphs an object builds node by node on itself: a `torch.fx.Graph` subclass whose
methods insert into `self` (d-Matrix's `DmxGraph.qdq_node`), or an attribute the class only
ever binds to a fresh `Graph()` (torch's old FX quantization demo, whose pattern handlers insert
into `quantizer.quantized_graph`). Loud look-alikes: the attribute also bound to an exported
graph, to a parameter, by `setattr` or by another module; a `GraphModule` subclass whose graph
comes from tracing; a pass object handed a captured graph; a torch attribute name read through
an object of unknown class; a class with bases; a module that spells an overload of the op."""

from __future__ import annotations

from tests.test_ql102_stripped_later import _rows  # the same one-module project, QL102 only

PACKET = "torch.ops.aten.relu"

SUBCLASS = f"""
import torch
from torch.fx import Graph


class CompilerGraph(Graph):
    def relu_node(self, node):
        return self.call_function({PACKET}, (node,))

    def relu_spec(self, node):
        return self.create_node("call_function", {PACKET}, (node,))
"""

HANDLERS = f"""
import torch
from torch.fx import Graph, GraphModule


class Relu:
    def quantize(self, quantizer, node, load_arg):
        return quantizer.quantized_graph.create_node("call_function", {PACKET}, load_arg(node.args))


class Quantizer:
    def __init__(self, mod):
        self.root = mod
        self.graph = mod.graph

    def quantize(self):
        self.quantized_graph = Graph()
        for node in self.graph.nodes:
            self.quantized_graph.node_copy(node, lambda n: n)
        return GraphModule(self.root, self.quantized_graph)
"""

HOLDER = f"""
import torch
import torch.fx


class Builder:
    def __init__(self):
        self.g = torch.fx.Graph()
{{more}}
    def add(self, x):
        return self.g.call_function({PACKET}, (x,))
"""


# -- quiet: the graph is built by hand on the object -----------------------------------------------


def test_graph_subclass_inserting_into_itself_is_quiet(tmp_path):
    assert _rows(tmp_path, SUBCLASS) == []


def test_subclass_of_the_modules_own_graph_subclass_is_quiet(tmp_path):
    base = "class Base(Graph):\n    pass\n\n\nclass CompilerGraph(Base):"
    text = SUBCLASS.replace("class CompilerGraph(Graph):", base)
    assert _rows(tmp_path, text) == []


def test_handler_inserting_into_a_fresh_graph_attribute_of_its_parameter_is_quiet(tmp_path):
    assert _rows(tmp_path, HANDLERS) == []


def test_attribute_bound_to_a_fresh_graph_in_init_is_quiet(tmp_path):
    assert _rows(tmp_path, HOLDER.format(more="")) == []


def test_attribute_bound_to_a_fresh_graph_of_the_modules_subclass_is_quiet(tmp_path):
    text = HOLDER.format(more="").replace("torch.fx.Graph()", "CompilerGraph()") + SUBCLASS.split("\n", 2)[2]
    assert _rows(tmp_path, text) == []


def test_attribute_bound_to_a_module_around_a_fresh_graph_is_quiet(tmp_path):
    text = f"""
        import torch
        from torch.fx import Graph, GraphModule


        class Builder:
            def __init__(self, root):
                self.gm = GraphModule(root, Graph())

            def add(self, x):
                return self.gm.graph.call_function({PACKET}, (x,))
    """
    assert _rows(tmp_path, text) == []


# -- loud: the graph may be a captured one ---------------------------------------------------------


def test_attribute_also_bound_to_an_exported_graph_is_loud(tmp_path):
    more = "\n    def load(self, m, args):\n        self.g = torch.export.export(m, args).module().graph\n"
    assert _rows(tmp_path, HOLDER.format(more=more)) == [14]


def test_attribute_rebound_from_a_parameter_is_loud(tmp_path):
    more = "\n    def reset(self, g):\n        self.g = g\n"
    assert _rows(tmp_path, HOLDER.format(more=more)) == [14]


def test_attribute_bound_by_setattr_is_loud(tmp_path):
    more = "\n    def reset(self, gm):\n        setattr(self, 'g', gm.graph)\n"
    assert _rows(tmp_path, HOLDER.format(more=more)) == [14]


def test_attribute_bound_by_another_module_is_loud(tmp_path):
    other = "def load(builder, ep):\n    builder.g = ep.graph\n"
    assert _rows(tmp_path, HOLDER.format(more=""), {"loader.py": other}) == [11]


def test_attribute_of_a_class_with_bases_is_loud(tmp_path):
    text = HOLDER.format(more="").replace("class Builder:", "class Builder(PassBase):")
    text = text.replace("import torch.fx\n", "import torch.fx\nfrom passes import PassBase\n")
    assert _rows(tmp_path, text) == [12]


def test_graph_module_subclass_whose_graph_comes_from_tracing_is_loud(tmp_path):
    text = f"""
        import torch
        from torch.fx import GraphModule
        from torch.fx.experimental.proxy_tensor import make_fx


        class Traced(GraphModule):
            def __init__(self, root, *args):
                super().__init__(root, make_fx(root)(*args).graph)

            def add(self, x):
                return self.graph.call_function({PACKET}, (x,))
    """
    assert _rows(tmp_path, text) == [12]


def test_pass_object_handed_a_captured_graph_is_loud(tmp_path):
    text = f"""
        import torch


        class ReluPass:
            def __init__(self, gm):
                self.graph = gm.graph

            def add(self, x):
                return self.graph.call_function({PACKET}, (x,))
    """
    assert _rows(tmp_path, text) == [10]


def test_torch_attribute_name_read_through_a_parameter_is_loud(tmp_path):
    # Some class here binds `self.graph = Graph()`, but `pass_.graph` may be any GraphModule's.
    text = HANDLERS.replace("quantized_graph", "graph").replace("self.graph = mod.graph", "self.mod = mod")
    assert _rows(tmp_path, text) == [8]


def test_attribute_read_through_a_parameter_named_by_another_module_is_loud(tmp_path):
    other = "def report(quantizer):\n    return quantizer.quantized_graph\n"
    assert _rows(tmp_path, HANDLERS, {"report.py": other}) == [8]


def test_module_spelling_an_overload_of_the_op_is_loud(tmp_path):
    text = SUBCLASS + f"\n\ndef is_relu(node):\n    return node.target == {PACKET}.default\n"
    assert _rows(tmp_path, text) == [8, 11]


def test_rebound_receiver_is_loud(tmp_path):
    call = "        return self.call_function"
    text = SUBCLASS.replace(call, "        self = node.graph\n" + call)
    assert _rows(tmp_path, text) == [9]
