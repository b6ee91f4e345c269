"""QL102: packets the project inserts and then consumes itself, keyed on the packet."""

from __future__ import annotations

import pytest

from qlint.rules import op_spellings, packet_consumers, packet_scan
from tests.conftest import lint, mapped_repository, write_package

ADD = """\
import torch


def insert_zeros(gm, node):
    with gm.graph.inserting_after(node):
        zeros = gm.graph.create_node(op="call_function", target=torch.ops.aten.zeros_like, args=(node,))
    return zeros


class AddPass:
    def __call__(self, gm):
        for node in gm.graph.nodes:
            insert_zeros(gm, node)
        return gm
"""

REMOVE = """\
from functools import partial

import torch

from pkg.add import insert_zeros


def is_op_node(node, target_op):
    return node.op == "call_function" and node.target == target_op


_is_zeros_like = partial(is_op_node, target_op=torch.ops.aten.zeros_like)


class RemovePass:
    def __call__(self, gm):
        for node in list(gm.graph.nodes):
            if _is_zeros_like(node):
                node.replace_all_uses_with(node.args[0])
                gm.graph.erase_node(node)
        return gm
"""

PIPELINE = """\
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e

from pkg.add import AddPass
from pkg.remove import RemovePass


def quantize(model, quantizer, x):
    m = prepare_qat_pt2e(export(model, (x,)).module(), quantizer)
    m = AddPass()(m)
    {between}
    m = RemovePass()(m)
    return convert_pt2e(m)
"""

TABLE = """\
import torch

CONVERTERS = {}


def converter(op):
    def register(fn):
        CONVERTERS[op] = fn
        return fn

    return register


@converter(torch.ops.aten.zeros_like)
@converter(torch.ops.aten.zeros_like.default)
def convert_zeros_like(node, args):
    return args
"""


def _ql102(tmp_path, **modules):
    pkg = write_package(tmp_path, "pkg", **modules)
    add = pkg / "add.py"
    return [d for d in lint(add.read_text(), path=str(add), select=("QL102",))]


def test_a_paired_pass_that_erases_the_packet_nodes_keeps_the_insertion_quiet(tmp_path):
    assert _ql102(tmp_path, add=ADD, remove=REMOVE, pipeline=PIPELINE.format(between="pass")) == []


def test_a_table_that_registers_the_packet_beside_its_overload_keeps_the_insertion_quiet(tmp_path):
    assert _ql102(tmp_path, add=ADD, table=TABLE) == []


@pytest.mark.parametrize(
    "modules",
    [
        # nobody in the project consumes the packet: overload-keyed matchers elsewhere miss it
        {},
        # the table registers only the overload
        {"table": TABLE.replace("@converter(torch.ops.aten.zeros_like)\n", "")},
        # the consumer also matches the op by its overload alone, and misses the packet nodes
        {
            "remove": REMOVE + "\n\ndef count(gm):\n    return [n for n in gm.graph.nodes if n.target == "
            "torch.ops.aten.zeros_like.default]\n"
        },
        # the graph is exported again between the insertion and the packet-keyed consumer
        {"remove": REMOVE, "pipeline": PIPELINE.format(between="m = export(m, (x,)).module()")},
        # a packet-keyed matcher in a module unrelated to the insertion (torch's constant folding
        # lists the packet its observers insert; the graphs still go to overload-keyed users)
        {
            "fold": "import torch\n\n\ndef skip(n):\n    return n.target in (torch.ops.aten.zeros_like, "
            "torch.ops.aten.add.Tensor)\n\n\ndef fold(gm):\n    for n in list(gm.graph.nodes):\n"
            "        if not skip(n):\n            gm.graph.erase_node(n)\n"
        },
        # a packet-keyed comparison in the inserting module itself, which erases nothing: the
        # graph leaves it holding the packet
        {
            "add": ADD
            + "\n\ndef has(gm):\n    return any(n.target == torch.ops.aten.zeros_like for n in gm.graph.nodes)\n"
        },
    ],
)
def test_packets_that_may_meet_overload_keyed_code_stay_loud(tmp_path, modules):
    found = _ql102(tmp_path, **{"add": ADD, **modules})
    assert [d.code for d in found] == ["QL102"]
    assert "torch.ops.aten.zeros_like" in found[0].message


