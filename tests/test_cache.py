"""The results cache: hits, misses, invalidation (content, settings, version, dependencies)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from qlint import cache as cache_mod
from qlint import checksummed_files
from qlint.cache import Cache
from qlint.cache_shards import shard_of
from qlint.diagnostic import (
    Applicability,
    Diagnostic,
    Edit,
    Fix,
    Range,
    RelatedInfo,
    RuntimeVerdict,
    diagnostic_from_dict,
    diagnostic_to_dict,
)
from qlint.engine import FileResult, content_hash
from qlint.rules import RULES
from qlint.rules.base import Rule
from qlint.runner import run_check
from qlint.settings import Settings
from tests.conftest import old_file
from tests.snippets import PACKET_MATCHER as FIXABLE


class DependentRule(Rule):
    """Test-only: flags `uses(dep)` when the project module `dep` contains FLAG."""

    code = "QL903"
    name = "dependent"
    summary = "test-only rule whose finding depends on another module"
    triggers = ("uses(",)

    def check(self, ctx):
        for row, line in enumerate(ctx.text.split("\n"), 1):
            start = line.find("uses(")
            if start < 0:
                continue
            module = line[start + 5 : line.index(")", start)]
            ctx.project.module_scope(module, ctx.path)  # records the dependency
            dep = os.path.join(os.path.dirname(ctx.path), module + ".py")
            if os.path.exists(dep) and "FLAG" in Path(dep).read_text():
                yield ctx.diagnostic(self, Range.of(row, start, row, len(line)), f"{module} is flagged")


@pytest.fixture
def dependent_rule(monkeypatch):
    monkeypatch.setitem(RULES, DependentRule.code, DependentRule)


def settings(tmp_path: Path, **kw) -> Settings:
    return Settings(root=tmp_path, cache_dir=tmp_path / "cache", **kw)


def sample_diagnostic(path="/x/a.py") -> Diagnostic:
    r = Range.of(3, 4, 3, 9)
    return Diagnostic(
        code="QL101",
        name="packet-matcher",
        message="ünïcode message",
        path=path,
        range=r,
        fix=Fix(Applicability.UNSAFE, "Use `.default`", (Edit(r, "x.default"), Edit(Range.of(1, 0, 1, 0), "# c\n"))),
        noqa_row=3,
        related=(RelatedInfo("/x/b.py", Range.of(1, 0, 1, 5), "defined here"),),
        evidence={"op": "aten.relu", "overloads": ["default"], "n": 1, "nested": {"k": None}},
        runtime=RuntimeVerdict("confirmed", "no node matched", True, 0.25),
    )


def test_diagnostic_round_trips_through_json():
    d = sample_diagnostic()
    data = json.loads(json.dumps(diagnostic_to_dict(d)))
    back = diagnostic_from_dict(data)
    assert back == d
    assert back.evidence == d.evidence  # not part of __eq__, so check it separately
    assert back.fix.applicability is Applicability.UNSAFE
    plain = Diagnostic("QL001", "syntax-error", "m", "/x/a.py", Range.of(1, 0, 1, 0))
    assert diagnostic_from_dict(diagnostic_to_dict(plain)) == plain
    assert "fix" not in diagnostic_to_dict(plain)


def stored(cache: Cache, path: Path, diagnostics=(), deps=None) -> None:
    st = path.stat()
    result = FileResult(str(path), list(diagnostics), dependencies=deps or {})
    cache.store(result, st.st_size, st.st_mtime_ns, content_hash(path.read_bytes()))


def test_hit_miss_and_touch(tmp_path):
    f = old_file(tmp_path / "a.py", "x = 1\n")
    c = Cache(tmp_path / "cache", "fp")
    assert c.lookup(str(f)) is None
    stored(c, f, [sample_diagnostic(str(f))])
    c.save()

    c2 = Cache(tmp_path / "cache", "fp")
    hit = c2.lookup(str(f))
    assert hit is not None and hit.diagnostics == [sample_diagnostic(str(f))]
    # A touch (new mtime, same content) still hits, and the new stat is remembered.
    os.utime(f, ns=(time.time_ns() - 10**12, time.time_ns() - 10**12))
    assert c2.lookup(str(f)) is not None
    assert c2.entries[str(f)][1] == f.stat().st_mtime_ns
    # Changed content misses.
    old_file(f, "x = 2\n")
    assert c2.lookup(str(f)) is None
    # A deleted file misses.
    f.unlink()
    assert c2.lookup(str(f)) is None


def test_a_same_size_edit_within_the_same_mtime_is_noticed(tmp_path):
    """Racy case: the file was written just before it was cached, then edited again
    without its size or mtime changing. The stored stat must not be trusted."""
    f = tmp_path / "a.py"
    f.write_text("x = 1\n")
    st = f.stat()
    c = Cache(tmp_path / "cache", "fp")
    stored(c, f)
    c.save()
    f.write_text("x = 2\n")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert f.stat().st_size == st.st_size and f.stat().st_mtime_ns == st.st_mtime_ns
    assert Cache(tmp_path / "cache", "fp").lookup(str(f)) is None


def test_a_trusted_stat_skips_reading_the_file(tmp_path, monkeypatch):
    f = old_file(tmp_path / "a.py", "x = 1\n")
    c = Cache(tmp_path / "cache", "fp")
    stored(c, f)
    c.save()
    c2 = Cache(tmp_path / "cache", "fp")
    monkeypatch.setattr(Cache, "_hash_file", lambda self, p: pytest.fail("read " + p))
    assert c2.lookup(str(f)) is not None


def _saved_with_a_dependency(tmp_path):
    """A cache on disk holding `a.py`, whose result depends on `dep.py`, and `dep.py`."""
    f = old_file(tmp_path / "a.py", "from dep import X\n")
    dep = old_file(tmp_path / "dep.py", "X = 1\n")
    c = Cache(tmp_path / "cache", "fp")
    stored(c, dep)
    stored(c, f, deps={str(dep): content_hash(dep.read_bytes())})
    c.save()
    return f, dep


def test_dependencies_invalidate(tmp_path):
    f, dep = _saved_with_a_dependency(tmp_path)
    assert Cache(tmp_path / "cache", "fp").lookup(str(f)) is not None
    old_file(dep, "X = 22\n")
    assert Cache(tmp_path / "cache", "fp").lookup(str(f)) is None
    dep.unlink()
    assert Cache(tmp_path / "cache", "fp").lookup(str(f)) is None


def test_a_dependency_recorded_as_absent_stays_valid_while_absent(tmp_path):
    f = old_file(tmp_path / "a.py", "x\n")
    c = Cache(tmp_path / "cache", "fp")
    stored(c, f, deps={str(tmp_path / "gone.py"): ""})
    assert c.lookup(str(f)) is not None
    (tmp_path / "gone.py").write_text("now here\n")
    assert Cache(tmp_path / "cache", "fp").lookup(str(f)) is None


def test_fingerprint_and_version_separate_caches(tmp_path, monkeypatch):
    f = old_file(tmp_path / "a.py", "x\n")
    c = Cache(tmp_path / "cache", "fp1")
    stored(c, f)
    c.save()
    assert Cache(tmp_path / "cache", "fp2").lookup(str(f)) is None
    monkeypatch.setattr(cache_mod, "__version__", "999.0")
    assert Cache(tmp_path / "cache", "fp1").lookup(str(f)) is None


@pytest.mark.parametrize("garbage", [b"", b"\x00\x01garbage", b"\xe3" * 1000])
def test_corrupt_index_is_ignored(tmp_path, garbage):
    f = old_file(tmp_path / "a.py", "x\n")
    c = Cache(tmp_path / "cache", "fp")
    stored(c, f)
    c.save()
    c.shard_file(str(f)).write_bytes(garbage)
    c2 = Cache(tmp_path / "cache", "fp")
    assert c2.lookup(str(f)) is None
    stored(c2, f)
    c2.save()  # and a fresh index replaces it
    assert Cache(tmp_path / "cache", "fp").lookup(str(f)) is not None


def test_structurally_wrong_index_is_ignored(tmp_path):
    import marshal

    f = old_file(tmp_path / "a.py", "x\n")
    c = Cache(tmp_path / "cache", "fp")
    c.shard_file(str(f)).parent.mkdir(parents=True)
    bad = {"magic": "qlint-cache-1", "fingerprint": "fp", "entries": {str(f): ("not", "an", "entry")}}
    c.shard_file(str(f)).write_bytes(marshal.dumps(bad))
    assert Cache(tmp_path / "cache", "fp").lookup(str(f)) is None


@pytest.mark.parametrize(
    "entry",
    [
        lambda e: (*e[:3], ["not a diagnostic"], *e[4:]),
        lambda e: (*e[:4], {3: "digest"}, e[5]),
        lambda e: (*e[:4], {"/some/dep.py": 3}, e[5]),
        lambda e: (*e[:4], {"/some/dep.py": "digest"}, {"/some/dep.py": "not a stat"}),
        lambda e: (str(e[0]), *e[1:]),
        lambda e: e[:4],
    ],
)
def test_a_malformed_entry_is_a_miss_when_looked_up(tmp_path, entry):
    """Entries are not all validated when the index is loaded (a one-file run must not pay
    for the whole repository's index): each is checked when it is looked up."""
    f = old_file(tmp_path / "a.py", "x\n")
    c = Cache(tmp_path / "cache", "fp")
    stored(c, f)
    c.entries[str(f)] = entry(c.entries[str(f)])
    c.dirty = True
    c.save()
    again = Cache(tmp_path / "cache", "fp")
    assert again.lookup(str(f)) is None
    stored(again, f)
    assert again.lookup(str(f)) is not None


def test_results_with_errors_are_not_stored(tmp_path):
    c = Cache(tmp_path / "cache", "fp")
    result = FileResult(str(tmp_path / "a.py"), errors=["boom"])
    c.store(result, 1, 1, "abc")
    assert c.entries == {}


def test_save_is_atomic_and_marks_the_directory(tmp_path):
    f = old_file(tmp_path / "a.py", "x\n")
    c = Cache(tmp_path / "cache", "fp")
    stored(c, f)
    c.save()
    files = sorted(p.name for p in c.shard_file(str(f)).parent.iterdir())
    assert files == [c.shard_file(str(f)).name]  # no temporary files left behind
    assert (tmp_path / "cache" / ".gitignore").read_text().strip().endswith("*")
    assert (tmp_path / "cache" / "CACHEDIR.TAG").exists()


def test_unwritable_cache_directory_is_not_an_error(tmp_path):
    (tmp_path / "cache").write_text("a file where the directory should be")
    f = old_file(tmp_path / "a.py", "x\n")
    c = Cache(tmp_path / "cache", "fp")
    stored(c, f)
    c.save()  # must not raise
    assert (tmp_path / "cache").read_text() == "a file where the directory should be"  # left alone
    assert c.dirty  # nothing was written, so the results are still pending
    assert c.lookup(str(f)) is not None  # and still served from memory for this run


def test_forget_missing(tmp_path):
    a = old_file(tmp_path / "a.py", "x\n")
    b = old_file(tmp_path / "b.py", "y\n")
    c = Cache(tmp_path / "cache", "fp")
    stored(c, a)
    stored(c, b)
    c.forget_missing([str(tmp_path)], {str(a)})
    assert list(c.entries) == [str(a)]


# ------------------------------------------------------------------ through run_check


def test_run_check_uses_the_cache_and_agrees_with_a_cold_run(tmp_path):
    for i in range(3):
        old_file(tmp_path / f"m{i}.py", "node.target = (torch.ops.aten.relu,\n" if i == 0 else "x = 1  # noqa: QL101\n")
    s = settings(tmp_path)
    cold = run_check([str(tmp_path)], s, use_cache=True, jobs=1)
    assert cold.cached == 0
    warm = run_check([str(tmp_path)], s, use_cache=True, jobs=1)
    assert warm.cached == 3
    assert [r.diagnostics for r in warm.results] == [r.diagnostics for r in cold.results]
    assert {d.code for r in warm.results for d in r.diagnostics} == {"QL001", "QL002"}
    # Different settings: a different index, so nothing is reused.
    other = run_check([str(tmp_path)], settings(tmp_path, select=("QL0",)), use_cache=True, jobs=1)
    assert other.cached == 0


def test_a_result_is_never_served_to_a_run_that_enables_other_rules(tmp_path):
    """Which files QL001 covers follows the enabled rules: a file only the preview rule QL103
    reads is clean without `--preview` and a syntax error with it. The cache keeps each
    selection's results apart, in both directions."""
    old_file(tmp_path / "weight.py", "def weight(n):\n    return n.op == 'get_attr' and\n")
    found = {}
    for preview in (False, True, False, True):
        run = run_check([str(tmp_path)], settings(tmp_path, preview=preview), use_cache=True, jobs=1)
        found.setdefault(preview, []).append(([d.code for r in run.results for d in r.diagnostics], run.cached))
    assert found[False] == [([], 0), ([], 1)]
    assert found[True] == [(["QL001"], 0), (["QL001"], 1)]
    # A narrowed selection likewise: QL101 alone does not read the file, QL103 does.
    for select, expected in ((("QL101",), []), (("QL103",), ["QL001"])):
        run = run_check([str(tmp_path)], settings(tmp_path, select=select, preview=True), use_cache=True, jobs=1)
        assert [d.code for r in run.results for d in r.diagnostics] == expected and run.cached == 0


def test_no_cache_neither_reads_nor_writes(tmp_path):
    old_file(tmp_path / "a.py", "x = 1\n")
    s = settings(tmp_path)
    run = run_check([str(tmp_path)], s, use_cache=False, jobs=1)
    assert run.cached == 0 and not (tmp_path / "cache").exists()


def test_dependency_change_invalidates_through_run_check(tmp_path, dependent_rule):
    main = old_file(tmp_path / "main.py", "uses(dep)\n")
    dep = old_file(tmp_path / "dep.py", "X = 1\n")
    s = settings(tmp_path, select=("QL903",))

    def codes():
        run = run_check([str(main)], s, use_cache=True, jobs=1)
        return run.cached, [d.code for r in run.results for d in r.diagnostics]

    assert codes() == (0, [])
    assert codes() == (1, [])  # cached
    old_file(dep, "X = 1  # FLAG\n")  # only the dependency changes
    assert codes() == (0, ["QL903"])
    assert codes() == (1, ["QL903"])
    uncached = run_check([str(main)], s, use_cache=False, jobs=1)
    assert [d.code for r in uncached.results for d in r.diagnostics] == ["QL903"]


def test_cross_module_constants_in_the_examples_stay_consistent(tmp_path):
    """Real rules on a copy of examples/: fold_pass.py matches `AFFINE_DQ_OPS` imported from
    qdq_utils.py. Editing only qdq_utils.py must change fold_pass.py's cached findings
    exactly as an uncached run does."""
    import shutil

    src = Path(__file__).resolve().parents[1] / "examples" / "mybackend"
    if not (src / "qdq_utils.py").is_file():
        pytest.skip("examples/mybackend is not there")
    pkg = tmp_path / "mybackend"
    shutil.copytree(src, pkg)
    for path in pkg.glob("*.py"):
        past = time.time_ns() - 3600 * 10**9
        os.utime(path, ns=(past, past))
    s = settings(tmp_path)

    def fold_pass_findings(use_cache):
        run = run_check([str(pkg / "fold_pass.py")], s, use_cache=use_cache, jobs=1)
        return sorted((d.range, d.code, d.message) for r in run.results for d in r.diagnostics)

    before = fold_pass_findings(True)
    assert fold_pass_findings(True) == before
    utils = pkg / "qdq_utils.py"
    text = utils.read_text()
    assert "[torch.ops.torchao.dequantize_affine]" in text
    old_file(
        utils, text.replace("[torch.ops.torchao.dequantize_affine]", "[torch.ops.torchao.dequantize_affine.default]")
    )
    after = fold_pass_findings(True)
    assert after == fold_pass_findings(False)
    assert after != before, "the imported constant's packet should no longer be reported"


# ------------------------------------------------------------------ corruption is a miss


def _warm(tmp_path):
    for i in range(3):
        old_file(tmp_path / f"m{i}.py", FIXABLE)
    s = settings(tmp_path)
    cold = run_check([str(tmp_path)], s, use_cache=True, jobs=1)
    index = Cache.for_settings(s).shard_file(str(tmp_path / "m0.py"))  # the directory's shard
    return s, cold, index


def _same_as_cold(s, tmp_path, cold):
    again = run_check([str(tmp_path)], s, use_cache=True, jobs=1)
    assert again.all_errors == []
    assert [r.diagnostics for r in again.results] == [r.diagnostics for r in cold.results]
    return again


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.9, 0.999])
def test_truncated_index_is_a_miss(tmp_path, keep):
    s, cold, index = _warm(tmp_path)
    data = index.read_bytes()
    index.write_bytes(data[: int(len(data) * keep)])
    again = _same_as_cold(s, tmp_path, cold)
    assert again.cached == 0


