"""QL101/QL102's packet gate (`packet_imports.name_kind`) through import cycles.

A name two modules import from each other binds what it is bound to outside the cycle: a
packet only if some module of the cycle binds it to one. The gate took every name met again
while it was still being read for a packet, and so every name of the cycle: the installed
torch's `backend_config.py` shows `>>> from torch.ao.quantization.backend_config import
BackendConfig` in a docstring (read as an import), and 52 files importing such names were
let in and parsed for nothing.

Quiet: cycles that bind no packet turn the file away (the gate let them in before). Loud:
a packet, or a namespace, bound in one module of a cycle still reaches the files importing
it from any module of the cycle, whichever is asked first (a reading made while the cycle's
first name was under way is not kept).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qlint.analysis.graphs import packet_imports, packet_kinds
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from tests.conftest import dedented_package, settings_for

MATCHER = "def f(n):\n    return n.target == {}\n"


def _gate(pkg: Path, name: str) -> bool:
    path = pkg / name
    return packet_imports.may_hold_packet(path.read_text(), str(path), ProjectIndex())


def _findings(pkg: Path, name: str) -> list[tuple[str, int]]:
    path = pkg / name
    result = check_source(path.read_bytes(), str(path), settings_for(("QL101", "QL102")), ProjectIndex())
    assert not result.errors, result.errors
    return sorted((d.code, d.range.start.row) for d in result.diagnostics)


DOCSTRING = '''\
"""A configuration. Example usage::

    from pkg import Config

    config = Config()
