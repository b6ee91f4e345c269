"""QL101/QL102's packet gate (`packet_imports.name_kind`) keeps what a name's answer rests on:
the modules and lookups read for it and, for another name whose answer it used that was
final when it was read (outside every import cycle under way), that name and the kind it had.
A module edited without changing what such a name is bound to reads that name again, and no
name resting on it: the names of an import cycle took the trail of the whole cycle's reading,
what each module outside it that the cycle read, so an edit of any of them read the whole
cycle again (torch's _dynamo/eval_frame.py, checked as an editor's buffer: ~380 readings).

An edit that changes such a name's kind reads again what rests on it, and the answers are
those of a fresh run (loud: a packet reaches the cycle; quiet: a packet gone leaves it empty).
"""

from __future__ import annotations

import os

import pytest

from qlint.analysis.graphs import kept_answers, kept_shards, packet_imports, packet_kinds, packet_modules
from qlint.analysis.names import content_keys
from qlint.analysis.names.project import ProjectIndex
from tests.conftest import kept_store, old_file, old_package

PACKET = packet_imports.PACKET
# A ring of two modules sharing OP, which `a` also binds to what `leaf` binds LEAF to.
RING = {
    "a": "from pkg.b import OP\nfrom pkg.leaf import LEAF\n\nOP = LEAF\n",
    "b": "from pkg.a import OP\n",
}
LEAF_NONE = "LEAF = None\n"
LEAF_NONE_EDITED = "LEAF = None\n\n\ndef helper():\n    return 1\n"  # LEAF bound as before
LEAF_PACKET = "import torch\n\nLEAF = torch.ops.aten.relu\n"
# A chain outside any cycle: top's NAME comes from mid's, which comes from leaf's LEAF.
CHAIN = {"top": "from pkg.mid import NAME\n", "mid": "from pkg.leaf import LEAF\n\nNAME = LEAF\n"}


def _new_process() -> None:
    packet_kinds._KINDS.clear()
    packet_modules._MODULES.clear()
    packet_modules._SHELLS.clear()
    content_keys._DIGESTS.clear()
    kept_answers.forget()


@pytest.fixture
def fresh():
    _new_process()
    yield
    _new_process()


@pytest.fixture
def readings(monkeypatch):
    """The names read (not taken from what is known or kept), as (module, name)."""
    read: list[tuple[str, str]] = []
    real = packet_kinds._read

    def counted(project, key, deps):
        read.append((key[0].rsplit("/", 1)[-1].removesuffix(".py"), key[1]))
        return real(project, key, deps)

    monkeypatch.setattr(packet_kinds, "_read", counted)
    return read


def _kind(pkg, module: str, name: str, deps: list | None = None) -> str:
    return packet_imports.name_kind(ProjectIndex(), str(pkg / f"{module}.py"), name, [] if deps is None else deps)


def _fresh_kinds(pkg, asked: list[tuple[str, str]]) -> list[str]:
    """What a run that knows nothing answers."""
    saved = dict(packet_kinds._KINDS)
    packet_kinds._KINDS.clear()
    try:
        return [_kind(pkg, module, name) for module, name in asked]
    finally:
        packet_kinds._KINDS.clear()
        packet_kinds._KINDS.update(saved)


def test_a_cycle_is_not_read_again_for_an_edit_of_a_module_it_only_used_a_name_of(tmp_path, fresh, readings):
    pkg = old_package(tmp_path, **RING, leaf=LEAF_NONE)
    assert [_kind(pkg, "b", "OP"), _kind(pkg, "a", "OP")] == ["", ""]
    assert ("leaf", "LEAF") in readings
    readings.clear()
    old_file(pkg / "leaf.py", LEAF_NONE_EDITED)
    deps: list = []
    assert [_kind(pkg, "b", "OP", deps), _kind(pkg, "a", "OP")] == ["", ""]
    assert readings == [("leaf", "LEAF")]  # the ring's names are not read again
    # What a check records still names every module the answer rests on, the leaf's included.
    assert {str(pkg / f"{m}.py") for m in ("a", "b", "leaf")} <= {d[0] for d in deps}