def test_flipped_bytes_are_never_served(tmp_path):
    import random

    s, cold, index = _warm(tmp_path)
    good = index.read_bytes()
    rng = random.Random(8)
    for _ in range(40):
        data = bytearray(good)
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(len(data))
            data[pos] ^= 1 << rng.randrange(8)
        index.write_bytes(bytes(data))
        again = _same_as_cold(s, tmp_path, cold)  # never a garbled finding, never an error
        assert again.cached == 0
        index.write_bytes(good)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        (("fix", "applicability"), "sometimes"),  # not an Applicability
        (("runtime",), ["maybe", "", None, 0.0]),  # not a verdict
        (("range",), [1, 2, 3]),
        (("message",), 42),
        (("fix", "edits"), [[[1, 0, 1, 0], None, None]]),
    ],
)
def test_an_entry_that_does_not_decode_is_a_miss_and_is_replaced(tmp_path, field, value):
    s, cold, _ = _warm(tmp_path)
    c = Cache.for_settings(s)
    path = str(tmp_path / "m1.py")
    entry = c.entries[path]
    bad = json.loads(json.dumps(entry[3]))
    target = bad[0]
    for key in field[:-1]:
        target = target[key]
    target[field[-1]] = value
    c.entries[path] = (*entry[:3], bad, *entry[4:])
    c.dirty = True
    c.save()  # a well-formed index with a valid checksum: only decoding can tell
    assert Cache.for_settings(s).lookup(path) is None
    again = _same_as_cold(s, tmp_path, cold)
    assert again.cached == 2
    assert _same_as_cold(s, tmp_path, cold).cached == 3  # the bad entry was replaced


