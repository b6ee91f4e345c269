"""QL102 and QL101 on passes a `torch.compile` backend of the repository runs on the graph Dynamo
hands it (`compile_backends`, through `self_traced_graphs`; issue 14, pytorch-shir's FPGA
backend): the backend selects instructions (a pass of another module, padding operands with
`aten.pad` packets), then its own simplifier folds the pads by the packet, and it runs the
graph itself. The annotating
quantizer beside them keys on `aten.pad.default`, but only ever sees the graphs `prepare_pt2e`
is handed. Loud again when the backend hands the graph to AOT autograd, when anything calls the
backend or names it other than as a backend, when nothing registers it, when the pass rebinds
its graph, and for a namesake pass the backend does not import."""

from __future__ import annotations

import pytest

from tests.conftest import lint, package_repository

SELECT = """\
import torch


def select(gm):
    graph = gm.graph
    gm._isel_params["pad"] = 1
    for n in list(graph.nodes):
        if n.target == torch.ops.aten.pad.default:
            continue  # a pad the exported model had: left as it is
        if n.op == "call_function" and n.target == torch.ops.aten.max_pool2d.default:
            with graph.inserting_before(n):
                padded = graph.call_function(torch.ops.aten.pad, (n.args[0], [0, 1, 0, 1]))
            n.replace_input_with(n.args[0], padded)
    gm.recompile()
"""

SIMPL = """\
def simpl(gm):
    for n in list(gm.graph.nodes):
        if n.op == "call_function" and n.target == torch.ops.aten.pad and not any(n.args[1]):
            n.replace_all_uses_with(n.args[0])
            gm.graph.erase_node(n)
    gm.recompile()
"""

# The simplifier in the backend's module (linked to the selector it imports: QL101's case), or
# in a module of its own. The backend inserts nodes itself (its output copy), as pytorch-shir's
# emission does: it is not read as a consumer that only keys on the packet, and the quantizer's
# overload-keyed matcher beside the selector is what QL102 names.
# The backend's own output copy, as pytorch-shir's emission makes (the other self-traced tests'
# backends share it).
EMIT = """\
def emit(gm):
    out = next(n for n in gm.graph.nodes if n.op == "output")
    with gm.graph.inserting_before(out):
        copied = gm.graph.call_function(torch.ops.aten.clone.default, (out.args[0][0],))
    out.args = ((copied,),)
    gm.recompile()
"""

BACKEND = (
    """\
import torch

from pkg.select import select
{simpl_import}

{simpl}

"""
    + EMIT
    + """

def compiler(gm, example_inputs):
    {before}
    select(gm)
    simpl(gm)
    emit(gm)
    {after}
    return gm.forward
"""
)

QUANTIZER = """\
import torch


def annotate_shared(gm):
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target == torch.ops.aten.pad.default:
            n.meta["shared"] = True
"""

RUN = """\
import torch

import pkg.backend


def run(model, x):
    {registration}
    return compiled(x)
"""

REGISTERED = "compiled = torch.compile(model, backend=pkg.backend.compiler)"


def _repo(
    tmp_path, after="pass", registration=REGISTERED, select=SELECT, run_extra="", linked=True, before="pass", **extra
):
    if linked:
        backend = BACKEND.replace("{simpl_import}", "").replace("{simpl}", SIMPL)
    else:
        backend = BACKEND.replace("{simpl_import}", "from pkg.simplify import simpl").replace("{simpl}", "")
        extra["simplify"] = "import torch\n\n\n" + SIMPL
    root = package_repository(
        tmp_path,
        select=select,
        quantizer=QUANTIZER,
        backend=backend.replace("{after}", after).replace("{before}", before),
        **extra,
    )
    (root / "scripts").mkdir()
    (root / "scripts" / "run.py").write_text(RUN.replace("{registration}", registration) + run_extra)
    return root


def _rows(root, module: str, rule: str) -> list[int]:
    path = root / "pkg" / f"{module}.py"
    return [d.range.start.row for d in lint(path.read_text(), path=str(path), select=(rule,))]