def test_the_inserting_module_that_erases_its_own_packet_nodes_is_quiet(tmp_path):
    own = ADD + (
        "\n\ndef remove_zeros(gm):\n    for n in list(gm.graph.nodes):\n"
        "        if n.target == torch.ops.aten.zeros_like:\n            n.replace_all_uses_with(n.args[0])\n"
        "            gm.graph.erase_node(n)\n"
    )
    assert _ql102(tmp_path, add=own) == []


_NAMED_REMOVE = """

def remove_zeros(gm):
{bind}    for n in list(gm.graph.nodes):
        if n.target in ZEROS_OPS:
            n.replace_all_uses_with(n.args[0])
            gm.graph.erase_node(n)
"""
_BOTH = "[torch.ops.aten.zeros_like, torch.ops.aten.zeros_like.default]"


@pytest.mark.parametrize(
    "own",
    [
        # the list a later pass of the module compares with holds both forms: bound in that pass
        ADD + _NAMED_REMOVE.format(bind=f"    ZEROS_OPS = {_BOTH}\n"),
        # ... or once at module level
        ADD.replace("import torch\n", f"import torch\n\nZEROS_OPS = {_BOTH}\n", 1) + _NAMED_REMOVE.format(bind=""),
    ],
)
def test_a_named_list_of_both_forms_in_the_inserting_module_consumes_the_packet(tmp_path, own):
    assert _ql102(tmp_path, add=own) == []


@pytest.mark.parametrize(
    "own",
    [
        # the named list holds the overload only: the packet nodes slip past it
        ADD + _NAMED_REMOVE.format(bind="    ZEROS_OPS = (torch.ops.aten.zeros_like.default,)\n"),
        # bound twice, once to the overload alone: which list is compared is not known
        ADD
        + _NAMED_REMOVE.format(
            bind=f"    ZEROS_OPS = {_BOTH}\n    if strict:\n        ZEROS_OPS = [torch.ops.aten.zeros_like.default]\n"
        ),
        # a local binding that is no literal hides the module-level list of both forms
        ADD.replace("import torch\n", f"import torch\n\nZEROS_OPS = {_BOTH}\n", 1)
        + _NAMED_REMOVE.format(bind="    ZEROS_OPS = overloads_of(torch.ops.aten.zeros_like)\n"),
    ],
)
def test_a_named_list_that_may_miss_the_packet_keeps_the_insertion_loud(tmp_path, own):
    assert [d.code for d in _ql102(tmp_path, add=own)] == ["QL102"]


def test_a_package_mapped_onto_the_repository_root_finds_the_paired_pass(tmp_path):
    # ExecuTorch: `executorch = "src/executorch"` with `src/executorch/backends -> ../../backends`,
    # and `backends/nxp/aten_passes` has no `__init__.py`: the project is the repository, found
    # from the module's installed name (the import root joined with that name is no directory).
    passes = mapped_repository(tmp_path)
    (passes / "add.py").write_text(ADD)
    (passes / "remove.py").write_text(
        REMOVE.replace("from pkg.add import", "from executorch.backends.nxp.aten_passes.fusion.add import")
    )
    add = passes / "add.py"
    assert lint(add.read_text(), path=str(add), select=("QL102",)) == []
    (passes / "remove.py").unlink()
    assert [d.code for d in lint(add.read_text(), path=str(add), select=("QL102",))] == ["QL102"]


