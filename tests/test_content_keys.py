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