def test_a_corrupt_cache_never_fails_the_cli(tmp_path, capsys):
    from qlint.cli import main

    for i in range(3):
        old_file(tmp_path / f"m{i}.py", FIXABLE)
    argv = ["check", "--output-format", "concise", "--cache-dir", str(tmp_path / "cache"), str(tmp_path)]
    assert main(argv) == 1
    (index,) = (tmp_path / "cache").glob("*/*.results/*.index")
    c = Cache(tmp_path / "cache", index.parent.name.removesuffix(".results"))
    path = str(tmp_path / "m0.py")
    entry = c.entries[path]
    bad = json.loads(json.dumps(entry[3]))
    bad[0]["fix"]["applicability"] = "bogus"  # what made every later run fail
    c.entries[path] = (*entry[:3], bad, *entry[4:])
    c.dirty = True
    c.save()
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    assert err == "" and code == 1
    assert out.count("QL101") == 3


# ------------------------------------------------------------------ shards


def _spread(tmp_path, n):
    """Files in `n` directories with distinct shards."""
    from qlint.cache_shards import shard_of

    files, shards = [], set()
    i = 0
    while len(files) < n:
        d = tmp_path / f"d{i}"
        i += 1
        if shard_of(str(d / "m.py")) in shards:
            continue
        shards.add(shard_of(str(d / "m.py")))
        d.mkdir()
        files.append(old_file(d / "m.py", "x\n"))
    return files


