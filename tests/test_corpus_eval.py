"""benchmarks/corpus_eval.py: materialising from a mirror, matching findings to rows, scoring."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("corpus_eval", ROOT / "benchmarks" / "corpus_eval.py")
corpus_eval = importlib.util.module_from_spec(_spec)
sys.modules["corpus_eval"] = corpus_eval  # dataclasses look their module up by name
_spec.loader.exec_module(corpus_eval)

MATCHERS = """\
import torch


def is_dq(node):
    return node.target == torch.ops.quantized_decomposed.dequantize_per_tensor


def is_dq_overload(node):
    return node.target == torch.ops.quantized_decomposed.dequantize_per_tensor.default


def is_relu(node):
    return node.target == torch.ops.aten.relu


def is_q(node):
    return node.target in (
        torch.ops.quantized_decomposed.quantize_per_tensor,
        torch.ops.aten.add.Tensor,
    )
"""

# Under a path the repository marks export-ignore: `git archive` would drop it, a clone has it.
IGNORED_TEST = """\
import torch


def test_matcher(gm):
    assert any(n.target == torch.ops.quantized_decomposed.quantize_per_tensor for n in gm.graph.nodes)
"""

URL = "https://github.com/acme/tiny"


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def mirror(tmp_path_factory) -> tuple[Path, str]:
    """A bare mirror `acme+tiny/repo` of a tiny repository, and its commit."""
    work = tmp_path_factory.mktemp("tiny")
    (work / "pkg").mkdir()
    (work / "pkg" / "match.py").write_text(MATCHERS)
    (work / "tests").mkdir()
    (work / "tests" / "test_match.py").write_text(IGNORED_TEST)
    (work / ".gitattributes").write_text("tests/ export-ignore\n")
    _git(work, "init", "-q")
    _git(work, "add", ".")
    _git(work, "commit", "-qm", "tiny")
    commit = _git(work, "rev-parse", "HEAD")
    mirrors = tmp_path_factory.mktemp("mirrors")
    _git(mirrors, "clone", "-q", "--bare", str(work), str(mirrors / "acme+tiny" / "repo"))
    return mirrors, commit


def _corpus(tmp_path: Path, commit: str, rows: list[tuple]) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "tiny.toml").write_text(f'url = "{URL}"\ncommit = "{commit}"\nimport_root = "."\n')
    lines = [",".join(corpus_eval.COLUMNS)]
    lines += [f"{URL},{commit},{path},{line},{rule},{label},{reason}" for path, line, rule, label, reason in rows]
    (corpus / "tiny.csv").write_text("\n".join(lines) + "\n")
    return corpus


def _run(capsys, corpus: Path, mirrors: Path, *extra: str) -> tuple[int, str, str]:
    code = corpus_eval.main(["--corpus", str(corpus), "--mirrors", str(mirrors), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def test_scores_each_row_and_lists_unlabelled_findings(tmp_path, mirror, capsys):
    mirrors, commit = mirror
    corpus = _corpus(
        tmp_path,
        commit,
        [
            ("pkg/match.py", 5, "QL101", "bug", "a packet compared with node targets"),  # found: TP
            ("pkg/match.py", 9, "QL101", "bug", "labelled bug but qlint is right to be quiet"),  # FN
            ("pkg/match.py", 13, "QL101", "ok", "labelled ok though qlint reports it"),  # FP
            ("pkg/match.py", 17, "QL101", "ok", "the finding is on the next line and not this one"),  # TN
            ("pkg/match.py", 5, "QL102", "ok", "another rule on a line QL101 reports"),  # TN for QL102
            ("tests/test_match.py", 5, "QL101", "bug", "only a checkout that keeps export-ignore paths has it"),
        ],
    )
    code, out, _ = _run(capsys, corpus, mirrors, "--json")
    assert code == 0
    result = json.loads(out)
    ql101 = result["rules"]["QL101"]
    assert (ql101["tp"], ql101["fp"], ql101["fn"], ql101["tn"], ql101["unlabelled"]) == (2, 1, 1, 1, 1)
    assert ql101["precision"] == pytest.approx(2 / 3) and ql101["recall"] == pytest.approx(2 / 3)
    assert result["rules"]["QL102"]["tn"] == 1 and result["rules"]["QL102"]["fp"] == 0
    assert [(m["path"], m["line"]) for m in result["missed"]] == [("pkg/match.py", 9)]
    assert [(m["path"], m["line"]) for m in result["false_alarms"]] == [("pkg/match.py", 13)]
    assert [(u["path"], u["line"], u["rule"]) for u in result["unlabelled"]] == [("pkg/match.py", 18, "QL101")]

    assert _run(capsys, corpus, mirrors, "--strict")[0] == 1  # an unlabelled finding fails --strict
    code, out, _ = _run(capsys, corpus, mirrors)
    assert "pkg/match.py:9 QL101: labelled bug but qlint is right to be quiet" in out
    assert "pkg/match.py:18 QL101" in out.split("unlabelled findings")[1]


def test_a_repository_without_mirror_or_commit_is_an_error(tmp_path, mirror, capsys):
    mirrors, _ = mirror
    corpus = _corpus(tmp_path, "0" * 40, [("pkg/match.py", 5, "QL101", "bug", "a packet")])
    code, _, err = _run(capsys, corpus, mirrors)
    assert code == 2 and "no mirror holds" in err
    code, _, err = _run(capsys, corpus, tmp_path / "elsewhere")
    assert code == 2 and "no mirror holds" in err


@pytest.mark.parametrize(
    "row, message",
    [
        (("pkg/match.py", 5, "QL101", "maybe", "x"), "label must be bug or ok"),
        (("pkg/match.py", 5, "QL101", "bug", " "), "the reason is empty"),
        (("pkg/match.py", 99, "QL101", "bug", "x"), "is not a line of the tree"),
        (("pkg/gone.py", 1, "QL101", "bug", "x"), "is not a line of the tree"),
        (("pkg/match.py", 5, "QL101", "bug", "reads a packet, never matches"), "quote a reason"),
    ],
)
def test_malformed_rows_are_errors(tmp_path, mirror, capsys, row, message):
    mirrors, commit = mirror
    code, _, err = _run(capsys, _corpus(tmp_path, commit, [row]), mirrors)
    assert code == 2 and message in err


def test_duplicate_sites_and_foreign_commits_are_errors(tmp_path, mirror):
    _, commit = mirror
    corpus = _corpus(tmp_path, commit, [("a.py", 1, "QL101", "bug", "x"), ("a.py", 1, "QL101", "ok", "y")])
    with pytest.raises(corpus_eval.CorpusError, match="the same site"):
        corpus_eval.load_corpus(corpus)
    text = (corpus / "tiny.csv").read_text().replace(commit, "f" * 40)
    (corpus / "tiny.csv").write_text(text)
    with pytest.raises(corpus_eval.CorpusError, match=r"differ from tiny\.toml"):
        corpus_eval.load_corpus(corpus)


def test_a_multi_line_finding_matches_rows_within_it_and_preview_rows_can_be_skipped():
    rows = [
        corpus_eval.Row("a.py", 11, "QL201", "bug", "inside the finding's lines", "t:2"),
        corpus_eval.Row("a.py", 13, "QL201", "ok", "after it", "t:3"),
        corpus_eval.Row("a.py", 10, "QL103", "bug", "a preview rule's row", "t:4"),
    ]
    findings = [corpus_eval.Finding("a.py", "QL201", 10, 12, "m"), corpus_eval.Finding("b.py", "QL201", 11, 11, "m")]
    out = corpus_eval.Outcome()
    corpus_eval.score("tiny", rows, findings, {"QL103"}, out)
    s = out.scores["QL201"]
    assert (s.tp, s.fp, s.fn, s.tn, s.unlabelled) == (1, 0, 0, 1, 1)
    assert "QL103" not in out.scores  # not run without --preview: neither hit nor miss
    assert [f.path for _, f in out.unlabelled] == ["b.py"]


def test_pinned_view_scores_rows_broken_only_past_the_repos_torch_pin_as_ok():
    rows = [
        corpus_eval.Row("a.py", 3, "QL401", "bug", f"{corpus_eval.PINNED} the repo's torch 2.8 still has it", "t:2"),
        corpus_eval.Row("a.py", 4, "QL401", "bug", "gone on every torch the repo allows", "t:3"),
    ]
    findings = [corpus_eval.Finding("a.py", "QL401", 3, 3, "m"), corpus_eval.Finding("a.py", "QL401", 4, 4, "m")]
    out = corpus_eval.Outcome()
    corpus_eval.score("tiny", corpus_eval.as_pinned(rows), findings, set(), out)
    s = out.scores["QL401"]
    assert (s.tp, s.fp) == (1, 1) and [r.line for _, r, _ in out.false_alarms] == [3]


def test_a_syntax_error_only_preview_rules_read_is_a_bug_with_preview_and_ok_without():
    rows = [
        corpus_eval.Row("a.py", 3, "QL001", "bug", f"{corpus_eval.PREVIEW_READS} only QL103's trigger", "t:2"),
        corpus_eval.Row("b.py", 4, "QL001", "bug", "a stable rule reads it", "t:3"),
    ]
    quiet = [corpus_eval.Finding("b.py", "QL001", 4, 4, "m")]
    out = corpus_eval.Outcome()
    corpus_eval.score("tiny", corpus_eval.without_preview(rows), quiet, set(), out)
    s = out.scores["QL001"]
    assert (s.tp, s.fp, s.fn, s.tn) == (1, 0, 0, 1)
    # Reported without --preview: a false alarm; with it, the row is the bug it says.
    loud = [corpus_eval.Finding("a.py", "QL001", 3, 3, "m"), *quiet]
    out = corpus_eval.Outcome()
    corpus_eval.score("tiny", corpus_eval.without_preview(rows), loud, set(), out)
    assert [r.path for _, r, _ in out.false_alarms] == ["a.py"]
    out = corpus_eval.Outcome()
    corpus_eval.score("tiny", rows, loud, set(), out)
    assert (out.scores["QL001"].tp, out.scores["QL001"].fn) == (2, 0)


def test_a_file_the_mirror_lacks_is_accepted_only_when_named_and_unlabelled(tmp_path, mirror, capsys):
    mirrors, commit = mirror
    # A copy of the mirror without the blob of one file qlint reads, as partial mirrors are.
    lacking = tmp_path / "lacking"
    subprocess.run(["cp", "-r", str(mirrors), str(lacking)], check=True)
    git_dir = lacking / "acme+tiny" / "repo"
    oid = _git(git_dir, "rev-parse", f"{commit}:tests/test_match.py")
    objects = [line.split()[0] for line in _git(git_dir, "rev-list", "--objects", "--all").splitlines()]
    pack_dir = git_dir / "objects" / "pack"
    subprocess.run(
        ["git", f"--git-dir={git_dir}", "pack-objects", "-q", str(pack_dir / "slim")],
        input="\n".join(o for o in objects if o != oid) + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    for old in git_dir.glob("objects/??/*"):  # loose objects, the lost blob among them
        old.unlink()
    for old in pack_dir.glob("pack-*"):
        old.unlink()
    assert subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "-e", oid], capture_output=True).returncode
    rows = [("pkg/match.py", 5, "QL101", "bug", "a packet compared with node targets")]
    corpus = _corpus(tmp_path, commit, rows)
    code, _, err = _run(capsys, corpus, lacking)
    assert code == 2 and "lacks 1 file(s) qlint reads: tests/test_match.py" in err

    toml = corpus / "tiny.toml"
    toml.write_text(toml.read_text() + 'absent_ok = ["tests/test_match.py"]\n')
    code, out, _ = _run(capsys, corpus, lacking, "--json")
    assert code == 0 and json.loads(out)["rules"]["QL101"]["tp"] == 1

    labelled = tmp_path / "labelled"
    labelled.mkdir()
    (labelled / "tiny.toml").write_text(toml.read_text())
    (labelled / "tiny.csv").write_text(
        (corpus / "tiny.csv").read_text() + f"{URL},{commit},tests/test_match.py,5,QL101,bug,a row on a lost file\n"
    )
    with pytest.raises(corpus_eval.CorpusError, match="which absent_ok leaves out"):
        corpus_eval.load_corpus(labelled)


def test_an_empty_file_has_a_first_line_and_no_second(tmp_path):
    # qlint reports an unreadable empty file (a 0-byte notebook, QL001) on its first line.
    (tmp_path / "empty.ipynb").write_bytes(b"")
    corpus_eval.check_sites(tmp_path, [corpus_eval.Row("empty.ipynb", 1, "QL001", "bug", "empty", "t:2")])
    with pytest.raises(corpus_eval.CorpusError, match="is not a line of the tree"):
        corpus_eval.check_sites(tmp_path, [corpus_eval.Row("empty.ipynb", 2, "QL001", "bug", "empty", "t:2")])


# A pass of an installed library, run on the graph between a packet insertion and the strip:
# qlint reads it from the installed source (`installed_passes`), which the corpus installs for
# the run from the library's mirror, at the commit the repository pins.
LOWER = """\
import torch
from lib.export import retarget


