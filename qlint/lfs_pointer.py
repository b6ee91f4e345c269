"""Git LFS pointers: the three lines git keeps where a large file's content would be.

A checkout without Git LFS (`actions/checkout` without `lfs: true`, `GIT_LFS_SKIP_SMUDGE=1`,
a mirror that stores blobs only) leaves the pointer in place of the notebook or module. qlint
cannot check content that is not there, so the file is still reported (QL001: a file it could
not check must not pass as clean), but as what it is, with the way to get the content, instead
of "notebook is not valid JSON: Expecting value" at line 1 (santidrj/model-quantization-
aggregation's five notebooks; ruff-action's users met the same report from ruff).

Recognised as git-lfs reads a pointer (its specification, v1): under 1024 bytes, a first line
`version https://git-lfs.github.com/spec/v1` (or the pre-release `hawser` URL), then the
`key value` lines git-lfs writes (`ext-N-name` extensions, `oid`, `size`, each once, keys in
ascending order), with an `oid sha256:` of 64 lowercase hexadecimal digits and a decimal
`size`. A file that only mentions the URL, or holds any other line, is not a pointer.
"""

from __future__ import annotations

MAX_SIZE = 1024  # git-lfs does not read a larger file as a pointer
_VERSIONS = (b"version https://git-lfs.github.com/spec/v1", b"version https://hawser.github.com/spec/v1")
_HEX = b"0123456789abcdef"

HELP = "fetch the content (`git lfs pull`; in CI, check out with LFS) to check it, or exclude the file"


def message(what: str) -> str:
    """QL001's message for a pointer standing where a `what` ("notebook", "module") should be."""
    return f"a Git LFS pointer, not the {what}: its content is not checked out, so it cannot be checked"


def is_lfs_pointer(data: bytes | str) -> bool:
    """Whether these bytes (or this text) are a Git LFS pointer file."""
    raw = data.encode("utf-8", "replace") if isinstance(data, str) else data
    if len(raw) >= MAX_SIZE or not raw.startswith(b"version https://"):
        return False
    lines = [line.rstrip(b"\r") for line in raw.rstrip(b"\r\n").split(b"\n")]
    if lines[0] not in _VERSIONS:
        return False
    fields = {}
    for line in lines[1:]:
        key, space, value = line.partition(b" ")
        # The keys git-lfs writes, each once, in ascending order after `version`.
        known = key in (b"oid", b"size") or key.startswith(b"ext-")
        if not space or not value or not known or key in fields or (fields and key < max(fields)):
            return False
        fields[key] = value
    oid, size = fields.get(b"oid", b""), fields.get(b"size", b"")
    digest = oid[len(b"sha256:") :]
    return oid.startswith(b"sha256:") and len(digest) == 64 and not digest.strip(_HEX) and size.isdigit()
