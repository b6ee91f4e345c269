"""What an imported name is bound to (`packet_imports.name_kind`: a packet, a namespace,
an ops root or nothing), the answer QL101/QL102's import triggers read from other modules,
is kept between runs (`kept_answers`) like the helper search's answers: a new process takes
it only while every module it was read from has the same content and dotted name and every
module lookup made on the way finds the same file; else it reads the modules again, and the
gate answers as a run without the store does."""

from __future__ import annotations

import os
import time

import pytest

from qlint.analysis.graphs import kept_answers, kept_shards, kept_state, packet_imports, packet_kinds, packet_modules
from qlint.analysis.names import content_keys
from qlint.analysis.names.project import ProjectIndex
from tests.conftest import kept_store, old_file, old_package

PACKET = "import torch\n\nOPS = torch.ops.aten.relu\n"
NOT_A_PACKET = "OPS = 1\n"
# The same length as PACKET: only the content hash tells them apart once the mtime moves.
SAME_SIZE = "import torch\n\nOPS = torch.opz.aten.relu\n"
USE = "from pkg.ops_table import OPS\n\n\ndef f(node):\n    return node.target == OPS\n"


def _new_process() -> None:
    """Forget what this process learned, as a new `qlint` run starts without it."""
    packet_kinds._KINDS.clear()
    packet_modules._MODULES.clear()
    content_keys._DIGESTS.clear()
    kept_answers.forget()


@pytest.fixture
def store(tmp_path, monkeypatch):
    yield from kept_store(tmp_path, monkeypatch, _new_process)


def _package(tmp_path, ops_table: str | None):
    modules = {} if ops_table is None else {"ops_table": ops_table}
    pkg = old_package(tmp_path, **modules, use=USE)
    return pkg, pkg / "use.py"


def _gate(use) -> bool:
    """One run's import gate for the edited `use.py`, and what it keeps (in its shard, as
    when `check_source` asks it)."""
    kept_answers.checking(str(use))
    found = packet_imports.may_hold_packet(USE, str(use), ProjectIndex())
    kept_shards.flush()
    return found


def _without_store(use) -> bool:
    kept_answers.use(None)
    _new_process()
    try:
        return packet_imports.may_hold_packet(USE, str(use), ProjectIndex())
    finally:
        _new_process()
        kept_answers.use(ProjectIndex.store)


def _taken(ops_table) -> list[bool]:
    """Whether the kind of `OPS` came from the store (True) or was read here (False)."""
    key = (os.path.realpath(ops_table), "OPS")
    return [id(v) in kept_state.STATE.taken for k, v in packet_kinds._KINDS.items() if k == key]


def test_a_new_process_takes_the_kind_an_earlier_run_kept(tmp_path, store):
    pkg, use = _package(tmp_path, NOT_A_PACKET)
    assert _gate(use) is False
    assert _taken(pkg / "ops_table.py") == [False]
    _new_process()
    assert _gate(use) is False
    assert _taken(pkg / "ops_table.py") == [True]


def test_a_kept_packet_opens_the_gate(tmp_path, store):
    pkg, use = _package(tmp_path, PACKET)
    assert _gate(use) is True
    _new_process()
    assert _gate(use) is True
    assert _taken(pkg / "ops_table.py") == [True]


def test_a_module_that_now_binds_a_packet_is_read_again(tmp_path, store):
    pkg, use = _package(tmp_path, NOT_A_PACKET)
    assert _gate(use) is False
    old_file(pkg / "ops_table.py", PACKET)
    _new_process()
    assert _gate(use) is True
    assert _taken(pkg / "ops_table.py") == [False]
    assert _without_store(use) is True


def test_a_module_changed_to_the_same_size_is_read_again(tmp_path, store):
    assert len(SAME_SIZE) == len(PACKET)
    pkg, use = _package(tmp_path, SAME_SIZE)
    assert _gate(use) is False
    old_file(pkg / "ops_table.py", PACKET)
    _new_process()
    assert _gate(use) is True == _without_store(use)