def test_modules_naming_the_inserting_one_are_searched_only_when_a_consumer_is_found(tmp_path, monkeypatch):
    # The search for what the inserting module defines (a re-export between insertion and
    # consumer) costs most of the project read: an insertion nobody consumes never needs it.
    def refuse(self, text):
        raise AssertionError("names searched without a consumer")

    monkeypatch.setattr(op_spellings.AnyName, "search", refuse)
    pipeline = PIPELINE.format(between="pass").replace("from pkg.remove import RemovePass\n", "")
    found = _ql102(tmp_path, add=ADD, pipeline=pipeline.replace("m = RemovePass()(m)", ""))
    assert [d.code for d in found] == ["QL102"]
    monkeypatch.undo()
    # With a consumer the search runs, and still finds the re-export before it.
    loud = {"remove": REMOVE, "pipeline": PIPELINE.format(between="m = export(m, (x,)).module()")}
    (tmp_path / "again").mkdir()
    assert [d.code for d in _ql102(tmp_path / "again", add=ADD, **loud)] == ["QL102"]


def test_consumer_modules_are_kept_while_one_file_is_checked_and_dropped_after(tmp_path):
    pkg = write_package(tmp_path, "pkg", add=ADD, remove=REMOVE, pipeline=PIPELINE.format(between="pass"))
    add = pkg / "add.py"
    assert lint(add.read_text(), path=str(add), select=("QL102",)) == []
    remove = str(pkg / "remove.py")
    assert packet_scan._PARSED[remove][1] is not None
    # Checked again (an editor, at each keystroke): the parse kept is the one reused.
    kept = packet_scan._PARSED[remove][1]
    assert lint(add.read_text(), path=str(add), select=("QL102",)) == []
    assert packet_scan._PARSED[remove][1] is kept
    # Another file whose check reads consumers: the first file's are dropped, and its next
    # check parses them again, with the same answer.
    (tmp_path / "other").mkdir()
    other = write_package(tmp_path / "other", "pkg", add=ADD)
    assert [d.code for d in lint(ADD, path=str(other / "add.py"), select=("QL102",))] == ["QL102"]
    assert remove not in packet_scan._PARSED
    assert lint(add.read_text(), path=str(add), select=("QL102",)) == []
    assert packet_scan._PARSED[remove][1] is not kept


def test_each_packet_of_one_statement_is_judged_by_its_own_sites(tmp_path):
    # One function keys on both packets: the sites read for the first op asked serve the
    # second too, which is also matched by its overload alone and stays loud.
    both = (
        "import torch\n\n\nclass Passes:\n"
        "    def insert(self, gm, node):\n"
        "        gm.graph.create_node(op='call_function', target=torch.ops.aten.zeros_like, args=(node,))\n"
        "        gm.graph.create_node(op='call_function', target=torch.ops.aten.ones_like, args=(node,))\n\n"
        "    def remove(self, gm):\n"
        "        for n in list(gm.graph.nodes):\n"
        "            if n.target in (torch.ops.aten.zeros_like, torch.ops.aten.ones_like):\n"
        "                n.replace_all_uses_with(n.args[0])\n"
        "                gm.graph.erase_node(n)\n"
        "            if n.target == torch.ops.aten.ones_like.default:\n"
        "                pass\n"
    )
    found = _ql102(tmp_path, add=both)
    assert [d.code for d in found] == ["QL102"]
    assert "ones_like" in found[0].message and "zeros_like" not in found[0].message


def test_packet_spellings_count_whole_words_without_an_overload_after():
    from qlint.analysis.names.op_refs import OpRef
    from qlint.rules.packet_consumers import packet_spellings

    ref = OpRef("mylib", "scale", None)
    text = (
        "torch.ops.mylib.scale\n"  # counted: `.` before the namespace
        "ops.mylib . scale(x)\n"  # counted: spaces around the dot
        "xmylib.scale\n"  # another word
        "torch.ops.mylib.scale.default\n"  # an overload
        "mylib.scaled\n"  # another op
        "mylib.scale"  # counted: at the end of the text
    )
    assert packet_spellings(ref, text) == 3
    assert packet_spellings(ref, "émylib.scale _mylib.scale 1mylib.scale") == 0