def test_looking_up_one_file_loads_only_its_shard(tmp_path, monkeypatch):
    files = _spread(tmp_path, 5)
    c = Cache(tmp_path / "cache", "fp")
    for f in files:
        stored(c, f)
    c.save()
    assert len(list((tmp_path / "cache").rglob("*.index"))) == 5
    read = []
    real = Cache.load_shard
    monkeypatch.setattr(Cache, "load_shard", lambda self, shard: read.append(shard) or real(self, shard))
    again = Cache(tmp_path / "cache", "fp")
    assert again.lookup(str(files[2])) is not None
    assert read == [int(again.shard_file(str(files[2])).stem, 16)]


def test_only_changed_shards_are_written(tmp_path):
    files = _spread(tmp_path, 3)
    c = Cache(tmp_path / "cache", "fp")
    for f in files:
        stored(c, f)
    c.save()
    before = {f: c.shard_file(str(f)).stat().st_mtime_ns for f in files}
    again = Cache(tmp_path / "cache", "fp")
    time.sleep(0.01)
    files[1].write_text("y = 2\n")
    os.utime(files[1], (time.time() - 10, time.time() - 10))
    assert again.lookup(str(files[1])) is None and again.lookup(str(files[0])) is not None
    stored(again, files[1])
    again.save()
    after = {f: again.shard_file(str(f)).stat().st_mtime_ns for f in files}
    assert [before[f] == after[f] for f in files] == [True, False, True]
    assert Cache(tmp_path / "cache", "fp").lookup(str(files[1])) is not None


