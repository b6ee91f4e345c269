"""The linter side of the runtime checker: requests, fix parsing, the verdict cache, skips.

None of this needs torch, and the linter process must never import it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from qlint.diagnostic import Diagnostic, Range, RuntimeVerdict
from qlint.runtime.cache import VerdictCache, checker_fingerprint, installed_versions
from qlint.runtime.checks.overload_edits import FixSpec, parse_fix
from qlint.runtime.client import RuntimeChecker
from qlint.runtime.request import build_request, fix_payload, request_key
from tests.conftest import lint
from tests.runtime_support import finding

ROOT = Path(__file__).resolve().parents[1]


def test_fix_edits_are_relative_to_the_finding():
    src = """\
    import torch
    from torch.fx import Node


    def f(node: Node):
        return node.target == torch.ops.quantized_decomposed.dequantize_per_channel
    """
    (diag,) = lint(src, select=("QL101",))
    payload = fix_payload(diag)
    assert payload["edits"] == [
        {
            "where": "append",
            "start": [0, len("torch.ops.quantized_decomposed.dequantize_per_channel")],
            "end": [0, len("torch.ops.quantized_decomposed.dequantize_per_channel")],
            "content": ".default",
        }
    ]
    moved = lint("\n\n# a comment\n" + textwrap.dedent(src).replace("    return", "        return"), select=("QL101",))
    # Same finding two lines lower and indented further: same request, same cache key.
    assert build_request(moved[0], verify_fix=True) == build_request(diag, verify_fix=True)


@pytest.mark.parametrize(
    ("where", "content", "expected"),
    [
        ("append", ".default", FixSpec(("default",))),
        ("append", ".tensor", FixSpec(("tensor",))),
        ("replace", "qd.dq.default, qd.dq.tensor", FixSpec(("default", "tensor"))),
        ("replace", "torch.ops.x.y, torch.ops.x.y.default", FixSpec(("default",), keeps_packet=True)),
        ("replace", "a.b.default, c.d.default", "is not a list of overloads of one packet"),
        ("replace", "a.b.default,, x", "does not parse"),
        ("other", "model.eval()\n", "is not an overload rewrite"),
        ("append", ".default()", "is not an overload rewrite"),
    ],
)
def test_parse_fix(where, content, expected):
    parsed = parse_fix({"edits": [{"where": where, "content": content, "start": [0, 0], "end": [0, 0]}]})
    if isinstance(expected, FixSpec):
        assert parsed == expected
    else:
        assert isinstance(parsed, str) and expected in parsed


def test_parse_fix_of_real_rule_output():
    src = """\
    import torch

    QD = {torch.ops.quantized_decomposed.dequantize_per_tensor, torch.ops.aten.relu.default}


    def f(node):
        return node.target in QD
    """
    (diag,) = lint(src, select=("QL101",))
    spec = parse_fix(build_request(diag, verify_fix=True)["fix"])
    assert isinstance(spec, FixSpec) and not spec.keeps_packet
    assert "default" in spec.overloads


def test_cache_key_covers_versions_and_checker():
    request = build_request(finding("aten", "relu", fix=".default"), verify_fix=True)
    base = request_key(request, {"torch": "2.13.0"}, "abc")
    assert base == request_key(dict(request), {"torch": "2.13.0"}, "abc")
    assert base != request_key(request, {"torch": "2.14.0"}, "abc")
    assert base != request_key(request, {"torch": "2.13.0"}, "abd")
    assert base != request_key(build_request(finding("aten", "relu", fix=".default"), verify_fix=False), {}, "abc")


def test_verdict_cache_round_trip(tmp_path):
    cache = VerdictCache(tmp_path)
    verdict = RuntimeVerdict("confirmed", "matches 0 of 4", True, 0.25)
    cache.put("ab" * 32, verdict)
    assert cache.get("ab" * 32) == verdict
    cache.put("cd" * 32, RuntimeVerdict("inconclusive", "worker died", None, 1.0))
    assert cache.get("cd" * 32) is None
    (tmp_path / "ef").mkdir()
    (tmp_path / "ef" / f"{'ef' * 32}.json").write_text("{not json")
    assert cache.get("ef" * 32) is None


def test_a_cached_verdict_needs_no_worker(tmp_path):
    diag = finding("aten", "relu", fix=".default")
    versions = installed_versions()
    first = RuntimeChecker(tmp_path, versions=versions)
    key = request_key(build_request(diag, verify_fix=True), versions, checker_fingerprint())
    first.cache.put(key, RuntimeVerdict("confirmed", "from an earlier run", True, 1.5))
    checker = RuntimeChecker(tmp_path, versions=versions, worker_argv=[sys.executable, "-c", "raise SystemExit(9)"])
    v = checker.verdict(diag, verify_fix=True)
    assert v == RuntimeVerdict("confirmed", "from an earlier run", True, 1.5)
    assert checker.worker.proc is None


def test_rules_without_a_runtime_check_are_skipped_by_name(tmp_path):
    diag = Diagnostic("QL001", "syntax-error", "SyntaxError", "x.py", Range.of(1, 0, 1, 0))
    with RuntimeChecker(tmp_path) as checker:
        v = checker.verdict(diag)
        assert v.verdict == "skipped" and v.evidence == "QL001 has no runtime check yet"
        assert checker.worker.proc is None


def test_the_linter_side_never_imports_torch():
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        import qlint.runtime
        from qlint.runtime import attach_verdicts
        from qlint.runtime.client import RuntimeChecker
        from qlint.runtime.checks.overload_edits import parse_fix
        from qlint.diagnostic import Diagnostic, Range
        from qlint.settings import Settings
        import tempfile, pathlib
        settings = Settings(root=pathlib.Path(tempfile.mkdtemp()))
        d = Diagnostic("QL002", "unused-noqa", "m", "x.py", Range.of(1, 0, 1, 0))
        (out,) = attach_verdicts([d], settings, verify_fixes=True)
        assert out.runtime.verdict == "skipped", out.runtime
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "torchao", "executorch")))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_without_torch_every_finding_is_skipped(tmp_path):
    """`python -S`: no site-packages, so neither torch nor torchao is installed there."""
    code = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {str(ROOT)!r})
        from qlint.runtime.client import RuntimeChecker
        from tests.runtime_support import finding
        checker = RuntimeChecker(None)
        v = checker.verdict(finding("aten", "relu", fix=".default"))
        print(json.dumps([v.verdict, v.evidence, checker.worker.proc is None]))
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, env=env, check=True)
    verdict, evidence, no_worker = json.loads(out.stdout)
    assert verdict == "skipped"
    # `-S` hides the installed metadata too, so the distribution's name may read as `qlint` there.
    assert re.fullmatch(r'torch and torchao not installed \(pip install "[\w.-]+\[runtime\]"\)', evidence), evidence
    assert no_worker


def _stored(tmp_path):
    cache = VerdictCache(tmp_path)
    key = "ab" * 32
    cache.put(key, RuntimeVerdict("confirmed", "matches 0 of 4", True, 0.25))
    return cache, key, cache._path(key)


@pytest.mark.parametrize("keep", [0, 1, 10, -1])
def test_truncated_verdict_is_a_miss(tmp_path, keep):
    cache, key, path = _stored(tmp_path)
    path.write_bytes(path.read_bytes()[:keep])
    assert cache.get(key) is None


def test_flipped_bytes_in_a_verdict_are_a_miss(tmp_path):
    import random

    cache, key, path = _stored(tmp_path)
    good = path.read_bytes()
    rng = random.Random(8)
    served = []
    for _ in range(200):
        data = bytearray(good)
        pos = rng.randrange(len(data))
        data[pos] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(data))
        hit = cache.get(key)
        if hit is not None:
            served.append(hit)
    # A flip in JSON whitespace or a key's quoting may leave the record intact; a changed
    # value never gets through.
    assert all(h == RuntimeVerdict("confirmed", "matches 0 of 4", True, 0.25) for h in served)


@pytest.mark.parametrize(
    ("field", "value"), [("verdict", "maybe"), ("fix_verified", "yes"), ("seconds", "fast"), ("evidence", None)]
)
def test_a_verdict_record_with_a_wrong_value_is_a_miss(tmp_path, field, value):
    from qlint.runtime import cache as runtime_cache

    cache, key, path = _stored(tmp_path)
    record = json.loads(path.read_text())
    record[field] = value
    fields = {name: record[name] for name in runtime_cache._FIELDS}
    record["sha256"] = runtime_cache._checksum(key, fields)  # consistent, but not a verdict
    path.write_text(json.dumps(record))
    assert cache.get(key) is None


def test_a_verdict_stored_under_another_key_is_a_miss(tmp_path):
    cache, key, path = _stored(tmp_path)
    other = "cd" * 32
    cache._path(other).parent.mkdir(parents=True, exist_ok=True)
    cache._path(other).write_bytes(path.read_bytes())
    assert cache.get(other) is None and cache.get(key) is not None