def add_zero(gm):
    for node in list(gm.graph.nodes):
        gm.graph.call_function(torch.ops.aten.zero_, (node,))


def strip_overloads(g):
    for node in g.graph.nodes:
        if isinstance(node.target, torch._ops.OpOverload):
            node.target = node.target.overloadpacket


def lower(gm):
    add_zero(gm)
    retarget(gm, src=print, target=torch.ops.aten.relu)
    strip_overloads(gm)
    return torch.jit.script(gm)
"""

RETARGET = """\
def retarget(gm, src, target):
    for node in gm.graph.nodes:
        if node.target is src:
            node.target = target
"""


def _bare(mirrors: Path, name: str, files: dict[str, str]) -> str:
    work = mirrors.parent / f"work-{name}"
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    _git(work, "init", "-q")
    _git(work, "add", ".")
    _git(work, "commit", "-qm", name)
    _git(mirrors, "clone", "-q", "--bare", str(work), str(mirrors / f"acme+{name}" / "repo"))
    return _git(work, "rev-parse", "HEAD")


def test_pinned_dependencies_are_installed_for_the_run(tmp_path, capsys):
    mirrors = tmp_path / "mirrors"
    mirrors.mkdir()
    commit = _bare(mirrors, "lowering", {"pkg/__init__.py": "", "pkg/lower.py": LOWER})
    lib = _bare(mirrors, "lib", {"src/lib/__init__.py": "", "src/lib/export.py": RETARGET, "setup.py": ""})
    url = "https://github.com/acme/lowering"
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "lowering.toml").write_text(f'url = "{url}"\ncommit = "{commit}"\nimport_root = "."\n')
    row = "zero_ goes into a graph stripped next; the library's pass between keys on the function it is handed"
    header = ",".join(corpus_eval.COLUMNS)
    (corpus / "lowering.csv").write_text(f"{header}\n{url},{commit},pkg/lower.py,7,QL102,ok,{row}\n")
    code, out, _ = _run(capsys, corpus, mirrors, "--json")
    assert code == 0 and json.loads(out)["rules"]["QL102"]["fp"] == 1  # not installed: unknown

    installed = f'\n[[installed]]\nurl = "https://github.com/acme/lib"\ncommit = "{lib}"\nsource = "src"\n'
    (corpus / "lowering.toml").write_text((corpus / "lowering.toml").read_text() + installed)
    code, out, _ = _run(capsys, corpus, mirrors, "--json")
    assert code == 0 and json.loads(out)["rules"]["QL102"]["tn"] == 1

    (corpus / "lowering.toml").write_text((corpus / "lowering.toml").read_text().replace('"src"', '"lib"'))
    code, _, err = _run(capsys, corpus, mirrors)
    assert code == 2 and "no directory lib" in err


# A checkout whose qlint reports one QL101 finding on line 9 of pkg/match.py, whatever it reads.
STUB_MAIN = """\
import json
print(json.dumps([{"filename": "pkg/match.py", "code": "QL101", "location": {"row": 9}, "message": "stub"}]))
"""


def test_the_run_measures_the_checkout_named_not_the_installed_qlint(tmp_path, mirror, capsys, monkeypatch):
    # Run from the repository's root, `python -m qlint` imported whichever qlint was installed:
    # lanes measured main while meaning their branch. The checkout goes first on PYTHONPATH.
    monkeypatch.delenv("PYTHONPATH", raising=False)
    mirrors, commit = mirror
    stub = tmp_path / "stub"
    (stub / "qlint").mkdir(parents=True)
    (stub / "qlint" / "__init__.py").write_text("")
    (stub / "qlint" / "__main__.py").write_text(STUB_MAIN)
    corpus = _corpus(tmp_path, commit, [("pkg/match.py", 9, "QL101", "bug", "only the stub reports it")])
    code, out, _ = _run(capsys, corpus, mirrors, "--json", "--checkout", str(stub))
    assert code == 0 and json.loads(out)["rules"]["QL101"]["tp"] == 1
    code, out, _ = _run(capsys, corpus, mirrors, "--json")  # this checkout: quiet on line 9
    assert code == 0 and json.loads(out)["rules"]["QL101"]["fn"] == 1


def test_the_default_checkout_is_the_one_holding_the_script(monkeypatch):
    asked = []
    monkeypatch.setattr(corpus_eval, "load_corpus", lambda *a: [])
    monkeypatch.setattr(corpus_eval, "evaluate", lambda *a: asked.append(a[4]) or corpus_eval.Outcome())
    monkeypatch.setattr(corpus_eval, "report", lambda *a: None)
    corpus_eval.main([])
    corpus_eval.main(["--installed"])
    assert asked == [ROOT, None]
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    assert corpus_eval.run_env(None, ROOT)["PYTHONPATH"] == f"{ROOT}{os.pathsep}/elsewhere"
    assert corpus_eval.run_env(None, None)["PYTHONPATH"] == "/elsewhere"


def _toml(corpus: Path, slug: str, commit: str, extra: str = "", url: str = URL) -> None:
    (corpus / f"{slug}.toml").write_text(f'url = "{url}"\ncommit = "{commit}"\nimport_root = "."\n{extra}')
    rows = (corpus / "tiny.csv").read_text() if (corpus / "tiny.csv").exists() else ",".join(corpus_eval.COLUMNS)
    (corpus / f"{slug}.csv").write_text(rows.replace(URL, url))


def test_a_family_names_a_corpus_repository_and_is_followed_to_the_one_that_names_none(tmp_path, mirror):
    _, commit = mirror
    corpus = _corpus(tmp_path, commit, [("pkg/match.py", 5, "QL101", "bug", "a packet")])
    _toml(corpus, "tiny-fork", commit, 'family = "tiny"\n')
    _toml(corpus, "tiny-fork-copy", commit, 'family = "tiny-fork"\n')
    families = {r.slug: r.family for r in corpus_eval.load_corpus(corpus)}
    assert families == {"tiny": "tiny", "tiny-fork": "tiny", "tiny-fork-copy": "tiny"}
    # Run alone, a fork still belongs to its family.
    assert [r.family for r in corpus_eval.load_corpus(corpus, {"tiny-fork-copy"})] == ["tiny"]

    _toml(corpus, "tiny-fork", commit, 'family = "executorch"\n')
    with pytest.raises(corpus_eval.CorpusError, match="family must name a repository of the corpus"):
        corpus_eval.load_corpus(corpus)
    _toml(corpus, "tiny-fork", commit, "family = 3\n")
    with pytest.raises(corpus_eval.CorpusError, match="family must name a repository of the corpus"):
        corpus_eval.load_corpus(corpus)
    _toml(corpus, "tiny-fork", commit, 'family = "tiny-fork-copy"\n')
    with pytest.raises(corpus_eval.CorpusError, match="family names a circle"):
        corpus_eval.load_corpus(corpus)


def test_the_family_view_counts_a_site_its_family_already_has_once(tmp_path, mirror, capsys):
    mirrors, commit = mirror
    corpus = _corpus(
        tmp_path,
        commit,
        [
            ("pkg/match.py", 5, "QL101", "bug", "a packet compared with node targets"),  # TP
            ("pkg/match.py", 13, "QL101", "ok", "labelled ok though qlint reports it"),  # FP
            ("pkg/match.py", 9, "QL101", "ok", "an overload"),  # TN
        ],
    )
    _toml(corpus, "tiny-fork", commit, 'family = "tiny"\n')  # the same rows on the same lines
    # The fork labels line 9 `bug`: a copy labelled differently counts again, and is listed.
    fork_rows = (corpus / "tiny-fork.csv").read_text().replace("9,QL101,ok,an overload", "9,QL101,bug,relabelled")
    (corpus / "tiny-fork.csv").write_text(fork_rows)
    # Another repository with the same lines but no family: its own sites.
    _toml(corpus, "other", commit, url="https://github.com/acme/other")
    both = tmp_path / "mirrors"
    both.mkdir()
    for name in ("tiny", "other"):
        (both / f"acme+{name}").symlink_to(mirrors / "acme+tiny", target_is_directory=True)
    code, out, _ = _run(capsys, corpus, both, "--json")
    assert code == 0
    result = json.loads(out)
    ql101, family = result["rules"]["QL101"], result["families"]["rules"]["QL101"]
    # Two unlabelled findings in each of the three (pkg/match.py:18, tests/test_match.py:5).
    assert (ql101["tp"], ql101["fp"], ql101["fn"], ql101["tn"], ql101["unlabelled"]) == (3, 3, 1, 2, 6)
    assert (family["tp"], family["fp"], family["fn"], family["tn"], family["unlabelled"]) == (2, 2, 1, 2, 4)
    assert result["families"]["members"] == {"other": ["other"], "tiny": ["tiny", "tiny-fork"]}
    assert result["families"]["repeats"] == {"tiny": 2}
    [conflict] = result["families"]["conflicts"]
    assert (conflict["family"], conflict["path"], conflict["rule"]) == ("tiny", "pkg/match.py", "QL101")
    assert conflict["text"] == "return node.target == torch.ops.quantized_decomposed.dequantize_per_tensor.default"
    assert sorted(map(tuple, conflict["copies"])) == [("tiny", 9, "ok"), ("tiny-fork", 9, "bug")]

    code, out, _ = _run(capsys, corpus, both)
    view = out.split("each site of a family counted once")[1]
    assert "family tiny (tiny, tiny-fork): 6 rows, 2 repeat a site of the family" in view
    assert "tiny pkg/match.py QL101 `return node.target" in view.split("labelled differently in a family")[1]


def test_equal_lines_of_one_file_stay_two_sites_and_an_indented_copy_is_the_same_line():
    def row(line, where):
        return corpus_eval.Row("a.py", line, "QL401", "bug", "a moved import", where)

    out = corpus_eval.Outcome()
    # Two functions of one file import the moved module alike; the fork re-indents one.
    out.scored = [("up", row(3, "u:2"), "tp"), ("up", row(9, "u:3"), "tp"), ("fork", row(4, "f:2"), "tp")]
    out.scored += [("fork", row(11, "f:3"), "tp")]
    line = "from torch.ao.quantization.quantize_pt2e import prepare_pt2e"
    out.texts = {("up", "a.py", 3): line, ("up", "a.py", 9): line, ("fork", "a.py", 4): line}
    out.texts[("fork", "a.py", 11)] = line
    view = corpus_eval.family_view(out, {"up": "up", "fork": "up"})
    assert view.scores["QL401"].tp == 2 and view.repeats == {"up": 2} and not view.conflicts
    # Without the family, the fork's rows are its own.
    assert corpus_eval.family_view(out, {}).scores["QL401"].tp == 4
    # The fork holds one of the two lines only: one new site is not claimed.
    out.scored.pop()
    assert corpus_eval.family_view(out, {"up": "up", "fork": "up"}).scores["QL401"].tp == 2
    # A row scored without its line's text is only itself.
    out.texts.clear()
    assert corpus_eval.family_view(out, {"up": "up", "fork": "up"}).scores["QL401"].tp == 3
