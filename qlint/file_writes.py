"""Writing a fixed file back: only over the content that was fixed, never half-written, and
keeping what the file is (owner, group, mode, hard links, the path a symlink points to).

A codemod runs across repositories while people keep working in them, so the last step
before replacing a file compares its current bytes with the bytes the fix started from: an
edit made meanwhile (even one that keeps size and mtime) wins, and the file is skipped.

Two ways to write, as editors choose between them (vim's `backupcopy=auto`):

- rename: a temp file beside the original gets the new bytes, its mode, owner, group and
  extended attributes (ACLs), is fsynced and renamed over the original. A crash leaves
  the old or the new file whole.
- in place, when a rename would change what the file is: it has other hard links (a rename
  gives the path a new inode and the other names keep the old text), or its owner cannot be
  given to a new file (chown needs privileges we may not have). The original bytes are
  first saved in a backup beside it, the space for the new bytes is reserved before any byte
  is overwritten (a full disk fails before the write, not halfway), then the inode is
  overwritten, truncated and fsynced, and the backup removed. If the overwrite fails, the
  original bytes are written back; if even that fails, the error names the backup.
"""

from __future__ import annotations

import contextlib
import os
import tempfile

from qlint.source import detect_encoding


class ChangedOnDisk(Exception):
    """The file no longer holds the bytes the fix was computed from."""


def encode_like(text: str, original: bytes) -> bytes:
    """`text` in the encoding the original bytes declare (PEP 263), with its BOM if it had one."""
    encoding = detect_encoding(original)
    data = text.encode("utf-8" if encoding == "utf-8-sig" else encoding)
    if original.startswith(b"\xef\xbb\xbf"):
        data = b"\xef\xbb\xbf" + data
    return data


def replace_file(path: str, text: str, original: bytes) -> None:
    """Replace `path` (which held `original` when it was read) with `text`.

    Raises ChangedOnDisk when the file changed since, OSError when it cannot be written;
    either way the file is as it was.
    """
    data = encode_like(text, original)
    real = os.path.realpath(path)
    st = os.stat(real)
    if st.st_nlink > 1 or not _can_give_owner(st):
        _write_in_place(real, data, original)
    else:
        _write_by_rename(real, data, original, st)


def _current_bytes(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def _check_unchanged(path: str, original: bytes) -> None:
    if _current_bytes(path) != original:
        raise ChangedOnDisk(path)


def _can_give_owner(st: os.stat_result) -> bool:
    """Can a new file get this owner and group? (root can; others only their own uid and groups)"""
    if not hasattr(os, "geteuid"):
        return True
    if os.geteuid() == 0:
        return True
    return st.st_uid == os.geteuid() and (st.st_gid == os.getegid() or st.st_gid in os.getgroups())


def _write_by_rename(real: str, data: bytes, original: bytes, st: os.stat_result) -> None:
    directory = os.path.dirname(real)
    fd, tmp = tempfile.mkstemp(prefix=".qlint-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if hasattr(os, "fchown"):
                os.fchown(fh.fileno(), st.st_uid, st.st_gid)
            os.fchmod(fh.fileno(), st.st_mode & 0o7777)  # after chown, which may clear setuid bits
            _copy_xattrs(real, fh.fileno())
            os.fsync(fh.fileno())
        _check_unchanged(real, original)  # the last moment before the replace
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)


def _copy_xattrs(source: str, fd: int) -> None:
    """Extended attributes (POSIX ACLs, SELinux labels, user tags) go with the file too."""
    if not hasattr(os, "listxattr"):
        return
    try:
        names = os.listxattr(source)
    except OSError:
        return  # the file system has none
    for name in names:
        with contextlib.suppress(OSError):  # e.g. a security label we may not set
            os.setxattr(fd, name, os.getxattr(source, name))


def _write_in_place(real: str, data: bytes, original: bytes) -> None:
    directory = os.path.dirname(real)
    fd, backup = tempfile.mkstemp(prefix=".qlint-", suffix=".orig", dir=directory)
    with os.fdopen(fd, "wb") as fh:
        fh.write(original)
        fh.flush()
        os.fsync(fh.fileno())
    keep_backup = False
    try:
        with open(real, "r+b") as fh:
            _check_unchanged(real, original)
            if len(data) > len(original) and hasattr(os, "posix_fallocate"):
                os.posix_fallocate(fh.fileno(), 0, len(data))  # ENOSPC here changes nothing
            try:
                _overwrite(fh, data)
            except BaseException as exc:
                try:
                    _overwrite(fh, original)
                except OSError:
                    keep_backup = True
                    raise OSError(
                        getattr(exc, "errno", None) or 0, f"{exc}; the original is saved in {backup}"
                    ) from exc
                raise
    finally:
        if not keep_backup:
            with contextlib.suppress(OSError):
                os.unlink(backup)


def _overwrite(fh, data: bytes) -> None:
    fh.seek(0)
    fh.write(data)
    fh.truncate(len(data))
    fh.flush()
    os.fsync(fh.fileno())


def _fsync_directory(directory: str) -> None:
    """Make the rename itself durable (a crash right after must not bring the old file back)."""
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
