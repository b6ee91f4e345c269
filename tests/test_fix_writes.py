"""`qlint fix` under real conditions: files edited meanwhile, hard links, owners, read-only
directories, files deleted mid-run, and a killed `qlint fix` whose workers must not write."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import qlint.fixes
from qlint.cli import main
from qlint.engine import display_path
from qlint.file_writes import ChangedOnDisk, replace_file
from qlint.runner import MIN_PARALLEL_FILES, run_fix
from qlint.settings import Settings
from tests.snippets import PACKET_MATCHER as PACKET
from tests.snippets import QDQ_USER, QDQ_UTILS

ROOT = Path(__file__).resolve().parents[1]
FIXED = PACKET.replace("aten.relu\n", "aten.relu.default\n")


def settings(tmp_path: Path) -> Settings:
    return Settings(root=tmp_path, cache_dir=tmp_path / ".cache")


@pytest.fixture
def during_fix(monkeypatch):
    """Run `action(path)` right after the fixer computed a file's fixed text."""
    actions = []
    real = qlint.fixes.fix_text

    def fix_text(text, path, *args, **kwargs):
        outcome = real(text, path, *args, **kwargs)
        for action in actions:
            action(path)
        return outcome

    monkeypatch.setattr(qlint.fixes, "fix_text", fix_text)
    return actions.append


# -- item 1: a file edited while `qlint fix` runs is not overwritten --------------------------
def test_file_edited_meanwhile_is_skipped_even_with_same_size_and_mtime(tmp_path, during_fix, capsys):
    src = tmp_path / "m.py"
    src.write_text(PACKET)
    other = tmp_path / "other.py"
    other.write_text(PACKET)
    edited = PACKET.replace("def f(n)", "def g(n)")  # same size

    def edit(path):
        if path.endswith("m.py"):
            st = os.stat(path)
            Path(path).write_text(edited)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime cannot tell

    during_fix(edit)
    code = main(["fix", "--no-cache", "-j1", str(tmp_path)])
    err = capsys.readouterr().err
    assert src.read_text() == edited  # the user's edit wins
    assert other.read_text() == FIXED  # the rest of the run is not affected
    assert f"qlint: {display_path(str(src))}: skipped: changed on disk while fixing\n" in err
    assert "error" not in err
    assert code == 1  # the skipped file's finding remains


def test_skipped_file_keeps_its_findings_and_counts(tmp_path, during_fix):
    (tmp_path / "m.py").write_text(PACKET)
    during_fix(lambda path: Path(path).write_text(PACKET + "\n"))
    run = run_fix([str(tmp_path)], settings(tmp_path), unsafe=False, diff_only=False, jobs=1, use_cache=False)
    (report,) = run.reports
    assert (report.applied, report.changed, report.error) == (0, False, None)
    assert report.notice == "skipped: changed on disk while fixing"
    assert [d.code for d in report.remaining.diagnostics] == ["QL101"]
    assert run.all_errors == []


