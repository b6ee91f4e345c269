"""The directory of a run's own (`run_scratch`): in memory where the temporary directory is the
system's default and `/dev/shm` is there, else where the user's temporary directory is."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import pytest

from qlint import run_scratch
from qlint.analysis.names.project import ProjectIndex
from qlint.settings import Settings
from qlint.summary_cache import summary_store

_ENV = ("TMPDIR", "TEMP", "TMP")
linux_memory = pytest.mark.skipif(
    sys.platform != "linux" or not os.access("/dev/shm", os.W_OK | os.X_OK) or not os.path.isdir("/tmp"),
    reason="needs Linux's /dev/shm and /tmp",
)


@pytest.fixture
def default_tmp(monkeypatch):
    """The temporary directory as `tempfile` finds it with no environment variable set: /tmp."""
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", None)


@linux_memory
def test_a_parallel_run_without_cache_keeps_its_summaries_in_memory(tmp_path, default_tmp):
    with summary_store(Settings(root=tmp_path), False, shared=True):
        directory = ProjectIndex.store.directory
        assert directory.parent == type(directory)("/dev/shm") and directory.is_dir()
    assert not directory.exists()


@linux_memory
def test_a_temporary_directory_the_user_named_is_kept_to(tmp_path, default_tmp, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert run_scratch.memory_base() is None
    made = run_scratch.run_directory("qlint-test-")
    assert os.path.dirname(made) == str(tmp_path)
    monkeypatch.setenv("TMPDIR", "/tmp")  # /tmp named on purpose: kept to as well
    assert run_scratch.memory_base() is None
    monkeypatch.delenv("TMPDIR")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # as `tempfile.tempdir = ...` chooses it
    assert run_scratch.memory_base() is None


@linux_memory
def test_without_a_usable_memory_directory_the_temporary_directory_serves(tmp_path, default_tmp, monkeypatch):
    assert run_scratch.memory_base() == "/dev/shm"
    monkeypatch.setattr(run_scratch, "_MEMORY", str(tmp_path / "absent"))
    assert run_scratch.memory_base() is None
    monkeypatch.setattr(run_scratch, "_MEMORY", "/dev/shm")
    real = tempfile.mkdtemp

    def refused(prefix=None, dir=None, **kwargs):
        if dir == "/dev/shm":
            raise OSError(28, "No space left on device")
        return real(prefix=prefix, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkdtemp", refused)
    made = run_scratch.run_directory("qlint-test-")
    try:
        assert os.path.dirname(made) == tempfile.gettempdir() == "/tmp"
    finally:
        shutil.rmtree(made, ignore_errors=True)
