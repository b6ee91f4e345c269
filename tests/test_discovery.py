"""File discovery: .gitignore semantics, excludes, explicit paths, symlinks, bad directories."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from qlint import discovery
from qlint.discovery import IgnoreFile, discover, glob_to_regex
from qlint.settings import Settings


def make(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not name.endswith("/"):
            path.write_text("x = 1\n")


def found(root: Path, *args: str, **settings) -> list[str]:
    s = Settings(root=root, **settings)
    result = discover([str(root / a) for a in args] or [str(root)], s)
    assert not result.errors, result.errors
    return [Path(p).relative_to(root).as_posix() for p in result.files]


def test_python_files_only_sorted_absolute_unique(tmp_path):
    make(tmp_path, "b.py", "a.pyi", "c.txt", "pkg/__init__.py", "pkg/mod.py", "pkg/data.json")
    result = discover([str(tmp_path), str(tmp_path / "pkg"), str(tmp_path / "b.py")], Settings(root=tmp_path))
    assert result.files == sorted(result.files)
    assert all(os.path.isabs(p) for p in result.files)
    assert [Path(p).name for p in result.files] == ["a.pyi", "b.py", "__init__.py", "mod.py"]


def test_default_excludes_but_not_site_packages(tmp_path):
    make(
        tmp_path,
        "ok.py",
        ".git/hooks/x.py",
        ".venv/lib/x.py",
        "venv/x.py",
        "__pycache__/x.py",
        "build/x.py",
        "dist/x.py",
        "node_modules/x.py",
        ".tox/x.py",
        ".mypy_cache/x.py",
        ".ruff_cache/x.py",
        ".qlint_cache/x.py",
        "lib/site-packages/torch/x.py",
    )
    assert found(tmp_path) == ["lib/site-packages/torch/x.py", "ok.py"]


def test_exclude_and_extend_exclude(tmp_path):
    make(
        tmp_path, "a.py", "gen_a.py", "sub/gen/x.py", "sub/keep.py", "tests/fixtures/f.py", "other/tests/fixtures/g.py"
    )
    got = found(tmp_path, extend_exclude=("gen_*.py", "tests/fixtures"))
    # `tests/fixtures` has a slash: relative to the project root only.
    assert got == ["a.py", "other/tests/fixtures/g.py", "sub/gen/x.py", "sub/keep.py"]
    # `exclude` replaces the defaults: a bare name matches at any depth.
    make(tmp_path, "build/b.py")
    got = found(tmp_path, exclude=("gen",))
    assert "build/b.py" in got and "sub/gen/x.py" not in got
    assert found(tmp_path, extend_exclude=("sub/**/*.py",)) == [
        "a.py",
        "gen_a.py",
        "other/tests/fixtures/g.py",
        "tests/fixtures/f.py",
    ]


def test_explicit_files_are_checked_even_if_excluded_unless_forced(tmp_path):
    make(tmp_path, "build/x.py", "gen/y.py")
    assert found(tmp_path, "build/x.py") == ["build/x.py"]
    assert found(tmp_path, "build/x.py", force_exclude=True) == []
    # An excluded ancestor counts too with --force-exclude.
    assert found(tmp_path, "gen/y.py", extend_exclude=("gen",), force_exclude=True) == []
    # A named directory is walked even if its name is excluded (ruff does the same).
    assert found(tmp_path, "build") == ["build/x.py"]
    # Ancestors above the project root never exclude anything.
    inner = tmp_path / "build"
    s = Settings(root=inner, force_exclude=True)
    assert discover([str(inner / "x.py")], s).files == [str(inner / "x.py")]


def test_gitignore_semantics(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text(
        "\n".join(
            [
                "# comment",
                "*.gen.py",
                "!keep.gen.py",
                "out/",  # directories only
                "/top.py",  # anchored: only at the root
                "docs/**/conf.py",
                "**/scratch",
                "\\#hash.py",
                "trailing.py   ",  # trailing spaces are ignored
                "",
            ]
        )
    )
    make(
        tmp_path,
        "a.gen.py",
        "keep.gen.py",
        "sub/b.gen.py",
        "sub/keep.gen.py",
        "out/x.py",
        "sub/out",  # a *file* named out: not matched by `out/`
        "top.py",
        "sub/top.py",
        "docs/conf.py",
        "docs/a/b/conf.py",
        "docs/other.py",
        "deep/er/scratch/s.py",
        "#hash.py",
        "trailing.py",
        "normal.py",
    )
    (tmp_path / "sub" / "out").unlink()
    (tmp_path / "sub" / "out.py").write_text("")
    assert found(tmp_path) == [
        "docs/other.py",
        "keep.gen.py",
        "normal.py",
        "sub/keep.gen.py",
        "sub/out.py",
        "sub/top.py",
    ]
    # respect-gitignore = false turns all of it off (default excludes still apply).
    assert len(found(tmp_path, respect_gitignore=False)) == 15


def test_nested_gitignore_overrides_parent(tmp_path):
    (tmp_path / ".gitignore").write_text("*.gen.py\nlocal/\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / ".gitignore").write_text("!*.gen.py\nonly_here.py\n")
    make(tmp_path, "x.gen.py", "pkg/y.gen.py", "pkg/only_here.py", "only_here.py", "pkg/local/z.py")
    assert found(tmp_path) == ["only_here.py", "pkg/y.gen.py"]


def test_cannot_reinclude_below_an_ignored_directory(tmp_path):
    (tmp_path / ".gitignore").write_text("vendor/\n!vendor/keep.py\n")
    make(tmp_path, "vendor/keep.py", "a.py")
    assert found(tmp_path) == ["a.py"]


def test_ancestor_gitignore_applies_when_walking_a_subdirectory(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "info").mkdir()
    (tmp_path / ".git" / "info" / "exclude").write_text("secret.py\n")
    (tmp_path / ".gitignore").write_text("*.gen.py\n/sub/anchored.py\n")
    make(tmp_path, "sub/a.py", "sub/b.gen.py", "sub/secret.py", "sub/anchored.py")
    assert found(tmp_path, "sub") == ["sub/a.py"]


def test_ancestor_gitignore_stops_at_the_repository(tmp_path):
    (tmp_path / ".gitignore").write_text("*.py\n")  # outside the repository below
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    make(repo, "pkg/a.py")
    s = Settings(root=repo / "pkg")
    assert [Path(p).name for p in discover([str(repo / "pkg")], s).files] == ["a.py"]


def test_ignore_file_rules_directly():
    ig = IgnoreFile.parse("/r", "*.py\n!important.py\nbuild/\n")
    assert ig.match("a.py", "a.py", False) is True
    assert ig.match("x/important.py", "important.py", False) is False
    assert ig.match("build", "build", True) is True
    assert ig.match("build", "build", False) is None
    assert ig.match("README", "README", False) is None


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.py", "a.py", True),
        ("*.py", "d/a.py", False),  # gitignore `*` stops at `/`
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("**/b", "x/b", True),
        ("a/**", "a/x/y", True),
        ("a/**", "a", False),
        ("[ab].py", "b.py", True),
        ("[!ab].py", "c.py", True),
        ("[!ab].py", "a.py", False),
        ("?.py", "ab.py", False),
        ("a[.py", "a[.py", True),
    ],
)
def test_glob_to_regex(pattern, path, expected):
    import re

    assert bool(re.fullmatch(glob_to_regex(pattern, star_crosses_slash=False), path)) is expected


def test_symlink_loops_terminate_without_duplicates(tmp_path):
    make(tmp_path, "pkg/a.py", "pkg/sub/b.py")
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "sub" / "loop")  # points at an ancestor
    os.symlink(tmp_path / "pkg" / "self", tmp_path / "pkg" / "self")  # a -> a
    os.symlink("sub", tmp_path / "pkg" / "alias")  # the same directory twice
    result = discover([str(tmp_path)], Settings(root=tmp_path))
    names = sorted(Path(p).name for p in result.files)
    assert names == ["a.py", "b.py"]
    assert result.errors == []


def test_directory_symlinks_are_followed(tmp_path):
    outside = tmp_path / "outside"
    make(outside, "lib.py")
    project = tmp_path / "project"
    make(project, "main.py")
    os.symlink(outside, project / "vendored")
    assert found(project) == ["main.py", "vendored/lib.py"]


def test_broken_symlink_and_missing_path_are_errors(tmp_path):
    make(tmp_path, "good.py")
    os.symlink(tmp_path / "nowhere.py", tmp_path / "broken.py")
    result = discover([str(tmp_path), str(tmp_path / "missing.py")], Settings(root=tmp_path))
    assert [Path(p).name for p in result.files] == ["good.py"]
    assert len(result.errors) == 2
    assert any("broken.py: broken symbolic link" in e for e in result.errors)
    assert any("missing.py: No such file or directory" in e for e in result.errors)
    # Named explicitly, a broken symlink is reported the same way.
    result = discover([str(tmp_path / "broken.py")], Settings(root=tmp_path))
    assert result.files == [] and "broken symbolic link" in result.errors[0]


def test_a_directory_named_like_a_python_file_is_walked(tmp_path):
    make(tmp_path, "weird.py/inner.py")
    assert found(tmp_path) == ["weird.py/inner.py"]


def test_unreadable_directory_is_an_error_and_the_rest_is_still_found(tmp_path, monkeypatch):
    # Tests run as root, so chmod 000 would not stop us: make scandir fail the real way.
    make(tmp_path, "ok/a.py", "locked/b.py")
    real_scandir = os.scandir

    def scandir(path):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(discovery.os, "scandir", scandir)
    result = discover([str(tmp_path)], Settings(root=tmp_path))
    assert [Path(p).name for p in result.files] == ["a.py"]
    assert len(result.errors) == 1
    assert "locked: cannot read directory: Permission denied" in result.errors[0]


def test_deep_trees_do_not_hit_the_recursion_limit(tmp_path):
    deep = tmp_path
    for _ in range(150):
        deep = deep / "d"
    make(deep, "x.py")
    assert len(discover([str(tmp_path)], Settings(root=tmp_path)).files) == 1


def _torch_dir() -> str | None:
    spec = importlib.util.find_spec("torch")  # finds the package without importing it
    return os.path.dirname(spec.origin) if spec and spec.origin else None


@pytest.mark.skipif(_torch_dir() is None, reason="torch is not installed")
def test_walking_the_installed_torch_tree():
    # Speed is measured by benchmarks/, not asserted here: a timed test fails on a loaded machine.
    torch_dir = _torch_dir()
    result = discover([torch_dir], Settings(root=Path(torch_dir)))
    assert len(result.files) > 2000
    assert result.errors == []


def test_folded_runs_give_the_last_matching_rule():
    text = "*.log\n!keep*.log\nkeep_not.log\n!keep_not.log.bak\n/build/\n!/build/keep/\ngen/\n"
    ig = IgnoreFile.parse("/r", text)

    def last_rule(rel: str, name: str, is_dir: bool) -> bool | None:
        for rule in reversed(ig.rules):
            if (not rule.dir_only or is_dir) and rule.regex.fullmatch(rel if rule.anchored else name):
                return not rule.negate
        return None

    entries = [
        ("a.log", False),
        ("keep1.log", False),
        ("keep_not.log", False),
        ("keep_not.log.bak", False),
        ("build", True),
        ("build/keep", True),
        ("build", False),
        ("sub/gen", True),
        ("sub/gen", False),
        ("x.py", False),
    ]
    verdicts = {rel: ig.match(rel, rel.rsplit("/", 1)[-1], is_dir) for rel, is_dir in entries}
    assert verdicts == {rel: last_rule(rel, rel.rsplit("/", 1)[-1], is_dir) for rel, is_dir in entries}
    assert verdicts["keep1.log"] is False and verdicts["keep_not.log"] is True and verdicts["build/keep"] is False


def test_rules_without_wildcards_match_as_their_regexes_do():
    # Literal rules are matched by equality, the others by their folded regex: the verdict
    # is the last matching rule's either way, by name, by path, for files and directories.
    text = (
        "build\n/dist/\ndocs/_build\n*.pyc\n!keep.pyc\nkeep.pyc.d/\n!/dist/keep\n"
        "a.b\nsp\\ ace\\ \n\\#hash\nx?y\n[ab]c\nvendor/**/gen\n!vendor/keep/gen\n.venv\n"
    )
    ig = IgnoreFile.parse("/r", text)
    assert {r.literal for r in ig.rules if r.literal} == {
        "build", "dist", "docs/_build", "keep.pyc", "keep.pyc.d", "dist/keep", "a.b", "#hash", ".venv",
        "vendor/keep/gen",
    }  # fmt: skip

    def last_rule(rel: str, name: str, is_dir: bool) -> bool | None:
        for rule in reversed(ig.rules):
            if (not rule.dir_only or is_dir) and rule.regex.fullmatch(rel if rule.anchored else name):
                return not rule.negate
        return None

    rels = [
        "build", "src/build", "dist", "dist/keep", "docs/_build", "docs/_buildx", "a.b", "aXb", "m.pyc",
        "keep.pyc", "keep.pyc.d", "sp ace ", "#hash", "xzy", "x/y", "ac", "bc", "vendor/a/gen",
        "vendor/keep/gen", ".venv", "sub/.venv", "build.py",
    ]  # fmt: skip
    for rel in rels:
        for is_dir in (False, True):
            name = rel.rsplit("/", 1)[-1]
            assert ig.match(rel, name, is_dir) == last_rule(rel, name, is_dir), (rel, is_dir)


def _last_rule(ig: IgnoreFile, rel: str, is_dir: bool) -> bool | None:
    """The verdict by definition: the last rule whose own regex matches."""
    name = rel.rsplit("/", 1)[-1]
    for rule in reversed(ig.rules):
        if (not rule.dir_only or is_dir) and rule.regex.fullmatch(rel if rule.anchored else name):
            return not rule.negate
    return None


def test_shortcut_shapes_match_as_their_regexes_do():
    # Each shape the matcher takes a shortcut for (equality, suffix, prefix, infix, `**/x`
    # as a name, rules grouped under a literal first directory), beside look-alikes that
    # must go through their regex (inner `*`, `?`, classes, `**/` before a path).
    text = (
        "*.pyc\nbazel-*\n*.so*\n**/.cache\n**/*.tmp\n**/gen-*\n**/a*b\n**/x/y\n**/[!a]b\n"
        "*.a*.b\nx?z\n[ab]*\ntorch/lib/*.so*\n!torch/lib/keep.so\ntorch/**/gen\n/top*.py\n"
        "docs/src/**/*\n*/**/__pycache__\n!*.so.keep\nout/\n!**/out.d/\n"
    )
    ig = IgnoreFile.parse("/r", text)
    rels = [
        "m.pyc", "d/m.pyc", "m.pyc.x", "bazel-out", "d/bazel-x", "xbazel-", "a.so", "a.so.1", "so", ".cache",
        "d/e/.cache", ".cachex", "f.tmp", "d/f.tmp", "gen-1", "d/gen-", "ab", "d/a-b", "d/x/y", "x/y", "y",
        "cb", "d/cb", "ab", "q.a1.b", "xyz", "x/z", "bq", "x.so", "x.so.1", "d/y.so", "d/y.so.keep",
        "torch/lib/a.so", "torch/lib/keep.so", "torch/lib/d/a.so",
        "torchao/lib/a.so", "torch/a/b/gen", "torch/gen", "top1.py", "d/top1.py", "docs/src/a", "docs/src",
        "docs/srcx/a", "a/b/__pycache__", "__pycache__", "a/__pycache__", "x.so.keep", "out", "d/out",
        "out.d", "d/out.d",
    ]  # fmt: skip
    for rel in rels:
        for is_dir in (False, True):
            assert ig.match(rel, rel.rsplit("/", 1)[-1], is_dir) == _last_rule(ig, rel, is_dir), (rel, is_dir)


def test_random_ignore_files_match_as_their_regexes_do():
    import random

    rng = random.Random(13)
    pieces = ["a", "b", "ab", ".c", "*", "**", "?", "[ab]", "[!a]", "-"]
    comps = ["a", "b", "ab", ".c", "a.c", "b-a", "ba", "aab", "c"]
    for _ in range(300):
        lines = []
        for _ in range(rng.randint(1, 8)):
            parts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 3))]
            glob = "/".join(parts)
            lines.append(rng.choice(["", "", "!"]) + rng.choice(["", "", "/", "**/"]) + glob + rng.choice(["", "/"]))
        ig = IgnoreFile.parse("/r", "\n".join(lines))
        for _ in range(40):
            rel = "/".join(rng.choice(comps) for _ in range(rng.randint(1, 4)))
            for is_dir in (False, True):
                verdict = ig.match(rel, rel.rsplit("/", 1)[-1], is_dir)
                assert verdict == _last_rule(ig, rel, is_dir), (lines, rel, is_dir)