def test_a_touched_module_keeps_its_kind(tmp_path, store):
    pkg, use = _package(tmp_path, PACKET)
    assert _gate(use) is True
    old_file(pkg / "ops_table.py", PACKET)  # rewritten as it was: a new mtime, the same hash
    _new_process()
    assert _gate(use) is True
    assert _taken(pkg / "ops_table.py") == [True]


def test_a_module_that_now_shadows_the_one_found_is_read(tmp_path, store):
    # `pkg.ops_table` was a package binding no packet; a module file of the same name, made
    # later, is what the lookup finds now, and it binds one. The kind of `OPS` in the
    # package's `__init__.py` still holds: the lookup in the trail of the name the file
    # imports from `pkg.ops_table` is what changed.
    pkg = tmp_path / "pkg"
    (pkg / "ops_table").mkdir(parents=True)
    old_file(pkg / "__init__.py", "")
    old_file(pkg / "ops_table" / "__init__.py", NOT_A_PACKET)
    old_file(pkg / "reexport.py", "from pkg.ops_table import OPS\n")
    use = old_file(pkg / "use.py", USE.replace("pkg.ops_table", "pkg.reexport"))
    text = use.read_text()

    def gate() -> bool:
        found = packet_imports.may_hold_packet(text, str(use), ProjectIndex())
        kept_shards.flush()
        return found

    assert gate() is False
    old_file(pkg / "ops_table.py", PACKET)
    _new_process()
    assert gate() is True
    kept_answers.use(None)
    _new_process()
    try:
        assert packet_imports.may_hold_packet(text, str(use), ProjectIndex()) is True
    finally:
        kept_answers.use(store)


def test_a_module_found_nowhere_then_made_is_read(tmp_path, store):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    old_file(pkg / "__init__.py", "")
    old_file(pkg / "reexport.py", "from pkg.ops_table import OPS\n")
    use = old_file(pkg / "use.py", USE.replace("pkg.ops_table", "pkg.reexport"))
    text = use.read_text()
    assert packet_imports.may_hold_packet(text, str(use), ProjectIndex()) is False
    kept_shards.flush()
    old_file(pkg / "ops_table.py", PACKET)
    _new_process()
    assert packet_imports.may_hold_packet(text, str(use), ProjectIndex()) is True


def test_kinds_read_from_a_just_modified_module_are_not_kept(tmp_path, store):
    pkg, use = _package(tmp_path, NOT_A_PACKET)
    (pkg / "ops_table.py").write_text(NOT_A_PACKET)
    now = time.time_ns()
    os.utime(pkg / "ops_table.py", ns=(now, now))
    assert _gate(use) is False
    _new_process()
    assert _gate(use) is False
    assert _taken(pkg / "ops_table.py") == [False]


def test_kept_kinds_name_the_modules_and_lookups_read(tmp_path, store):
    pkg, use = _package(tmp_path, PACKET)
    _gate(use)
    table = os.path.realpath(pkg / "ops_table.py")
    kind, trail = store.get_answers(str(use))["kinds"][(table, "OPS")]
    assert kind == packet_imports.PACKET
    assert (table, content_keys.content_key({}, table), content_keys.digest({}, table), "pkg.ops_table") in trail


def test_the_in_process_memo_checks_lookups_too(tmp_path):
    # An editor's process: the kind of a re-exported name is remembered with the lookup it
    # made; a module made later where the lookup went is read.
    pkg = tmp_path / "pkg"
    (pkg / "ops_table").mkdir(parents=True)
    old_file(pkg / "__init__.py", "")
    old_file(pkg / "ops_table" / "__init__.py", NOT_A_PACKET)
    old_file(pkg / "reexport.py", "from pkg.ops_table import OPS\n")
    use = old_file(pkg / "use.py", USE.replace("pkg.ops_table", "pkg.reexport"))
    text = use.read_text()
    _new_process()
    try:
        assert packet_imports.may_hold_packet(text, str(use), ProjectIndex()) is False
        old_file(pkg / "ops_table.py", PACKET)
        assert packet_imports.may_hold_packet(text, str(use), ProjectIndex()) is True
    finally:
        _new_process()


# -- what a run over many files keeps for the first check of one file (`kept_state.RUN`) ------


