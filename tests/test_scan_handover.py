"""A module that a project-wide scan parses during one check (QL101's scan of the modules
that insert packets, QL102's search for the consumers of a packet) and that the run checks
later is parsed once: the scan's tree goes to the engine (`tree_handover`), with the same
findings as a parse of its own."""

from __future__ import annotations

import ast
import textwrap

from qlint.analysis.names.project import ProjectIndex
from qlint.runner import run_check
from qlint.settings import Settings
from tests.conftest import old_package
from tests.test_project_scan_facts import EXPORTED_INSERTER, LEGACY_INSERTER, MATCHER
from tests.test_ql102_consumers import ADD, PIPELINE, REMOVE
from tests.test_summary_facts import fresh_process  # noqa: F401  (a fixture)
from tests.test_tree_handover import _findings, _whole_parses


def _alone(pkg, settings) -> list[tuple[str, str, int]]:
    """The findings of each file checked in a process of its own, each parse its own."""
    out = []
    for path in sorted(pkg.glob("*.py")):
        ProjectIndex._default = None
        out += _findings(run_check([str(path)], settings, use_cache=False, jobs=1))
    return sorted(out)


def _run_counting(pkg, settings, monkeypatch, name: str):
    path = str(pkg / f"{name}.py")
    parsed = _whole_parses(monkeypatch, {path: (pkg / f"{name}.py").read_text(encoding="utf-8-sig")})
    run = run_check([str(pkg)], settings, use_cache=False, jobs=1)
    return parsed, path, _findings(run)


def test_a_module_the_insertion_scan_parsed_is_not_parsed_again(tmp_path, fresh_process, monkeypatch):  # noqa: F811
    # The matcher sorts first: its check scans the project and parses the inserter, which
    # is checked after it; the packet it inserts into a legacy FX graph quiets the matcher.
    inserter = textwrap.dedent(LEGACY_INSERTER).replace("OP", "relu")
    pkg = old_package(tmp_path, a_matcher=textwrap.dedent(MATCHER), z_inserter=inserter)
    s = Settings(root=tmp_path, cache_dir=tmp_path / "cache", select=("QL101", "QL102"))
    parsed, inserter_path, together = _run_counting(pkg, s, monkeypatch, "z_inserter")
    assert parsed == [inserter_path]
    assert together == _alone(pkg, s) == []


def test_the_handed_tree_gives_the_findings_of_a_parse_of_its_own(tmp_path, fresh_process, monkeypatch):  # noqa: F811
    # Loud: the insertion into an exported graph is QL102's, and the matcher keeps its QL101.
    inserter = textwrap.dedent(EXPORTED_INSERTER).replace("OP", "relu")
    pkg = old_package(tmp_path, a_matcher=textwrap.dedent(MATCHER), z_inserter=inserter)
    s = Settings(root=tmp_path, cache_dir=tmp_path / "cache", select=("QL101", "QL102"))
    parsed, inserter_path, together = _run_counting(pkg, s, monkeypatch, "z_inserter")
    assert parsed == [inserter_path]
    assert [(p.rsplit("/", 1)[1], code) for p, code, _ in together] == [
        ("a_matcher.py", "QL101"),
        ("z_inserter.py", "QL102"),
    ]
    assert together == _alone(pkg, s)


def test_a_consumer_module_the_packet_search_parsed_is_not_parsed_again(tmp_path, fresh_process, monkeypatch):  # noqa: F811
    # `add` inserts the packet; its check searches the project for code keyed on it and
    # parses `remove`, which the run checks after it: the paired pass keeps `add` quiet.
    pkg = old_package(tmp_path, add=ADD, remove=REMOVE, pipeline=PIPELINE.format(between="pass"))
    s = Settings(root=tmp_path, cache_dir=tmp_path / "cache", select=("QL102",))
    parsed, remove, together = _run_counting(pkg, s, monkeypatch, "remove")
    assert parsed == [remove]
    assert together == _alone(pkg, s) == []


def test_a_module_the_scan_read_with_a_byte_order_mark_is_parsed_by_its_check(
    tmp_path,
    fresh_process,  # noqa: F811
    monkeypatch,
):
    # The scan's text is not the file's bytes once encoded again: no tree is handed over,
    # and the check parses the file itself, with the same findings.
    inserter = textwrap.dedent(EXPORTED_INSERTER).replace("OP", "relu")
    pkg = old_package(tmp_path, a_matcher=textwrap.dedent(MATCHER))
    (pkg / "z_inserter.py").write_bytes(b"\xef\xbb\xbf" + inserter.encode())
    s = Settings(root=tmp_path, cache_dir=tmp_path / "cache", select=("QL101", "QL102"))
    parsed, inserter_path, together = _run_counting(pkg, s, monkeypatch, "z_inserter")
    assert parsed == [inserter_path, inserter_path]
    assert [code for _, code, _ in together] == ["QL101", "QL102"]
    assert together == _alone(pkg, s)


def test_a_peek_leaves_the_tree_for_the_check_and_only_for_the_same_bytes():
    from qlint.analysis.names.tree_handover import TreeHandover

    handover = TreeHandover()
    handover.expect(["/p/a.py"])
    tree = ast.parse("x = 1")
    assert handover.peek("/p/a.py", b"x = 1") is None  # nothing kept yet
    handover.keep("/p/a.py", b"x = 1", tree)
    assert handover.peek("/p/a.py", b"x = 2") is None  # edited since
    assert handover.peek("/p/a.py", b"x = 1") is tree
    assert handover.take("/p/a.py", b"x = 1") is tree  # still the check's
    assert handover.peek("/p/a.py", b"x = 1") is None
