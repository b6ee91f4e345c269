"""`short_digests.content_sha256_hex`: the digests `hashlib` gives, by CPython's own SHA-256
while a process has hashed little (a one-file check: OpenSSL's load is ~3 ms of CPU), by
`hashlib` after (a cold run hashes megabytes, 10x faster there)."""

from __future__ import annotations

import hashlib
import subprocess
import sys

from qlint import short_digests


def test_digests_are_hashlibs_on_both_sides_of_the_budget(monkeypatch):
    monkeypatch.setattr(short_digests, "_HASHED", [0])
    sizes = [0, 1, 4096, short_digests._BUILTIN_BUDGET // 2, short_digests._BUILTIN_BUDGET, 3]
    for size in sizes:
        data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
        assert short_digests.content_sha256_hex(data) == hashlib.sha256(data).hexdigest()
    assert short_digests._HASHED[0] <= short_digests._BUILTIN_BUDGET


def test_hashlib_is_loaded_only_past_the_budget():
    code = (
        "import sys\nfrom qlint.short_digests import content_sha256_hex, _BUILTIN_BUDGET\n"
        "content_sha256_hex(b'a' * 1000)\nprint('_hashlib' in sys.modules)\n"
        "content_sha256_hex(b'a' * _BUILTIN_BUDGET)\nprint('_hashlib' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_an_edited_check_of_a_few_hundred_kb_does_not_load_openssl():
    """ExecuTorch's edited qualcomm tests/utils.py hashes its 16 modules (~350 KB): CPython's
    SHA-256 does it for less than `hashlib`'s import would cost (`_BUILTIN_BUDGET`)."""
    code = (
        "import sys\nfrom qlint.short_digests import content_sha256_hex\n"
        "for _ in range(16):\n    content_sha256_hex(b'a' * 25_000)\n"
        "print('_hashlib' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False"]


def test_a_process_about_to_fork_loads_openssl_for_its_children():
    """Workers forked after `load_before_forking` share the parent's OpenSSL (its pages were
    each worker's own when every worker loaded it past the budget), and digests stay hashlib's."""
    code = (
        "import sys, hashlib\nfrom qlint import short_digests\n"
        "short_digests.load_before_forking()\nprint('_hashlib' in sys.modules)\n"
        "print(short_digests.content_sha256_hex(b'abc') == hashlib.sha256(b'abc').hexdigest())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True"]
