"""QL101/QL102's packet gate (`packet_text`, `packet_imports`): a file that cannot make a packet is not parsed.

Loud: one case per way a packet reaches a matcher or an insertion (spelled, bound to a name
of the module, imported from another module, through an imported helper): the gate lets
the file through AND the rule reports, so a gate too narrow fails here. Quiet: look-alikes
the gate turns away, on which the rule says nothing even with the gate forced open.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qlint.analysis.graphs import (
    insertions,
    packet_imports,
    packet_kinds,
    packet_modules,
    packet_text,
    sinks,
    wrapper_index,
)
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from tests.conftest import dedented_package, settings_for, write_package

EXIR = "from executorch.exir.dialects._ops import ops as exir_ops\n"
HELPER = "def check_nodes(case, m, occurrence):\n    case.checkGraphModuleNodes(m, None, None, occurrence)\n"


def _findings(pkg: Path, name: str = "use.py") -> list[tuple[str, int]]:
    path = pkg / name
    result = check_source(path.read_bytes(), str(path), settings_for(("QL101", "QL102")), ProjectIndex())
    assert not result.errors, result.errors
    return sorted((d.code, d.range.start.row) for d in result.diagnostics)


def _gate(pkg: Path, name: str = "use.py") -> bool:
    path = pkg / name
    return packet_imports.may_hold_packet(path.read_text(), str(path), ProjectIndex())


@pytest.fixture
def gate_open(monkeypatch):
    """The triggers as they were before the gate: every file a matcher or insertion row."""
    for module, name in (
        (sinks, "spells_packet"),
        (sinks, "may_hold_packet"),
        (insertions, "spells_packet"),
        (wrapper_index, "may_hold_packet"),
    ):
        monkeypatch.setattr(module, name, lambda *_: True)


# -- loud: spelled in the file ------------------------------------------------------------------

SPELLED = {
    "torch.ops chain": ("import torch\n\ndef f(n):\n    return n.target == torch.ops.aten.relu\n", 4),
    "edge dialect": (EXIR + "\ndef f(n):\n    return n.target == exir_ops.edge.aten.relu\n", 4),
    "namespace imported": ("from torch.ops import aten\n\ndef f(n):\n    return n.target == aten.relu\n", 4),
    "namespace imported as": ("import torch.ops.aten as A\n\ndef f(n):\n    return n.target == A.relu\n", 4),
    "packet imported": ("from torch.ops.aten import relu\n\ndef f(n):\n    return n.target == relu\n", 4),
    "root imported as": ("from torch import ops as O\n\ndef f(n):\n    return n.target == O.aten.relu\n", 4),
    "edge root imported": (
        "from executorch.exir.dialects._ops.ops import edge as E\n\ndef f(n):\n    return n.target == E.aten.relu\n",
        4,
    ),
    "module alias, aliased again": (
        "import torch\nA = torch.ops.aten\nB = A\n\ndef f(n):\n    return n.target == B.relu\n",
        6,
    ),
    "root alias": ("import torch\nO = torch.ops\n\ndef f(n):\n    return n.target == O.aten.relu\n", 5),
    "local alias": ("import torch\n\ndef f(n):\n    ns = torch.ops.aten\n    return n.target == ns.relu\n", 5),
    "annotated alias": ("import torch\nA: object = torch.ops.aten\n\ndef f(n):\n    return n.target == A.relu\n", 5),
    "class attribute": (
        "import torch\n\nclass P:\n    ns = torch.ops.aten\n\n    def f(self, n):\n"
        "        return n.target == self.ns.relu\n",
        7,
    ),
    "instance attribute": (
        "import torch\n\nclass P:\n    def __init__(self):\n        self.ns = torch.ops.aten\n\n"
        "    def f(self, n):\n        return n.target == self.ns.relu\n",
        8,
    ),
    "alias continued from the row before": (
        "import torch\nA = (\n    torch.ops.aten\n)\n\ndef f(n):\n    return n.target == A.relu\n",
        7,
    ),
    "chain split over rows after a comparison": (
        "import torch\n\ndef f(n):\n    return n.target == (torch.ops.aten  # the namespace\n        .relu)\n",
        4,
    ),
    "chain split over rows with a comment": (
        "import torch\n\ndef f(n):\n    return n.target == (\n        torch.ops.aten  # the namespace\n"
        "        .relu\n    )\n",
        5,
    ),
    "collection": ("import torch\nOPS = {torch.ops.aten.relu}\n\ndef f(n):\n    return n.target in OPS\n", 2),
    "insertion": (
        "import torch\n\ndef f(g, x):\n    return g.call_function(torch.ops.aten.relu, (x,))\n",
        4,
    ),
}


@pytest.mark.parametrize("case", sorted(SPELLED))
def test_a_packet_spelled_in_the_file(tmp_path, case):
    text, row = SPELLED[case]
    pkg = dedented_package(tmp_path, {"use.py": text})
    assert packet_text.spells_packet(text)
    assert [r for _, r in _findings(pkg)] == [row]


# -- loud: imported from another module of the project ------------------------------------------------

IMPORTED = {
    "a constant": (
        {"ops.py": "import torch\nRELU = torch.ops.aten.relu\n"},
        "from .ops import RELU\n\ndef f(n):\n    return n.target == RELU\n",
        [("QL101", 4)],
    ),
    "a collection": (
        {"ops.py": "import torch\n\nOPS = {\n    torch.ops.aten.hardtanh,\n}\n"},
        "from pkg.ops import OPS\n\ndef f(n):\n    return n.target in OPS\n",
        [("QL101", 4)],
    ),
    "a collection built from another module's": (
        {
            "base.py": "import torch\nBASE = {torch.ops.aten.relu}\n",
            "ops.py": "import torch\nfrom .base import BASE\nALL = BASE | {torch.ops.aten.add.Tensor}\n",
        },
        "from .ops import ALL\n\ndef f(n):\n    return n.target in ALL\n",
        [("QL101", 4)],
    ),
    "a constant re-exported by the package": (
        {"ops.py": "import torch\nRELU = torch.ops.aten.relu\n", "__init__.py": "from .ops import RELU\n"},
        "from pkg import RELU\n\ndef f(n):\n    return n.target == RELU\n",
        [("QL101", 4)],
    ),
    "a namespace alias": (
        {"aliases.py": "import torch\n\naten = torch.ops.aten\n"},
        "from .aliases import aten\n\ndef f(n):\n    return n.target == aten.relu\n",
        [("QL101", 4)],
    ),
    "a namespace alias imported by the alias module": (
        {"aliases.py": "from torch.ops import aten\n"},
        "from .aliases import aten\n\ndef f(n):\n    return n.target == aten.relu\n",
        [("QL101", 4)],
    ),
    "a root alias": (
        {"aliases.py": "import torch\n\nO = torch.ops\n"},
        "from .aliases import O\n\ndef f(n):\n    return n.target == O.aten.relu\n",
        [("QL101", 4)],
    ),
    "a star import": (
        {"ops.py": "import torch\nRELU = torch.ops.aten.relu\n"},
        "from .ops import *\n\ndef f(n):\n    return n.target == RELU\n",
        [("QL101", 4)],
    ),
    "a constant after a literal of many rows": (
        {
            "ops.py": "import torch\nTABLE = {\n    (Kind.a, False): (\n        None,\n        make(\n"
            "            act=torch.int8,\n        ),\n    ),\n}\nRELU = torch.ops.aten.relu\n"
        },
        "from .ops import RELU\n\ndef f(n):\n    return n.target == RELU\n",
        [("QL101", 4)],
    ),
    "an inserted constant": (
        {"ops.py": "import torch\nRELU = torch.ops.aten.relu\n"},
        "from .ops import RELU\n\ndef f(g, x):\n    return g.call_function(RELU, (x,))\n",
        [("QL102", 4)],
    ),
    # `.target_dtype`: the rule's trigger text (`sinks.TRIGGERS`), on no matcher row.
    "a packet through an imported sink helper": (
        {"ops.py": "import torch\nHARDTANH = torch.ops.aten.hardtanh\n", "helpers.py": HELPER},
        "from .helpers import check_nodes\nfrom .ops import HARDTANH\n\ndef test(self, m):\n"
        "    self.target_dtype = None\n    check_nodes(self, m, {HARDTANH: 1})\n",
        [("QL101", 6)],
    ),
    "a packet spelled here, through an imported sink helper": (
        {"helpers.py": HELPER},
        "import torch\nfrom .helpers import check_nodes\n\ndef test(self, m):\n"
        "    self.target_dtype = None\n    check_nodes(self, m, {torch.ops.aten.hardtanh: 1})\n",
        [("QL101", 6)],
    ),
    "a packet spelled here, through an imported insertion wrapper": (
        {"graph_utils.py": "def insert(graph, op, args):\n    return graph.call_function(op, args)\n"},
        "import torch\nfrom .graph_utils import insert\n\ndef f(g, x):\n"
        "    return insert(g, torch.ops.aten.relu, (x,))\n",
        [("QL102", 5)],
    ),
}


@pytest.mark.parametrize("case", sorted(IMPORTED))
def test_a_packet_imported_from_the_project(tmp_path, case):
    others, text, expected = IMPORTED[case]
    pkg = dedented_package(tmp_path, {**others, "use.py": text})
    assert _gate(pkg)
    assert _findings(pkg) == expected


# -- quiet: look-alikes the gate turns away -----------------------------------------------------------

QUIET = {
    "overloads": (
        {},
        "import torch\nfrom torch.ops import aten\n" + EXIR + "\ndef f(n):\n"
        "    return n.target in (torch.ops.aten.relu.default, aten.add.Tensor, exir_ops.edge.aten.mul.Tensor)\n",
    ),
    "a packet in a comment only": ({}, "import torch\n\ndef f(n):\n    return n.target == x  # torch.ops.aten.relu\n"),
    "a packet in a string only": ({}, "import torch\n\ndef f(n):\n    return n.target == 'torch.ops.aten.relu'\n"),
    "an eager call": ({}, "import torch\n\ndef f(n, x):\n    return n.target == torch.ops.aten.relu(x)\n"),
    "getattr on a namespace": (
        {},
        "import torch\n\ndef f(n, name):\n    return n.target == getattr(torch.ops.aten, name)\n",
    ),
    "an overload's packet": (
        {},
        "import torch\n\ndef f(n):\n    return n.target == torch.ops.aten.relu.default.overloadpacket\n",
    ),
    "a higher-order op": ({}, "import torch\n\ndef f(n):\n    return n.target == torch.ops.higher_order.cond\n"),
    "a namespace passed on": ({}, "import torch\n\ndef f(n):\n    return n.target == pick(torch.ops.aten, 'relu')\n"),
    "an imported overload": (
        {"ops.py": "import torch\nRELU = torch.ops.aten.relu.default\n"},
        "from .ops import RELU\n\ndef f(n):\n    return n.target == RELU\n",
    ),
    "a function of a module that spells packets elsewhere": (
        {"ops.py": "import torch\nDQ = {torch.ops.aten.relu}\n\ndef helper():\n    return 1\n"},
        "from .ops import helper\n\ndef f(n):\n    return n.target == helper()\n",
    ),
    "a name assigned next to a packet, not from it": (
        {"ops.py": "import torch\nNAME: str = 'relu'\nDQ = {torch.ops.aten.relu}\n"},
        "from .ops import NAME\n\ndef f(n):\n    return n.target == NAME\n",
    ),
    "the edge root module's own `ops`": (
        {"ops_module.py": "class _Ops:\n    pass\n\nops = _Ops()\n"},
        "from .ops_module import ops\n\ndef f(n):\n    return n.target == ops\n",
    ),
    "an inserted overload": (
        {},
        "import torch\n\ndef f(g, x):\n    return g.call_function(torch.ops.aten.relu.default, (x,))\n",
    ),
}


@pytest.mark.parametrize("case", sorted(QUIET))
def test_a_look_alike_is_turned_away_and_quiet(tmp_path, case, gate_open):
    others, text = QUIET[case]
    pkg = dedented_package(tmp_path, {**others, "use.py": text})
    assert _findings(pkg) == []  # the gate forced open: the rule says nothing here anyway


@pytest.mark.parametrize("case", sorted(QUIET))
def test_the_gate_turns_a_look_alike_away(tmp_path, case):
    others, text = QUIET[case]
    pkg = dedented_package(tmp_path, {**others, "use.py": text})
    assert not _gate(pkg)
    assert _findings(pkg) == []


def test_a_file_turned_away_depends_on_the_modules_the_gate_read(tmp_path):
    pkg = dedented_package(
        tmp_path,
        {
            "ops.py": "import torch\nRELU = torch.ops.aten.relu.default\n",
            "use.py": "from .ops import RELU\n\ndef f(n):\n    return n.target == RELU\n",
        },
    )
    path = pkg / "use.py"
    result = check_source(path.read_bytes(), str(path), settings_for(("QL101",)), ProjectIndex())
    assert result.diagnostics == [] and not result.parsed
    assert str(pkg / "ops.py") in result.dependencies  # its packet would change the answer


def test_a_module_of_the_project_not_written_yet_is_a_dependency(tmp_path):
    pkg = dedented_package(tmp_path, {"use.py": "from pkg.ops import RELU\n\ndef f(n):\n    return n.target == RELU\n"})
    path = pkg / "use.py"
    result = check_source(path.read_bytes(), str(path), settings_for(("QL101",)), ProjectIndex())
    assert result.diagnostics == [] and str(pkg / "ops.py") in result.dependencies


@pytest.mark.parametrize(
    ("text", "spelled"),
    [
        ("x = torch.ops.aten.relu\n", True),
        ("x = torch .ops\\\n    .aten.relu\n", True),
        ("x = torch.ops.aten.relu.default\n", False),
        ("x = torch.ops.aten.relu(y)\n", False),
        ("x = torch.ops.aten.relu\n(y)\n", True),  # two statements: the packet is bound
        ("s = 'it''s torch.ops.aten.relu'\n", False),
        ('s = "#" + str(torch.ops.aten.relu)\n', True),
        ("ops = make()\nx = ops\n", False),
        ("foo(\n    torch.ops.aten,\n)\n", True),  # where the statement started is not read
        ("if n == torch.ops.aten:\n    pass\n", False),
        ("if (A := torch.ops.aten) is not None:\n    x = A.relu\n", True),
        ("x = 1; A = torch.ops.aten\ny = A.relu\n", True),
        ("x = (torch.ops.aten  # e.g. the namespace\n    .relu)\n", True),
        ("x = (torch.ops  # e.g.\n    .aten.relu.default)\n", False),
        ("\uff4es = torch.ops.aten\ny = ns.relu\n", True),  # a full-width n: one identifier for Python
        ("with torch.ops.aten as A:\n    x = A.relu\n", True),
        ("x = 1  # rows end in CR alone\rA = torch.ops.aten\ry = A.relu\r", True),
    ],
)
def test_what_the_text_alone_spells(text, spelled):
    assert packet_text.spells_packet(text) is spelled


def test_a_whole_run_lets_every_imported_packet_through(tmp_path):
    """A run over a tree keeps module lookups and directory listings for the run
    (`ProjectIndex.fixed_layout`): the same findings as one check at a time."""
    from qlint.runner import run_check
    from qlint.settings import Settings

    (tmp_path / ".git").mkdir()
    expected = []
    for i, (others, text, found) in enumerate(IMPORTED.values()):
        pkg = write_package(tmp_path, f"pkg{i}")
        for name, source in {**others, "use.py": text}.items():
            (pkg / name).write_text(source.replace("from pkg", f"from pkg{i}"))
        expected += [(f"pkg{i}", code, row) for code, row in found]
    run = run_check([str(tmp_path)], Settings(root=tmp_path, select=("QL101", "QL102")), use_cache=False, jobs=1)
    found = [(Path(r.path).parent.name, d.code, d.range.start.row) for r in run.results for d in r.diagnostics]
    assert sorted(found) == sorted(expected)


@pytest.mark.parametrize(
    "piece",
    [
        "X = 1\n",
        "A, B = b, a = f()\n",
        "(A,\n B) = x\n",
        "X: dict[str, int] = {\n    'a': 1,\n}\n",
        "TABLE = {\n    (Kind.a, False): (\n        None,\n"
        "        make(\n            act=torch.int8,\n        ),\n    ),\n}\n",
        "if x == 1:\n    Y = 2\nelse:\n    Y = 3\n",
        "d[k] = v\nself.x = 1\nY += 1\n",
        "X = 1  # rows end in CR alone\rA = torch.ops.aten\r",
        "with f() as g, h() as k:\n    pass\n",
        "x = (\n    a\n    == b\n)\n",
    ],
)
def test_assignment_targets_are_read_row_by_row(piece):
    """`_assigning_rows` (rows without an `=` skipped, each row matched alone) finds what one
    search of the whole statement finds: no match spans a newline but its leading one."""
    whole = [m.group(1) for m in packet_modules._ROW_TARGETS.finditer("\n" + piece)]
    assert packet_modules._assigning_rows(piece) == whole


def test_the_texts_of_only_the_modules_read_last_are_kept(tmp_path, monkeypatch):
    # What a name of a module is stays known for the run (`_KINDS`); the module's text is kept
    # for the few read last only, and read again for a name asked after it went.
    monkeypatch.setattr(packet_modules, "_MODULES", {})
    monkeypatch.setattr(packet_kinds, "_KINDS", {})
    monkeypatch.setattr(packet_modules, "_KEPT_MODULES", 2)
    project = ProjectIndex()
    paths = []
    for i in range(3):
        path = tmp_path / f"m{i}.py"
        path.write_text(f"import torch\nP{i} = torch.ops.aten.relu\nN{i} = torch.ops.aten\nX{i} = 1\n")
        paths.append(str(path))
    for i, path in enumerate(paths):
        assert packet_imports.name_kind(project, path, f"P{i}", []) == packet_imports.PACKET
    assert list(packet_modules._MODULES) == paths[1:]
    assert packet_imports.name_kind(project, paths[0], "N0", []) == packet_imports.NAMESPACE
    assert packet_imports.name_kind(project, paths[0], "X0", []) == ""
    assert list(packet_modules._MODULES) == [paths[2], paths[0]]


def test_a_module_is_searched_for_a_closed_target_list_once(tmp_path, monkeypatch):
    # A module none of whose names asked is assigned (functions, classes: most names other
    # files import) was searched whole for a target list closed on its own row at every name.
    monkeypatch.setattr(packet_modules, "_MODULES", {})
    monkeypatch.setattr(packet_kinds, "_KINDS", {})
    searches = []
    closed = packet_modules._CLOSED_TARGETS

    class Counted:
        def search(self, text, *args):
            searches.append(text)
            return closed.search(text, *args)

    monkeypatch.setattr(packet_modules, "_CLOSED_TARGETS", Counted())
    path = tmp_path / "helpers.py"
    path.write_text("import torch\n\ndef a():\n    pass\n\ndef b():\n    pass\n\nclass C:\n    pass\n")
    project = ProjectIndex()
    for name in ("a", "b", "C"):
        assert packet_imports.name_kind(project, str(path), name, []) == ""
    assert len(searches) == 1