def _tree_gate(use) -> bool:
    """The gate as a run over many files asks it (it reads no answer, writes the small tables
    in the askers' shards and the name kinds in the shard `RUN`), then that run's end."""
    kept_answers.use(ProjectIndex.store, only_small=True)
    try:
        kept_answers.checking(str(use))
        found = packet_imports.may_hold_packet(USE, str(use), ProjectIndex())
        kept_shards.flush()
    finally:
        _new_process()
        kept_answers.use(ProjectIndex.store)
    return found


def test_a_tree_run_keeps_the_kinds_for_the_first_check_of_one_file(tmp_path, store):
    pkg, use = _package(tmp_path, NOT_A_PACKET)
    assert _tree_gate(use) is False
    table = os.path.realpath(pkg / "ops_table.py")
    assert store.get_answers(str(use)) is None  # the file's own shard: nothing of the kinds
    assert set(store.get_answers(kept_state.RUN)["kinds"]) == {table}  # one group, the module's
    assert _gate(use) is False
    assert _taken(pkg / "ops_table.py") == [True]
    # Taken, it is written in the file's shard too: the next check reads that alone.
    assert (table, "OPS") in store.get_answers(str(use))["kinds"]


def test_a_kept_packet_of_a_tree_run_opens_the_gate(tmp_path, store):
    pkg, use = _package(tmp_path, PACKET)
    assert _tree_gate(use) is True
    assert _gate(use) is True
    assert _taken(pkg / "ops_table.py") == [True]


def test_a_module_changed_since_the_tree_run_is_read_again(tmp_path, store):
    pkg, use = _package(tmp_path, NOT_A_PACKET)
    assert _tree_gate(use) is False
    old_file(pkg / "ops_table.py", PACKET)
    assert _gate(use) is True
    assert _taken(pkg / "ops_table.py") == [False]
    assert _without_store(use) is True


def test_a_check_of_one_file_decodes_only_the_groups_it_asks(tmp_path, store, monkeypatch):
    # Two modules' answers in the run's shard; the check asks about one of them.
    pkg, use = _package(tmp_path, NOT_A_PACKET)
    old_file(pkg / "more.py", NOT_A_PACKET)
    other = old_file(pkg / "other.py", USE.replace("pkg.ops_table", "pkg.more"))
    assert _tree_gate(use) is False
    kept_answers.use(ProjectIndex.store, only_small=True)
    kept_answers.checking(str(other))
    assert packet_imports.may_hold_packet(other.read_text(), str(other), ProjectIndex()) is False
    kept_shards.flush()  # a second worker of the run: merged into the same shard
    _new_process()
    kept_answers.use(store)
    groups = store.get_answers(kept_state.RUN)["kinds"]
    assert set(groups) == {os.path.realpath(pkg / "ops_table.py"), os.path.realpath(pkg / "more.py")}
    assert _gate(use) is False
    assert list(kept_state.STATE.run_groups) == [("kinds", os.path.realpath(pkg / "ops_table.py"))]


def test_a_damaged_group_of_the_run_shard_is_as_if_absent(tmp_path, store):
    pkg, use = _package(tmp_path, NOT_A_PACKET)
    assert _tree_gate(use) is False
    table = os.path.realpath(pkg / "ops_table.py")
    store.put_answers(kept_state.RUN, {"kinds": {table: b"\x00not marshal"}})
    assert _gate(use) is False
    assert _taken(pkg / "ops_table.py") == [False]


def test_the_run_shard_starts_again_past_its_bytes(tmp_path, store, monkeypatch):
    pkg, use = _package(tmp_path, NOT_A_PACKET)
    store.put_answers(kept_state.RUN, {"kinds": {"/gone.py": b"x" * 64}})
    monkeypatch.setattr(kept_shards, "_RUN_BYTES", 48)
    assert _tree_gate(use) is False
    assert set(store.get_answers(kept_state.RUN)["kinds"]) == {os.path.realpath(pkg / "ops_table.py")}
    monkeypatch.setattr(kept_shards, "_RUN_BYTES", 1 << 20)
    store.put_answers(kept_state.RUN, {"kinds": {"/gone.py": b"x" * 64}})
    assert _tree_gate(use) is False
    assert len(store.get_answers(kept_state.RUN)["kinds"]) == 2  # merged