def test_replace_file_compares_bytes_right_before_replacing(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("a = 1\n")
    with pytest.raises(ChangedOnDisk):
        replace_file(str(path), "a = 2\n", b"a = 0\n")
    assert path.read_text() == "a = 1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]  # no temp file left behind


# -- item 2: owner, group, mode and hard links survive a fix ----------------------------------
def test_hard_links_keep_sharing_the_fixed_text(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(PACKET)
    link = tmp_path / "link.py"
    os.link(src, link)
    inode = os.stat(src).st_ino
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    run = run_fix([str(src)], settings(tmp_path), unsafe=False, diff_only=False, jobs=1, use_cache=False)
    assert run.reports[0].applied == 1 and run.all_errors == []
    assert os.stat(src).st_ino == inode and os.stat(src).st_nlink == 2
    assert link.read_text() == FIXED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "link.py", "m.py"]  # no backup left


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another uid needs root")
def test_owner_group_and_mode_are_kept(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(PACKET)
    os.chown(src, 4321, 8765)
    os.chmod(src, 0o640)
    xattr = hasattr(os, "setxattr")
    if xattr:
        try:
            os.setxattr(src, "user.qlint-test", b"kept")
        except OSError:
            xattr = False  # the file system has no user attributes
    inode = os.stat(src).st_ino
    assert main(["fix", "--no-cache", "-j1", str(src)]) == 0
    st = os.stat(src)
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (4321, 8765, 0o640)
    assert st.st_ino != inode  # a single link: written by rename, so never half-written
    assert src.read_text() == FIXED
    if xattr:
        assert os.getxattr(src, "user.qlint-test") == b"kept"


def test_in_place_write_that_fails_leaves_the_original(tmp_path, monkeypatch):
    import qlint.file_writes as fw

    src = tmp_path / "m.py"
    src.write_text("a = 1\n")
    os.link(src, tmp_path / "link.py")
    calls = []
    real = fw._overwrite

    def failing(fh, data):
        calls.append(data)
        if len(calls) == 1:
            fh.seek(0)
            fh.write(data[:3])  # a partial write, then the disk is full
            raise OSError(28, "No space left on device")
        real(fh, data)

    monkeypatch.setattr(fw, "_overwrite", failing)
    with pytest.raises(OSError, match="No space left"):
        replace_file(str(src), "a = 22222\n", b"a = 1\n")
    assert src.read_text() == "a = 1\n" and (tmp_path / "link.py").read_text() == "a = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.py", "m.py"]


# -- item 8: a write failure is one line, and the file's findings stay ------------------------
@contextlib.contextmanager
def immutable(directory: Path):
    """A directory nobody, root included, can create or rename files in (chattr +i)."""
    if subprocess.run(["chattr", "+i", str(directory)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=True)


def test_read_only_directory_is_one_line_and_keeps_the_findings(tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "m.py").write_text(PACKET)
    (tmp_path / "ok.py").write_text(PACKET)
    with immutable(ro):
        code = main(["fix", "--no-cache", "-j1", str(tmp_path)])
    out, err = capsys.readouterr()
    assert (ro / "m.py").read_text() == PACKET and (tmp_path / "ok.py").read_text() == FIXED
    shown = display_path(str(ro / "m.py"))
    assert err == f"qlint: error: {shown}: cannot write: Operation not permitted\n"
    assert f"{shown}:5:" in out  # its finding is still reported
    assert "Found 1 error (1 fixed, 0 remaining)" not in out
    assert code == 2


def test_file_deleted_mid_fix_is_one_line(tmp_path, during_fix):
    (tmp_path / "gone.py").write_text(PACKET)
    (tmp_path / "kept.py").write_text(PACKET)
    during_fix(lambda path: os.unlink(path) if path.endswith("gone.py") else None)
    run = run_fix([str(tmp_path)], settings(tmp_path), unsafe=False, diff_only=False, jobs=1, use_cache=False)
    gone, kept = sorted(run.reports, key=lambda r: r.path)
    assert gone.error == "cannot write: the file was deleted while fixing"
    assert gone.applied == 0 and [d.code for d in gone.remaining.diagnostics] == ["QL101"]
    assert kept.applied == 1 and (tmp_path / "kept.py").read_text() == FIXED
    assert not (tmp_path / "gone.py").exists()  # not recreated


# -- item 4: a killed `qlint fix` leaves no worker behind and nothing written ------------------
def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "sigterm"])
def test_killed_fix_run_leaves_no_worker_and_writes_nothing(tmp_path, sig):
    body = "".join(f"def f{i}(n):\n    return n.target == torch.ops.aten.relu\n\n\n" for i in range(400))
    files = []
    for i in range(MIN_PARALLEL_FILES * 3):
        path = tmp_path / f"m{i}.py"
        path.write_text("import torch\n\n\n" + body)
        files.append(path)
    before = {p: p.read_bytes() for p in files}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))))
    proc = subprocess.Popen(
        [sys.executable, "-m", "qlint", "fix", "--no-cache", "-j3", str(tmp_path)],  # two workers
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 60
    workers: list[int] = []
    while time.time() < deadline and len(workers) < 2:
        workers = _children(proc.pid)
        time.sleep(0.02)
    assert len(workers) >= 2, "the run did not start a process pool"
    time.sleep(0.5)  # the workers are fixing files now
    assert proc.poll() is None, "the run finished before it could be killed"
    os.kill(proc.pid, sig)
    proc.wait(timeout=30)
    deadline = time.time() + 10
    while time.time() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers), "workers outlived their parent"
    time.sleep(0.5)
    assert {p: p.read_bytes() for p in files} == before  # nothing written after the parent went
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".qlint-")] == []


def test_a_cr_only_file_with_a_coding_cookie_is_written_in_its_encoding(tmp_path):
    path = tmp_path / "latin.py"
    src = (
        "# first\r# -*- coding: latin-1 -*-\rimport torch\r# caf\xe9\r"
        "def f(n):\r    return n.target == torch.ops.aten.relu\r"
    )
    path.write_bytes(src.encode("latin-1"))
    run = run_fix([str(path)], settings(tmp_path), unsafe=False, diff_only=False, jobs=1, use_cache=False)
    assert run.reports[0].applied == 1 and run.all_errors == []
    assert path.read_bytes() == src.replace("aten.relu\r", "aten.relu.default\r").encode("latin-1")


def test_a_cross_file_fix_whose_target_cannot_be_written_leaves_the_finding(tmp_path, capsys):
    from tests.conftest import write_package

    pkg = write_package(tmp_path, "pkg", qdq_utils=QDQ_UTILS, passes=QDQ_USER)
    target = pkg / "qdq_utils.py"
    if subprocess.run(["chattr", "+i", str(target)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        run = run_fix([str(pkg)], settings(tmp_path), unsafe=False, diff_only=False, jobs=1, use_cache=False)
    finally:
        subprocess.run(["chattr", "-i", str(target)], check=True)
    reports = {Path(r.path).name: r for r in run.reports}
    assert reports["qdq_utils.py"].error == "cannot write: Operation not permitted"
    assert target.read_text() == QDQ_UTILS
    site = reports["passes.py"]
    assert site.applied == 0 and [d.code for d in site.remaining.diagnostics] == ["QL101"]
    assert sum(r.applied for r in run.reports) == 0
