"""One content keying for the project index and the facts that outlive a check."""

from __future__ import annotations

import builtins
import hashlib

from qlint.analysis.graphs import file_keys
from qlint.analysis.names.project import ProjectIndex
from tests.conftest import write_package


def test_a_module_the_index_loaded_is_not_read_again_for_its_digest(tmp_path, monkeypatch):
    pkg = write_package(tmp_path, "pkg", consts="OPS = (1, 2)\n", user="from .consts import OPS\n")
    project = ProjectIndex()
    assert project.module_scope("pkg.consts", str(pkg / "user.py")) is not None
    opened = []
    real_open = builtins.open
    monkeypatch.setattr(builtins, "open", lambda f, *a, **k: opened.append(str(f)) or real_open(f, *a, **k))
    consts = str(pkg / "consts.py")
    expected = hashlib.sha256(b"OPS = (1, 2)\n").hexdigest()
    assert file_keys.digest(project, consts) == project.digest(consts) == expected
    assert opened == []


def test_the_index_and_the_facts_key_a_buffer_alike(tmp_path):
    pkg = write_package(tmp_path, "pkg", consts="OPS = (1, 2)\n")
    consts = str(pkg / "consts.py")
    project = ProjectIndex()
    on_disk = file_keys.content_key(project, consts)
    assert on_disk == project.content_key(consts) and on_disk[0] != "overlay"
    project.update(consts, "OPS = (3,)\n")
    assert file_keys.content_key(project, consts) == project.content_key(consts) != on_disk
    assert project.digest(consts) == hashlib.sha256(b"OPS = (3,)\n").hexdigest()
    assert file_keys.content_key(project, str(pkg / "absent.py")) is None
    assert project.digest(str(pkg / "absent.py")) == ""


def test_reads_are_recorded_only_where_someone_keeps_them(tmp_path, monkeypatch):
    # A `--no-cache` run drops what each check depended on: the modules a fact was read from
    # are not recorded for it (nor their digests looked up: the helper search records its
    # trails for every file its import trigger asks about). A tracker of reads still gets them.
    pkg = write_package(tmp_path, "pkg", consts="OPS = (1, 2)\n", user="from .consts import OPS\n")
    consts, user = str(pkg / "consts.py"), str(pkg / "user.py")
    deps = ((consts, file_keys.content_key(ProjectIndex(), consts)),)
    hashed: list[str] = []
    real = ProjectIndex.digest
    monkeypatch.setattr(ProjectIndex, "digest", lambda self, p, key=None: hashed.append(p) or real(self, p, key))
    with ProjectIndex.dependencies_unwanted():
        project = ProjectIndex()
        file_keys.record(project, user, deps)
        assert project.dependencies_of(user) == {} and hashed == []
        project.reads = []
        file_keys.record(project, user, deps)
        assert project.reads == [(consts, real(project, consts))] and hashed == [consts]
    project = ProjectIndex()
    file_keys.record(project, user, deps)
    assert project.dependencies_of(user) == {consts: real(project, consts)}


def test_the_helper_search_records_nothing_where_no_one_keeps_it(tmp_path):
    from qlint.analysis.graphs.forwarding_trails import record
    from qlint.analysis.graphs.insertions import wrapper_search

    pkg = write_package(tmp_path, "pkg", consts="OPS = (1, 2)\n", user="from .consts import OPS\n")
    consts, user = str(pkg / "consts.py"), str(pkg / "user.py")
    with ProjectIndex.dependencies_unwanted():
        project = ProjectIndex()
        search = wrapper_search(project, None, user)
        search.project = project
        record(search, ((consts, file_keys.content_key(project, consts)),))
        assert project.dependencies_of(user) == {}
    project = ProjectIndex()
    search = wrapper_search(project, None, user)
    search.project = project
    record(search, ((consts, file_keys.content_key(project, consts)),))
    assert project.dependencies_of(user) == {consts: project.digest(consts)}