def test_a_module_that_did_not_spell_the_packet_is_read_again_once_it_changes(tmp_path):
    # What a module did not match is remembered with its content: new content, new search.
    pkg = write_package(tmp_path, "pkg", add=ADD, remove="import torch\n", pipeline=PIPELINE.format(between="pass"))
    add = pkg / "add.py"
    assert [d.code for d in lint(add.read_text(), path=str(add), select=("QL102",))] == ["QL102"]
    (pkg / "remove.py").write_text(REMOVE)
    assert lint(add.read_text(), path=str(add), select=("QL102",)) == []
    (pkg / "remove.py").write_text("import torch\n\n\n")
    assert [d.code for d in lint(add.read_text(), path=str(add), select=("QL102",))] == ["QL102"]


def test_a_file_checked_once_leaves_no_consumer_module_behind(tmp_path):
    # A command-line run checks each file once: the consumer modules parsed for it (whole
    # trees) go when its check ends, not when a later check happens to read consumers.
    from qlint.engine import checked_once

    pkg = write_package(tmp_path, "pkg", add=ADD, remove=REMOVE, pipeline=PIPELINE.format(between="pass"))
    add = str(pkg / "add.py")
    assert lint((pkg / "add.py").read_text(), path=add, select=("QL102",)) == []
    assert packet_scan._PARSED
    checked_once(str(tmp_path / "another.py"))  # another file's end leaves them
    assert packet_scan._PARSED
    checked_once(add)
    assert not packet_scan._PARSED


def test_site_nodes_are_found_in_ast_walk_order_wherever_they_sit():
    # The sites' walk skips attribute chains hanging from a name: a comparison or a
    # `partial` inside a call's arguments, a lambda or a comprehension is still found, in
    # the order `ast.walk` meets them.
    import ast

    from qlint.rules.packet_sites import _find_site_nodes

    code = """\
class Pass:
    def run(self, gm):
        hits = [n for n in gm.graph.nodes if n.target == aten.add]
        keep = filter(lambda n: aten.mul == n.target, gm.graph.nodes)
        pick(functools.partial(is_op, target_op=aten.sub)).apply(x.y.z)
        return hits, keep
"""
    statement = ast.parse(code).body[0]
    # The statement itself is None there (kept on its own node, it would make a cycle).
    found = [(kind, (node or statement).lineno) for node, kind in _find_site_nodes(statement)]
    assert _find_site_nodes(statement)[0][0] is None
    assert found == [("decorated", 1), ("decorated", 2), ("compare", 3), ("compare", 4), ("partial", 5)]


# -- an op the project defines itself, keyed on its packet everywhere (Samsung TICO) --------

OWN_OPS = """\
from torch.library import custom_op, register_fake


@custom_op("board::shape", mutates_args=())
def shape(x):
    return x.new_tensor(x.shape)


@register_fake("board::shape")
def _(x):
    return x.new_empty(x.dim())
"""

OWN_ADD = """\
import torch


class ToShape:
    def __call__(self, gm):
        for node in gm.graph.nodes:
            if node.target == torch.ops.aten.sym_size.int:
                with gm.graph.inserting_after(node):
                    gm.graph.call_function(torch.ops.board.shape, (node.args[0],))
        return gm
"""

# The serializer's visitor, registered under the packet by a decorator that reads `target`.
OWN_VISITOR = """\
import torch

VISITORS = {}


def register(cls):
    for t in cls.target:
        VISITORS[t] = cls
    return cls


@register
class ShapeVisitor:
    target = [torch.ops.board.shape]


def serialize(gm):
    return [VISITORS[n.target] for n in gm.graph.nodes if n.op == "call_function"]
"""

OWN_PIPELINE = """\
from torch.export import export

from pkg.add import ToShape
from pkg.visitor import serialize


def convert(model, x):
    ep = export(model, (x,))
    gm = ToShape()(ep.graph_module)
    {between}
    return serialize(gm)
"""


def _own(tmp_path, **modules):
    base = {"ops": OWN_OPS, "visitor": OWN_VISITOR, "pipeline": OWN_PIPELINE.format(between="pass")}
    base.update(modules)
    pkg = write_package(tmp_path, "pkg", add=OWN_ADD, **base)
    add = pkg / "add.py"
    return [d.code for d in lint(add.read_text(), path=str(add), select=("QL102",))]


def test_an_op_the_project_defines_and_keys_on_its_packet_is_quiet_when_inserted_as_it(tmp_path):
    assert _own(tmp_path) == []