@pytest.mark.parametrize(
    "registration",
    [
        REGISTERED,
        "compiled = torch.compile(backend=pkg.backend.compiler)(model)",
        "compiled = torch._dynamo.optimize(pkg.backend.compiler)(model)",
    ],
    ids=["compile", "compile-then-call", "dynamo-optimize"],
)
def test_quiet_in_a_registered_backend(tmp_path, registration):
    (tmp_path / "linked").mkdir()
    (tmp_path / "apart").mkdir()
    assert _rows(_repo(tmp_path / "linked", registration=registration), "backend", "QL101") == []
    assert _rows(_repo(tmp_path / "apart", registration=registration, linked=False), "select", "QL102") == []


@pytest.mark.parametrize(
    "variant",
    [
        {"before": "aot_module_simplified(gm, example_inputs)"},
        {"after": "aot_export_module(example_inputs, gm)"},
        {"after": "gm = gm.copy()\n    aot_export_module(gm, example_inputs)"},
        {"run_extra": "\n\ndef direct(gm):\n    return pkg.backend.compiler(gm, [])\n"},
        {"run_extra": "\n\nBACKENDS = [pkg.backend.compiler]\n"},
        {"registration": "compiled = model"},
        {"select": SELECT.replace("    graph = gm.graph\n", "    gm = gm.copy()\n    graph = gm.graph\n")},
    ],
    ids=[
        "handed-to-aot-first",
        "aot-handed-another",
        "graph-rebound-in-backend",
        "called-directly",
        "named-otherwise",
        "never-registered",
        "graph-rebound",
    ],
)
def test_loud_when_the_graph_is_not_the_backends_own(tmp_path, variant):
    (tmp_path / "linked").mkdir()
    (tmp_path / "apart").mkdir()
    linked = _repo(tmp_path / "linked", **variant)
    assert _rows(linked, "backend", "QL101") == [_row_of(linked.joinpath("pkg/backend.py").read_text(), ".aten.pad")]
    apart = _repo(tmp_path / "apart", linked=False, **variant)
    select = variant.get("select", SELECT)
    assert _rows(apart, "select", "QL102") == [_row_of(select, "graph.call_function")]


@pytest.mark.parametrize(
    "after",
    [
        "aot_module_simplified(gm, example_inputs)",
        "aot_export_module(gm, example_inputs, trace_joint=False)",
        "if example_inputs:\n        aot_export_module(gm, example_inputs, trace_joint=False)",
    ],
    ids=["aot-simplified", "aot-export", "aot-export-in-a-branch"],
)
def test_quiet_when_the_backend_re_traces_after_its_passes(tmp_path, after):
    # pytorch-shir's first backend: its passes run on Dynamo's graph, then AOT re-traces it,
    # calling every packet they inserted and recording its overload.
    (tmp_path / "linked").mkdir()
    (tmp_path / "apart").mkdir()
    assert _rows(_repo(tmp_path / "linked", after=after), "backend", "QL101") == []
    assert _rows(_repo(tmp_path / "apart", after=after, linked=False), "select", "QL102") == []


def _row_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_namesake_pass_the_backend_does_not_import_stays_loud(tmp_path):
    sibling = SELECT.replace("[0, 1, 0, 1]", "[1, 1, 1, 1]")
    root = _repo(tmp_path, linked=False, select_vgg=sibling)
    assert _rows(root, "select", "QL102") == []
    assert _rows(root, "select_vgg", "QL102") == [_row_of(sibling, "graph.call_function")]


def test_an_attribute_stored_on_the_graph_module_binds_nothing(tmp_path):
    # Without the item stored on `gm`, the pass was already read as inserting into its
    # parameter's graph; with it, it still is.
    bare = SELECT.replace('    gm._isel_params["pad"] = 1\n', "")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert _rows(_repo(tmp_path / "a", select=bare, linked=False), "select", "QL102") == []
    assert _rows(_repo(tmp_path / "b", linked=False), "select", "QL102") == []


def test_a_pass_imported_through_its_package_re_export_is_still_called(tmp_path):
    # easydist imports `tile_comm` from its `passes` package, whose `__init__` re-exports it:
    # that import names the pass itself, not a namesake.
    root = _repo(tmp_path, linked=False)
    (root / "pkg" / "__init__.py").write_text("from pkg.select import select\n")
    backend = root / "pkg" / "backend.py"
    backend.write_text(backend.read_text().replace("from pkg.select import select", "from pkg import select"))
    assert _rows(root, "select", "QL102") == []