def test_a_dependency_in_another_shard_still_invalidates(tmp_path):
    user, dep = _spread(tmp_path, 2)
    c = Cache(tmp_path / "cache", "fp")
    stored(c, dep)
    result = FileResult(str(user), dependencies={str(dep): content_hash(dep.read_bytes())})
    st = user.stat()
    c.store(result, st.st_size, st.st_mtime_ns, content_hash(user.read_bytes()))
    c.save()
    assert Cache(tmp_path / "cache", "fp").lookup(str(user)) is not None
    dep.write_text("changed = 1\n")
    assert Cache(tmp_path / "cache", "fp").lookup(str(user)) is None


def test_an_entry_in_the_wrong_shard_is_dropped(tmp_path):
    import marshal

    from qlint.cache import _HEADER, _MAGIC

    a, b = _spread(tmp_path, 2)
    c = Cache(tmp_path / "cache", "fp")
    stored(c, a)
    stored(c, b)
    c.save()
    # b's entry copied into a's shard (with a valid checksum): never served from there
    target = c.shard_file(str(a))
    shard = int(target.stem, 16)
    entries = {str(a): c.entries[str(a)], str(b) + "x": c.entries[str(b)]}
    data = marshal.dumps({"magic": _MAGIC, "fingerprint": "fp", "shard": shard, "entries": entries})
    checksummed_files.write(target, _HEADER, data)
    again = Cache(tmp_path / "cache", "fp")
    assert sorted(again.entries) == sorted([str(a), str(b)])