@pytest.mark.parametrize(("before", "after"), [(LEAF_NONE, LEAF_PACKET), (LEAF_PACKET, LEAF_NONE)])
def test_an_edit_changing_the_kind_a_cycle_used_reads_the_cycle_again(tmp_path, fresh, readings, before, after):
    # Loud: the leaf now binds a packet, and so does the ring. Quiet: the packet the ring
    # held only through the leaf is gone (the ring is no packet of its own).
    pkg = old_package(tmp_path, **RING, leaf=before)
    asked = [("b", "OP"), ("a", "OP")]
    first = [_kind(pkg, m, n) for m, n in asked]
    assert first == ([PACKET, PACKET] if before == LEAF_PACKET else ["", ""])
    readings.clear()
    old_file(pkg / "leaf.py", after)
    now = [_kind(pkg, m, n) for m, n in asked]
    assert now == ([PACKET, PACKET] if after == LEAF_PACKET else ["", ""]) == _fresh_kinds(pkg, asked)
    assert {("a", "OP"), ("b", "OP")} <= set(readings)


def test_an_edit_inside_the_cycle_reads_the_cycle_again(tmp_path, fresh, readings):
    pkg = old_package(tmp_path, **RING, leaf=LEAF_NONE)
    assert _kind(pkg, "b", "OP") == ""
    readings.clear()
    old_file(pkg / "a.py", RING["a"] + "OTHER = 1\n")  # the same answers, a module of the ring
    assert _kind(pkg, "b", "OP") == ""
    assert {("a", "OP"), ("b", "OP")} <= set(readings)
    readings.clear()
    old_file(pkg / "a.py", RING["a"].replace("OP = LEAF", "import torch\nOP = torch.ops.aten.relu"))
    assert [_kind(pkg, "b", "OP"), _kind(pkg, "a", "OP")] == [PACKET, PACKET]


def test_a_chain_reads_only_the_name_whose_module_was_edited(tmp_path, fresh, readings):
    pkg = old_package(tmp_path, **CHAIN, leaf=LEAF_NONE)
    assert _kind(pkg, "top", "NAME") == ""
    readings.clear()
    old_file(pkg / "leaf.py", LEAF_NONE_EDITED)
    assert _kind(pkg, "top", "NAME") == ""
    assert readings == [("leaf", "LEAF")]
    old_file(pkg / "leaf.py", LEAF_PACKET)
    assert _kind(pkg, "top", "NAME") == PACKET == _fresh_kinds(pkg, [("top", "NAME")])[0]


USE = "from pkg.b import OP\n\n\ndef f(node):\n    return node.target == OP\n"


@pytest.fixture
def store(tmp_path, monkeypatch):
    yield from kept_store(tmp_path, monkeypatch, _new_process)


def _gate(pkg) -> bool:
    """One process's import gate for `use.py`, keeping what it learned."""
    use = pkg / "use.py"
    kept_answers.checking(str(use))
    found = packet_imports.may_hold_packet(USE, str(use), ProjectIndex())
    kept_shards.flush()
    return found


def test_a_new_process_takes_the_kept_cycle_while_the_name_it_used_keeps_its_kind(tmp_path, store, readings):
    pkg = old_package(tmp_path, **RING, leaf=LEAF_NONE, use=USE)
    assert _gate(pkg) is False
    old_file(pkg / "leaf.py", LEAF_NONE_EDITED)
    _new_process()
    readings.clear()
    assert _gate(pkg) is False
    assert readings == [("leaf", "LEAF")]  # the ring's answers are taken from the store
    old_file(pkg / "leaf.py", LEAF_PACKET)
    _new_process()
    readings.clear()
    assert _gate(pkg) is True
    assert ("b", "OP") in readings
    kept_answers.use(None)
    _new_process()
    try:
        assert packet_imports.may_hold_packet(USE, str(pkg / "use.py"), ProjectIndex()) is True
    finally:
        kept_answers.use(store)


def test_kept_kinds_name_the_kind_of_each_name_used(tmp_path, store):
    pkg = old_package(tmp_path, **RING, leaf=LEAF_NONE, use=USE)
    _gate(pkg)
    a, b, leaf = (os.path.realpath(pkg / f"{m}.py") for m in ("a", "b", "leaf"))
    kind, trail = store.get_answers(str(pkg / "use.py"))["kinds"][(b, "OP")]
    assert kind == ""
    # `OP = LEAF` in a.py: a's name LEAF (imported from the leaf, read outside the ring), as "".
    assert ((a, "LEAF"), "", "kind") in trail
    assert {entry[0] for entry in trail if len(entry) == 4} == {a, b}  # the ring's own modules
    kind, trail = store.get_answers(str(pkg / "use.py"))["kinds"][(a, "LEAF")]
    assert ((leaf, "LEAF"), "", "kind") in trail
