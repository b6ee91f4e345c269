"""benchmarks/cold_split.py charges a cold run's CPU to its phases and measures the parse floor."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
from pathlib import Path

from qlint import file_checks, registry
from qlint.analysis import forked_call
from tests.conftest import write_package


def _split():
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "cold_split.py"
    spec = importlib.util.spec_from_file_location("cold_split", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _calls(out: str, phase: str) -> int:
    m = re.search(rf"%  {re.escape(phase)} \((\d+) calls", out)
    assert m is not None, out
    return int(m.group(1))


def test_the_checked_parse_and_the_imported_summary_are_charged_apart(tmp_path, capsys):
    consts = "import torch\n\nDQ = torch.ops.quantized_decomposed.dequantize_per_tensor\n"
    user = "from pkg.consts import DQ\n\n\ndef f(n):\n    return n.target == DQ\n"
    plain = "def g(x):\n    return x + 1\n"
    write_package(tmp_path, "pkg", consts=consts, user=user, plain=plain)
    real = (ast.parse, forked_call.call, file_checks.check_one_uncached, registry.DeferredRule.check)
    cwd = os.getcwd()
    try:
        assert _split().main([str(tmp_path), "--floor-runs", "1"]) == 0
    finally:
        os.chdir(cwd)
    assert (ast.parse, forked_call.call, file_checks.check_one_uncached, registry.DeferredRule.check) == real
    out = capsys.readouterr().out
    assert ", 4 files" in out.splitlines()[0]  # __init__, consts, plain, user
    # user.py parsed for its check; consts.py for QL101's question about DQ; plain.py never.
    assert _calls(out, "parse: checked files") == 1
    assert _calls(out, "parse: other modules") >= 1
    assert _calls(out, "check QL101") == 1
    assert _calls(out, "text trigger QL101") == 4
    assert "files the run parsed (1 files" in out
    assert "files with a finding (1 files" in out
    assert "every file (4 files" in out


def test_nested_phases_are_taken_out_of_their_caller():
    split = _split()
    phases = split.Phases()
    ticks = iter([0.0, 1.0, 3.0, 10.0])  # outer starts, inner starts, inner ends, outer ends
    split._clock = lambda: next(ticks)
    phases.run("outer", lambda: phases.run("inner", lambda: None))
    assert phases.seconds == {"inner": 2.0, "outer": 8.0}
    assert phases.calls == {"inner": 1, "outer": 1}


def test_the_costliest_checks_are_listed_whole(tmp_path, capsys):
    consts = "import torch\n\nDQ = torch.ops.quantized_decomposed.dequantize_per_tensor\n"
    user = "from pkg.consts import DQ\n\n\ndef f(n):\n    return n.target == DQ\n"
    plain = "def g(x):\n    return x + 1\n"
    write_package(tmp_path, "pkg", consts=consts, user=user, plain=plain)
    cwd = os.getcwd()
    try:
        assert _split().main([str(tmp_path), "--floor-runs", "1", "--files", "2"]) == 0
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    listed = out.split("the 2 costliest checks (each whole):\n")[1].split("parse floor")[0].splitlines()
    assert len(listed) == 2, out
    # user.py's check parses it, consts.py for its summary, and runs QL101: the costliest.
    assert listed[0].endswith(os.path.join("pkg", "user.py")), out
    cpu = [float(line.split()[0]) for line in listed]
    assert cpu[0] >= cpu[1]


def test_other_modules_parses_are_charged_to_the_reader_that_asked(tmp_path, capsys):
    consts = "import torch\n\nDQ = torch.ops.quantized_decomposed.dequantize_per_tensor\n"
    user = "from pkg.consts import DQ\n\n\ndef f(n):\n    return n.target == DQ\n"
    write_package(tmp_path, "pkg", consts=consts, user=user)
    cwd = os.getcwd()
    try:
        assert _split().main([str(tmp_path), "--floor-runs", "1", "--askers", "3"]) == 0
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    listed = out.split("(again: a text parsed before):\n")[1].split("parse floor")[0].splitlines()
    assert re.search(r"checked files \(1 parses; 0 of a text another reader had parsed", listed[0]), out
    # consts.py, summarised for QL101's question about DQ: a whole module, asked by rule code
    # (the project index and the resolver it went through are not readers).
    assert re.search(r"modules \(1 parses; again 0,", listed[1]), out
    # Nothing after QL101's question reads consts.py: a cut of that reader would save its parse.
    assert re.search(r"; no later reader 1, [\d.]+ s\)", listed[1]), out
    readers = [line.split("%  ")[1] for line in listed if line.startswith("  ")]
    assert readers and not any(r.startswith("analysis.names.") for r in readers), out


def test_a_text_parsed_again_is_told_apart_from_its_first_parse():
    split = _split()
    askers = split.Askers()
    askers.add("x = 1\n", "a.py", 1.0)
    askers.add("x = 1\n", "a.py", 2.0)  # the same file and characters: again
    askers.add("x = 1\n", "b.py", 4.0)  # another file
    askers.add("x = 2\n", "a.py", 8.0)  # another content
    askers.add("x = 2\n", "a.py", 16.0, checked=True)  # the engine's parse of a text read before
    (site,) = [s for s in askers.calls if s[0] != "checked"]
    assert (askers.calls[site], askers.seconds[site]) == (4, 15.0)
    assert (askers.again_calls[site], askers.again_seconds[site]) == (1, 2.0)
    checked = ("checked", "engine.parse_module")
    assert (askers.calls[checked], askers.again_calls[checked], askers.again_seconds[checked]) == (1, 1, 16.0)


def test_a_parse_no_later_reader_was_served_is_what_its_reader_alone_costs():
    split = _split()
    askers = split.Askers()
    first, second = ("module", "flow.first"), ("module", "flow.second")
    askers.add("a = 1\n", "a.py", 1.0, site=first)
    askers.needed("a.py", "flow.second")  # served the first reader's parse: a cut of it saves nothing
    askers.add("b = 1\n", "b.py", 2.0, site=first)
    askers.needed("b.py", "flow.first")  # served to the reader that parsed it: still its own
    askers.needed("c.py", "flow.second")  # served before the parse: no later reader
    askers.add("c = 1\n", "c.py", 4.0, site=first)
    askers.add("d = 1\n", "d.py", 8.0, site=first)
    askers.add("d = 1\n", "d.py", 16.0, site=second)  # parsed again: it used neither the first parse
    askers.add("x = 1\n", "<unknown>", 32.0, site=first)  # no file: nothing to serve
    askers.add("s = 1\n", "s.py", 64.0, site=("statement", "flow.first"))
    assert askers.alone(first) == (3, 14.0)
    assert askers.alone(second) == (1, 16.0)
    assert askers.alone(("statement", "flow.first")) == (0, 0)
    module_row = askers.rows(5, 100.0)[0]
    assert module_row.endswith("modules (6 parses; again 1, 16.00 s; no later reader 4, 30.00 s)"), module_row


def test_a_module_served_without_a_parse_is_told_and_the_hooks_put_back(tmp_path):
    from qlint import engine
    from qlint.analysis.names import live_trees, module_entries, project

    split = _split()
    path = str(tmp_path / "m.py")
    Path(path).write_text("def f(x):\n    return x\n")
    hooks = (module_entries.module_entry, project.module_entry, live_trees.LiveTrees.tree, engine._handed_tree)
    askers = split.Askers()
    index = project.ProjectIndex()
    reader = ("module", "flow.reader")
    with split._served(askers):
        assert module_entries.module_entry(index, path) is not None  # the real parse: not seen here
        askers.add(Path(path).read_text(), path, 1.0, site=reader)
        assert live_trees.LIVE.tree(path, "other text") is None  # nothing served: no claim
        assert askers.alone(reader) == (1, 1.0)
        assert module_entries.module_entry(index, path) is not None  # the entry kept: served
        assert askers.alone(reader) == (0, 0)
    assert (module_entries.module_entry, project.module_entry, live_trees.LiveTrees.tree, engine._handed_tree) == hooks


def test_each_rules_check_of_a_file_is_listed_whole(tmp_path, capsys):
    consts = "import torch\n\nDQ = torch.ops.quantized_decomposed.dequantize_per_tensor\n"
    user = "from pkg.consts import DQ\n\n\ndef f(n):\n    return n.target == DQ\n"
    plain = "def g(x):\n    return x + 1\n"
    write_package(tmp_path, "pkg", consts=consts, user=user, plain=plain)
    cwd = os.getcwd()
    try:
        assert _split().main([str(tmp_path), "--floor-runs", "1", "--rule-checks", "5"]) == 0
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    listed = out.split("the 5 costliest checks of one rule on one file (each whole):\n")[1]
    listed = listed.split("parse floor")[0].splitlines()
    rows = {line.split("%  ")[1]: float(line.split()[0]) for line in listed}
    # One row per rule that checked a file: only user.py's text holds the rules' triggers.
    checks = {m.group(1): int(m.group(2)) for m in re.finditer(r"%  check (QL\d+) \((\d+) calls", out)}
    assert sorted(rows) == sorted(os.path.join("pkg", "user.py") + "  " + code for code in checks), out
    assert set(checks.values()) == {1}
    # Whole: the summary of consts.py QL101 asked for is in it, so it is no less than its own work.
    own = float(re.search(r"([\d.]+) s +[\d.]+%  check QL101", out).group(1))
    assert rows[os.path.join("pkg", "user.py") + "  QL101"] >= own


def _searches():
    _split()  # puts benchmarks/ on the path cold_split imports its neighbour from
    import caller_searches

    return caller_searches


def test_caller_searches_are_listed_by_the_helper_asked_about(tmp_path, capsys):
    from qlint.analysis.flow import call_sites, project_callers
    from qlint.rules import caller_verdicts
    from tests.test_ql201_project_callers import BN_CALLER, EVAL_CALLER, _repo

    # Two scripts call the helper: the eval-mode caller is read and judged, then the batch
    # norm one, which decides the verdict (the finding stays).
    root = _repo(tmp_path, a=EVAL_CALLER, b=BN_CALLER)
    real = (project_callers.each_project_call, project_callers._calls_in, call_sites.used_elsewhere)
    cwd = os.getcwd()
    try:
        assert _split().main([str(root), "--floor-runs", "1", "--caller-searches", "5"]) == 0
    finally:
        os.chdir(cwd)
    assert (project_callers.each_project_call, project_callers._calls_in, call_sites.used_elsewhere) == real
    assert caller_verdicts.each_project_call is real[0]
    out = capsys.readouterr().out
    listed = out.split("the 5 costliest caller searches (each its own work, its parses included):\n")[1]
    listed = listed.split("parse floor")[0].splitlines()
    helper = os.path.join("pkg", "utils", "export_utils.py") + "  quantize_module#0 (QL201): 2 modules, 2 calls;"
    assert any(helper in line for line in listed), out
    # Without the option nothing is patched and nothing listed.
    try:
        assert _split().main([str(root), "--floor-runs", "1"]) == 0
    finally:
        os.chdir(cwd)
    assert "caller searches" not in capsys.readouterr().out


def test_each_stretch_of_a_search_is_charged_its_own_time(monkeypatch):
    module = _searches()
    searches = module.Searches()
    now = [0.0]
    monkeypatch.setattr(module, "_clock", lambda: now[0])

    def tick(seconds):
        now[0] += seconds

    def calls_in(ctx, path):
        tick(4.0)  # the callers' bodies, inside the search's first step
        return []

    class Ctx:
        path = "helper.py"

    def found(ctx, func, index):
        tick(1.0)
        searches.calls_in(calls_in, ctx, "caller.py")
        yield "first"
        tick(2.0)
        yield "second"
        tick(100.0)  # never reached: the rule stops at the second call

    class Func:
        name = "quantize"

    searches.rule = "QL201"
    for item in searches.search(found, Ctx(), Func(), 0):
        tick(8.0)  # judging the call
        if item == "second":

            def other(ctx, func, index):
                tick(32.0)
                yield "x"

            inner = searches.search(other, Ctx(), type("F", (), {"name": "inner"})(), 1)
            assert list(inner) == ["x"]  # a search started while this one's call is judged: its own
            tick(16.0)
            break
    finding, bodies, judging, modules, calls = searches.rows[("helper.py", "quantize#0", "QL201")]
    assert (finding, bodies, judging, modules, calls) == (3.0, 4.0, 32.0, 1, 2)
    assert searches.rows[("helper.py", "inner#1", "QL201")] == [32.0, 0.0, 0.0, 0, 1]
    assert not searches._open  # every stretch closed, the one left by the rule's break too