"""


class Config:
    pass
'''

QUIET = {
    "a docstring's import of the package's re-export": (
        {"__init__.py": "from .config import Config\n", "config.py": DOCSTRING},
        "from pkg import Config\n\n" + MATCHER.format("Config"),
    ),
    "two modules importing a name from each other": (
        {"a.py": "from .b import NAME\n", "b.py": "from .a import NAME\n"},
        "from .a import NAME\n\n" + MATCHER.format("NAME"),
    ),
    "a cycle through an alias of the name": (
        {"a.py": "from .b import OTHER\nNAME = OTHER\n", "b.py": "from .a import NAME as OTHER\n"},
        "from .a import NAME\n\n" + MATCHER.format("NAME"),
    ),
}


@pytest.mark.parametrize("case", sorted(QUIET))
def test_a_cycle_binding_no_packet_turns_the_file_away(tmp_path, case):
    others, text = QUIET[case]
    pkg = dedented_package(tmp_path, {**others, "use.py": text})
    assert not _gate(pkg, "use.py")
    assert _findings(pkg, "use.py") == []


# A module binding the packet (or namespace) whose docstring shows it imported from a module that
# re-exports it: the text reading sees a cycle, Python and the check do not.
PACKET_CYCLE = {
    "ops.py": '"""Use it as::\n\n    from pkg.again import RELU\n"""\nimport torch\n\nRELU = torch.ops.aten.relu\n',
    "again.py": "from .ops import RELU\n",
}
NAMESPACE_CYCLE = {
    "ns.py": '"""Use it as::\n\n    from pkg.alias import A\n"""\nimport torch\n\nA = torch.ops.aten\n',
    "alias.py": "from .ns import A\n",
}


@pytest.mark.parametrize("order", [("ops", "again"), ("again", "ops")])
def test_a_packet_bound_in_a_cycle_reaches_every_importer(tmp_path, order):
    uses = {f"use_{m}.py": f"from .{m} import RELU\n\n" + MATCHER.format("RELU") for m in order}
    pkg = dedented_package(tmp_path, {**PACKET_CYCLE, **uses})
    for module in order:  # the first asked reads the other while its own reading is under way
        assert _gate(pkg, f"use_{module}.py")
        assert _findings(pkg, f"use_{module}.py") == [("QL101", 4)]


@pytest.mark.parametrize("order", [("ns", "alias"), ("alias", "ns")])
def test_a_namespace_bound_in_a_cycle_reaches_every_importer(tmp_path, order):
    uses = {f"use_{m}.py": f"from .{m} import A\n\n" + MATCHER.format("A.relu") for m in order}
    pkg = dedented_package(tmp_path, {**NAMESPACE_CYCLE, **uses})
    for module in order:
        assert _gate(pkg, f"use_{module}.py")
        assert _findings(pkg, f"use_{module}.py") == [("QL101", 4)]


def test_an_insertion_of_a_packet_bound_in_a_cycle_is_flagged(tmp_path):
    use = "from .again import RELU\n\n\ndef f(g, x):\n    return g.call_function(RELU, (x,))\n"
    pkg = dedented_package(tmp_path, {**PACKET_CYCLE, "use.py": use})
    assert _gate(pkg, "use.py")
    assert _findings(pkg, "use.py") == [("QL102", 5)]


# -- the cycle read once: its value is the join of what its modules assign ----------------------

FALLBACK = "import torch\n\ntry:\n    from {source} import OP\nexcept ImportError:\n    OP = {value}\n"


def _cycle(a_value: str, b_value: str) -> dict[str, str]:
    """a and b import OP from each other, each with a fallback assignment."""
    return {"a.py": FALLBACK.format(source=".b", value=a_value), "b.py": FALLBACK.format(source=".a", value=b_value)}


@pytest.mark.parametrize(
    ("a_value", "b_value", "kind"),
    [
        ("None", "None", ""),
        ("None", "torch.ops.aten.relu", packet_imports.PACKET),
        ("torch.ops.aten.relu", "torch.ops.aten.add", packet_imports.PACKET),
        ("torch.ops.aten", "torch.ops.aten", packet_imports.NAMESPACE),
        ("torch.ops.aten", "None", packet_imports.NAMESPACE),
        ("torch.ops", "torch.ops", packet_imports.ROOT),
        # Several modules binding different kinds: no one kind, so the gate cannot tell.
        ("torch.ops.aten", "torch.ops", packet_imports.PACKET),
    ],
)
def test_a_cycle_binds_the_join_of_its_modules(tmp_path, a_value, b_value, kind):
    pkg = dedented_package(tmp_path, _cycle(a_value, b_value))
    for first, then in (("a.py", "b.py"), ("b.py", "a.py")):  # every name of it, whichever first
        packet_kinds._KINDS.clear()
        got = [packet_imports.name_kind(ProjectIndex(), str(pkg / m), "OP", []) for m in (first, then)]
        assert got == [kind, kind]


def test_a_cycle_is_read_once(tmp_path, monkeypatch):
    # Three modules in a ring, none binding a packet: once the first name is read, every name
    # of the ring is known (kept), and asking the others reads no module again.
    files = {"a.py": "from .b import OP\n", "b.py": "from .c import OP\n", "c.py": "from .a import OP\nX = 1\n"}
    pkg = dedented_package(tmp_path, files)
    project = ProjectIndex()
    packet_kinds._KINDS.clear()
    assert packet_imports.name_kind(project, str(pkg / "a.py"), "OP", []) == ""
    read = []
    monkeypatch.setattr(packet_kinds, "_name_kind", lambda *args: read.append(args) or "")
    deps: list = []
    assert [packet_imports.name_kind(project, str(pkg / m), "OP", deps) for m in ("b.py", "c.py")] == ["", ""]
    assert read == []
    assert {str(pkg / m) for m in ("a.py", "b.py", "c.py")} <= {d[0] for d in deps}  # the whole cycle


def test_a_name_kept_from_a_cycle_is_read_again_when_a_module_of_it_changes(tmp_path):
    pkg = dedented_package(
        tmp_path, {"a.py": "from .b import OP\n", "b.py": "from .c import OP\n", "c.py": "from .a import OP\n"}
    )
    packet_kinds._KINDS.clear()
    assert packet_imports.name_kind(ProjectIndex(), str(pkg / "a.py"), "OP", []) == ""
    (pkg / "a.py").write_text(FALLBACK.format(source=".b", value="torch.ops.aten.relu") + "# longer\n")
    assert packet_imports.name_kind(ProjectIndex(), str(pkg / "c.py"), "OP", []) == packet_imports.PACKET


def test_a_cycle_through_from_dot_import(tmp_path):
    # The package imports OP from its module, which imports it from the package (`from . import`).
    quiet = {"__init__.py": "from .a import OP\n", "a.py": "from . import OP\n"}
    pkg = dedented_package(tmp_path, {**quiet, "use.py": "from . import OP\n\n" + MATCHER.format("OP")})
    assert not _gate(pkg, "use.py")
    (pkg / "a.py").write_text(FALLBACK.format(source=".", value="torch.ops.aten.relu"))
    assert _gate(pkg, "use.py")
    assert _findings(pkg, "use.py") == [("QL101", 4)]


@pytest.mark.parametrize(
    ("value", "loud"),
    [("torch.ops.aten.relu", True), ("torch.ops.aten.relu.default", False), ("None", False)],
)
def test_a_cycle_through_an_import_error_fallback(tmp_path, value, loud):
    files = {"a.py": "from .b import OP\n", "b.py": FALLBACK.format(source="pkg.a", value=value)}
    pkg = dedented_package(tmp_path, {**files, "use.py": "from .a import OP\n\n" + MATCHER.format("OP")})
    assert _gate(pkg, "use.py") is loud
    assert _findings(pkg, "use.py") == ([("QL101", 4)] if loud else [])


def test_a_cycle_inside_a_cycle(tmp_path):
    # a <-> b share OP; b's OP also reaches c <-> d, where d binds the packet: every name of both
    # cycles is a packet, whichever is asked first.
    files = {
        "a.py": "from .b import OP\n",
        "b.py": "from .a import OP\nfrom .c import OTHER\nOP = OTHER\n",
        "c.py": "from .d import OTHER\n",
        "d.py": "from .c import OTHER\nfrom .b import OP\nimport torch\nOTHER = torch.ops.aten.relu\n",
    }
    pkg = dedented_package(tmp_path, files)
    for first in ("a", "b", "c", "d"):
        packet_kinds._KINDS.clear()
        project = ProjectIndex()
        order = [first] + [m for m in "abcd" if m != first]
        got = {
            m: packet_imports.name_kind(project, str(pkg / f"{m}.py"), "OTHER" if m in "cd" else "OP", [])
            for m in order
        }
        assert set(got.values()) == {packet_imports.PACKET}, (first, got)


def test_a_chain_deeper_than_the_stack_lets_the_file_in(tmp_path):
    # Each module imports the name from the next, 1,500 deep: reading it overflows the stack.
    # The file is checked (as a packet would be), not lost to a RecursionError.
    chain = {f"m{i}.py": f"from .m{i + 1} import OP\n" for i in range(1500)}
    pkg = dedented_package(
        tmp_path, {**chain, "m1500.py": "OP = None\n", "use.py": "from .m0 import OP\n\n" + MATCHER.format("OP")}
    )
    packet_kinds._KINDS.clear()
    assert _gate(pkg, "use.py")
    assert not packet_kinds._ASKING and not packet_kinds._PASS and not packet_kinds._APPROX
    assert _findings(pkg, "use.py") == []