def _stored_with_dependency(c, user, dep):
    result = FileResult(str(user), dependencies={str(dep): content_hash(dep.read_bytes())})
    st = user.stat()
    c.store(result, st.st_size, st.st_mtime_ns, content_hash(user.read_bytes()))


def test_an_unchanged_dependency_is_vouched_for_by_its_stat(tmp_path, monkeypatch):
    """A result depending on modules all over the project (QL101's project scan) is served
    from its own shard: its dependencies' stats were recorded with their digests."""
    user, dep = _spread(tmp_path, 2)
    c = Cache(tmp_path / "cache", "fp")
    _stored_with_dependency(c, user, dep)
    c.save()
    read, hashed = [], []
    real = Cache.load_shard
    monkeypatch.setattr(Cache, "load_shard", lambda self, shard: read.append(shard) or real(self, shard))
    monkeypatch.setattr(cache_mod, "content_hash", lambda data: hashed.append(data) or content_hash(data))
    again = Cache(tmp_path / "cache", "fp")
    assert again.lookup(str(user)) is not None
    assert read == [shard_of(str(user))] and hashed == []


def test_a_dependency_too_recent_to_vouch_for_is_compared_by_content(tmp_path):
    user, dep = _spread(tmp_path, 2)
    dep.write_text("x = 1\n")  # modified just now: its stat cannot tell a second edit apart
    c = Cache(tmp_path / "cache", "fp")
    _stored_with_dependency(c, user, dep)
    assert c.entries[str(user)][5] == {}
    c.save()
    assert Cache(tmp_path / "cache", "fp").lookup(str(user)) is not None
    mtime = dep.stat().st_mtime_ns
    dep.write_text("x = 2\n")  # same size, and the same mtime
    os.utime(dep, ns=(mtime, mtime))
    assert Cache(tmp_path / "cache", "fp").lookup(str(user)) is None


