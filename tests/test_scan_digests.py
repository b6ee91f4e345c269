"""The project scan reads modules for their insertions (`project_scan._text`) and used to hash
each one for the dependencies a run records, also in a `--no-cache` run, which records none
(`ProjectIndex.wants_dependencies`): on ao 2.0 of the 3.1 MB a cold run hashed, and past
`short_digests`' budget, OpenSSL's import (~3.4 MiB, ao's peak level with ruff's). It hashes
now only for a run that records, and never a module whose digest is known already; a digest
asked later (`content_keys.digest`) is the file's all the same."""

from __future__ import annotations

import hashlib

from qlint.analysis.graphs import project_scan
from qlint.analysis.names import content_keys
from qlint.analysis.names.project import ProjectIndex

TEXT = b"import torch\n\n\ndef f(gm):\n    gm.graph.call_function(torch.ops.aten.relu, ())\n"


def _module(tmp_path, name="m.py", data=TEXT):
    path = tmp_path / name
    path.write_bytes(data)
    key = content_keys.content_key({}, str(path))
    content_keys.forget_digest(str(path))
    return str(path), key


def _counting(monkeypatch) -> list[int]:
    hashed: list[int] = []
    real = project_scan.content_sha256_hex

    def counted(data: bytes) -> str:
        hashed.append(len(data))
        return real(data)

    monkeypatch.setattr(project_scan, "content_sha256_hex", counted)
    return hashed


def test_a_run_that_records_no_dependencies_does_not_hash_what_it_scans(tmp_path, monkeypatch):
    path, key = _module(tmp_path)
    hashed = _counting(monkeypatch)
    project = ProjectIndex(track_dependents=False)
    with ProjectIndex.dependencies_unwanted():
        assert project_scan._read(project, path, key) == (key, project_scan.UNREAD)
    assert hashed == []
    assert content_keys.known_digest(path, key) is None
    # Asked later, the digest is the file's.
    assert content_keys.digest({}, path, key) == hashlib.sha256(TEXT).hexdigest()


def test_a_run_that_records_them_hashes_each_module_once(tmp_path, monkeypatch):
    path, key = _module(tmp_path)
    other, other_key = _module(tmp_path, "o.py", TEXT + b"# other\n")
    hashed = _counting(monkeypatch)
    project = ProjectIndex(track_dependents=False)
    assert project.wants_dependencies
    assert project_scan._read(project, path, key) == (key, project_scan.UNREAD)
    assert hashed == [len(TEXT)]
    assert content_keys.known_digest(path, key) == hashlib.sha256(TEXT).hexdigest()
    # A module whose digest the index worked out already (its summary) is not hashed again.
    content_keys.remember_digest(other, other_key, hashlib.sha256(TEXT + b"# other\n").hexdigest())
    assert project_scan._read(project, other, other_key) == (other_key, project_scan.UNREAD)
    assert hashed == [len(TEXT)]