@pytest.mark.parametrize(
    "modules",
    [
        # the project does not define the op: someone else's code may key on `.default`
        {"ops": "import torch\n"},
        # a visitor keyed on the overload: it misses the packet nodes
        {"visitor": OWN_VISITOR.replace("torch.ops.board.shape]", "torch.ops.board.shape.default]")},
        # the inserting module names an overload of the op too
        {"add": OWN_ADD + "\n\nSHAPE = torch.ops.board.shape.default\n"},
        # nothing but the insertion spells the packet: no consumer keyed on it is known
        {"visitor": "VISITORS = {}\n", "pipeline": "pass\n"},
        # the graph is exported again between the insertion and the visitors
        {"pipeline": OWN_PIPELINE.format(between="gm = export(gm, (x,)).module()")},
    ],
)
def test_an_own_op_that_may_meet_overload_keyed_code_stays_loud(tmp_path, modules):
    if "add" in modules:
        pkg = write_package(
            tmp_path, "pkg", ops=OWN_OPS, visitor=OWN_VISITOR, pipeline=OWN_PIPELINE.format(between="pass"), **modules
        )
        add = pkg / "add.py"
        assert [d.code for d in lint(add.read_text(), path=str(add), select=("QL102",))] == ["QL102"]
        return
    assert _own(tmp_path, **modules) == ["QL102"]


def test_the_project_is_read_for_an_own_op_only_when_its_packet_has_a_consumer(tmp_path, monkeypatch):
    # torch's observer.py inserts `pt2e_quant` packets that no module of torch defines or keys
    # on: reading every module spelling the op's name at each check cost ~0.4 s.
    asked, scanned = [], []
    defined, modules = packet_consumers._defined_elsewhere, packet_consumers.project_modules
    monkeypatch.setattr(packet_consumers, "_defined_elsewhere", lambda c, r: asked.append(r) or defined(c, r))
    # Asked by the checks of an own op and by the consumer scan they share.
    for module in (packet_consumers, packet_scan):
        monkeypatch.setattr(module, "project_modules", lambda c, n: scanned.append(n) or modules(c, n))
    (tmp_path / "a").mkdir()
    assert _own(tmp_path / "a", visitor="VISITORS = {}\n", pipeline="pass\n") == ["QL102"]
    assert asked == []  # no module but the inserting one spells the packet: no consumer
    (tmp_path / "b").mkdir()
    scanned.clear()
    assert _own(tmp_path / "b", ops="import torch\n") == ["QL102"]
    # a consumer, but no module defines the op: the modules naming it are not read one by one
    # (the consumer scan asks for them once, kept for the check)
    assert asked and scanned.count(("shape",)) == 1


_EXPORT_PASS_ADD = OWN_ADD.replace("class ToShape:", "class ToShape(ExportPass):").replace(
    "import torch\n", "import torch\nfrom executorch.exir.pass_base import ExportPass\n", 1
)
_LOWERING = """\
from torch.export import ExportedProgram

from pkg.add import ToShape


def lower(edge_program: ExportedProgram):
    ToShape()(edge_program.graph_module)
    return edge_program
"""


@pytest.mark.parametrize("lowering,expected", [(None, []), (_LOWERING, ["QL102"])], ids=["graph-module", "exported"])
def test_an_own_op_inserted_by_a_pass_also_run_on_an_exported_program_stays_loud(tmp_path, lowering, expected):
    # The program's verifier rejects the packet, whatever the project's own visitors key on.
    modules = {"ops": OWN_OPS, "visitor": OWN_VISITOR, "pipeline": OWN_PIPELINE.format(between="pass")}
    if lowering is not None:
        modules["lowering"] = lowering
    pkg = write_package(tmp_path, "pkg", add=_EXPORT_PASS_ADD, **modules)
    add = pkg / "add.py"
    found = lint(add.read_text(), path=str(add), select=("QL102",))
    assert [d.code for d in found] == expected
    assert all("runs this pass on an exported program" in d.message and "`ToShape`" in d.help for d in found)