def test_an_absent_dependency_loads_no_other_shard(tmp_path, monkeypatch):
    # A module looked for elsewhere and not found (`from .typing import X` resolved as a
    # sibling first): while it stays absent, the lookup reads only the file's own shard.
    user, elsewhere = _spread(tmp_path, 2)
    gone = elsewhere.parent / "gone.py"
    c = Cache(tmp_path / "cache", "fp")
    stored(c, elsewhere)
    stored(c, user, deps={str(gone): ""})
    c.save()
    read = []
    real = Cache.load_shard
    monkeypatch.setattr(Cache, "load_shard", lambda self, shard: read.append(shard) or real(self, shard))
    again = Cache(tmp_path / "cache", "fp")
    assert again.lookup(str(user)) is not None
    assert read == [shard_of(str(user))]
    gone.write_text("X = 1\n")  # created: the result no longer holds
    assert Cache(tmp_path / "cache", "fp").lookup(str(user)) is None


def test_an_absent_dependency_that_exists_but_cannot_be_read_stays_absent(tmp_path):
    # Recorded as "" because it could not be read: a stat that works now is not enough
    # to call it changed, its content decides (still unreadable: "", unchanged).
    f = old_file(tmp_path / "a.py", "x\n")
    locked = tmp_path / "locked.py"
    locked.mkdir()  # a directory: stat works, reading fails
    c = Cache(tmp_path / "cache", "fp")
    stored(c, f, deps={str(locked): ""})
    c.save()
    assert Cache(tmp_path / "cache", "fp").lookup(str(f)) is not None


def test_a_dependency_looked_up_after_is_stated_once_and_again_on_a_second_lookup(tmp_path, monkeypatch):
    f, dep = _saved_with_a_dependency(tmp_path)
    seen: list[str] = []
    real_stat = os.stat

    def counting_stat(path, *args, **kwargs):
        seen.append(os.fspath(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(cache_mod.os, "stat", counting_stat)
    warm = Cache(tmp_path / "cache", "fp")
    assert warm.lookup(str(f)) is not None
    assert warm.lookup(str(dep)) is not None
    # The project scans' results depend on every module: one stat each per run, not two.
    assert seen.count(str(dep)) == 1
    # Asked again (a long-lived caller), the file is looked at afresh: an edit since misses.
    old_file(dep, "X = 22\n")
    assert warm.lookup(str(dep)) is None
    assert seen.count(str(dep)) == 2
    # A dependency gone before its own lookup misses without a second stat.
    gone = Cache(tmp_path / "cache", "fp")
    dep.unlink()
    assert gone.lookup(str(f)) is None
    assert gone.lookup(str(dep)) is None


def test_a_result_with_thousands_of_dependencies_is_checked_as_exactly_as_one_with_a_few(tmp_path):
    # A project scan's result depends on every module: its recorded stats are compared in one
    # pass, and any dependency whose stat moved is still looked at one by one.
    f = old_file(tmp_path / "a.py", "x\n")
    deps = [old_file(tmp_path / f"m{i}.py", f"X = {i}\n") for i in range(100)]
    c = Cache(tmp_path / "cache", "fp")
    recorded = {str(d): content_hash(d.read_bytes()) for d in deps}
    recorded[str(tmp_path / "gone.py")] = ""  # absent, and must stay so
    stored(c, f, deps=recorded)
    c.save()
    assert len(c.entries[str(f)][5]) == 100  # every present module with its stat

    def hit() -> bool:
        return Cache(tmp_path / "cache", "fp").lookup(str(f)) is not None

    assert hit()
    past = time.time_ns() - 10**12
    os.utime(deps[40], ns=(past, past))  # touched: same content, another stat
    assert hit()
    old_file(deps[41], "X = 'changed'\n")
    assert not hit()
    old_file(deps[41], "X = 41\n")
    assert hit()
    deps[42].unlink()
    assert not hit()
    old_file(deps[42], "X = 42\n")
    assert hit()
    old_file(tmp_path / "gone.py", "")
    assert not hit()


def test_an_absent_dependency_the_walk_saw_absent_is_not_stated(tmp_path, monkeypatch):
    # Discovery scanned the directory the module would be in: its names say the module is
    # still absent, without a stat. A name the walk saw (in any case), or a component that
    # is not ASCII, is left to the stat, and a module created since misses as before.
    from qlint.discovery import discover

    f = old_file(tmp_path / "a.py", "x\n")
    old_file(tmp_path / "Cased.py", "")
    absent = [tmp_path / "gone.py", tmp_path / "pkg" / "gone" / "__init__.py", tmp_path / "cased.py"]
    absent.append(tmp_path / "ünï.py")
    c = Cache(tmp_path / "cache", "fp")
    stored(c, f, deps={str(p): "" for p in absent})
    c.save()
    seen: list[str] = []
    real_stat = os.stat
    monkeypatch.setattr(cache_mod.os, "stat", lambda p, *a, **k: seen.append(os.fspath(p)) or real_stat(p, *a, **k))

    def warm() -> bool:
        found = discover([str(tmp_path)], settings(tmp_path))
        c = Cache(tmp_path / "cache", "fp")
        c.stats.walked, c.stats.walked_names = found.listings, found.names
        seen.clear()  # (os.stat is the os module's: discovery's own stats are not counted)
        return c.lookup(str(f)) is not None

    assert warm()
    assert sorted(seen) == sorted([str(f), str(tmp_path / "cased.py"), str(tmp_path / "ünï.py")])
    (tmp_path / "pkg" / "gone").mkdir(parents=True)
    assert warm()  # the directory alone: its `__init__.py` is still absent
    old_file(tmp_path / "pkg" / "gone" / "__init__.py", "")
    assert not warm()


def test_a_dependency_shared_by_results_is_one_string_in_the_index(tmp_path):
    # The same module (found or absent) is a dependency of many results: one object, which
    # marshal then writes once per shard and refers to after.
    a, b = old_file(tmp_path / "a.py", "x\n"), old_file(tmp_path / "b.py", "y\n")
    gone = str(tmp_path / "torch.py")
    c = Cache(tmp_path / "cache", "fp")
    stored(c, a, deps={gone[:-3] + ".py": ""})
    stored(c, b, deps={"".join(gone): ""})
    (ka,), (kb,) = c.entries[str(a)][4], c.entries[str(b)][4]
    assert ka == kb == gone and ka is kb
