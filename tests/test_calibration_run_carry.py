"""A command-line run hands QL204's stable summaries of other modules' functions from one
file's check to the next (`calibration_carry.run_carry`): each such body is walked once per
run, and every file's findings are the ones a check of it alone gives, whatever the order."""

from __future__ import annotations

import textwrap

import pytest

from qlint.analysis import calibration_carry, calibration_walk
from qlint.analysis.calibration_carry import run_carry
from qlint.analysis.names.project import ProjectIndex
from qlint.runner import run_check
from qlint.settings import Settings
from tests.conftest import old_file
from tests.keystroke_support import counted_runs

HEAD = "import torch\nfrom torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e\n"

# A chain that never runs the model: from `h3` QL204 follows it to its end (the model is
# converted uncalibrated), from `h0` its end lies past the depth it follows, where a helper
# may run anything; what a summary of `h3` says depends on the depth it was asked at.
HELPERS = HEAD + textwrap.dedent(
    """
    def calibrate(model, data):
        for batch in data:
            model(batch)

    def h0(m):
        return h1(m)

    def h1(m):
        return h2(m)

    def h2(m):
        return h3(m)

    def h3(m):
        return h4(m)

    def h4(m):
        return h5(m)

    def h5(m):
        return m
    """
)

# (name, the helper it hands the prepared model to): files checked in the order of their names.
USERS = {
    "deep": "h0",  # the chain's end lies below the depth followed: no finding
    "shallow": "h3",  # within it: a finding
    "calibrated": "calibrate",
    "middle": "h2",
}


def _user(helper: str) -> str:
    call = f"{helper}(prepared, data)" if helper == "calibrate" else f"{helper}(prepared)"
    return HEAD + textwrap.dedent(
        f"""
        from pkg.helpers import {helper}

        def quantize(model, quantizer, x, data):
            prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
            {call}
            return convert_pt2e(prepared)

        def again(model, quantizer, x, data):
            prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
            {call}
            return convert_pt2e(prepared)
        """
    )


def _package(tmp_path, prefixes: dict[str, str]):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    old_file(pkg / "__init__.py", "")
    old_file(pkg / "helpers.py", HELPERS)
    for name, helper in USERS.items():
        old_file(pkg / f"{prefixes[name]}_{name}.py", _user(helper))
    return pkg


def _findings(run) -> list[tuple[str, int]]:
    return sorted((r.path.rsplit("/", 1)[1], d.range.start.row) for r in run.results for d in r.diagnostics)


ORDERS = {
    "deep first": {"deep": "a", "shallow": "b", "calibrated": "c", "middle": "d"},
    "shallow first": {"deep": "d", "shallow": "a", "calibrated": "b", "middle": "c"},
    "middle first": {"deep": "c", "shallow": "b", "calibrated": "d", "middle": "a"},
}


@pytest.mark.parametrize("order", ORDERS)
def test_a_run_walks_each_stable_helper_once_and_finds_what_each_file_alone_finds(tmp_path, monkeypatch, order):
    pkg = _package(tmp_path, ORDERS[order])
    s = Settings(root=tmp_path, cache_dir=tmp_path / "cache", select=("QL204",))
    ProjectIndex._default = None
    walked = counted_runs(monkeypatch, calibration_walk.Walker)
    together = _findings(run_check([str(pkg)], s, use_cache=False, jobs=1))
    assert walked.count("calibrate") == 1  # asked by two functions of one file, and of another
    assert walked.count("h5") == 1 and walked.count("h4") == 1  # stable wherever met first

    alone = []
    for path in sorted(pkg.iterdir()):
        ProjectIndex._default = None  # each file in a process of its own
        alone += _findings(run_check([str(path)], s, use_cache=False, jobs=1))
    assert together == sorted(alone)
    found = {name.split("_", 1)[1]: [row for n, row in together if n == name] for name, _ in together}
    assert found == {"shallow.py": [9, 14], "middle.py": [9, 14]}  # both converts of each


def test_only_other_modules_functions_are_kept_for_the_run(tmp_path, monkeypatch):
    pkg = _package(tmp_path, ORDERS["deep first"])
    s = Settings(root=tmp_path, cache_dir=tmp_path / "cache", select=("QL204",))
    ProjectIndex._default = None
    pools = []
    real = calibration_carry.run_carry

    def recording(project, path):
        carry = real(project, path)
        pools.append(carry._pool if carry is not None else None)
        return carry

    monkeypatch.setattr("qlint.rules.ql204_convert_without_calibration.run_carry", recording)
    run_check([str(pkg)], s, use_cache=False, jobs=1)
    assert pools and all(p is pools[0] for p in pools)  # one pool for the run
    kept = list(pools[0].values())
    assert {k.func.name for k in kept} >= {"calibrate", "h3", "h4", "h5"}
    index = ProjectIndex._default
    for k in kept:
        # The node the project index's scope of its module holds, for the whole run; never a
        # function of a checked file's own tree (`quantize` is summarised at every check).
        assert index.scope_at(k.summary.path).functions[k.func.name] is k.func
    assert "quantize" not in {k.func.name for k in kept}


def test_no_carry_outside_a_check_run(tmp_path):
    assert run_carry(ProjectIndex(), str(tmp_path / "x.py")) is None  # files may change meanwhile
    with ProjectIndex.contents_fixed():
        ProjectIndex.fix_layout(True)
        try:
            index = ProjectIndex(overlay={str(tmp_path / "y.py"): "x = 1\n"})
            assert run_carry(index, str(tmp_path / "x.py")) is None  # an unsaved buffer may change
            first = run_carry(ProjectIndex(), str(tmp_path / "x.py"))
            assert first is not None
        finally:
            ProjectIndex.fix_layout(False)
        ProjectIndex.fix_layout(True)
        try:
            again = run_carry(ProjectIndex(), str(tmp_path / "x.py"))
            assert again is not None and again._pool is not first._pool  # another run: a new pool
        finally:
            ProjectIndex.fix_layout(False)


def test_summaries_of_a_module_set_aside_leave_the_pool_and_findings_stay(tmp_path, monkeypatch):
    """A module the index set aside is rebuilt as a new scope: what the pool kept of the old one
    goes (it held the old scope, its statements and flows, for the rest of the run), and the
    findings are those of each file checked alone."""
    from qlint.analysis.names import set_asides

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    old_file(pkg / "__init__.py", "")
    old_file(pkg / "helpers.py", HELPERS)
    old_file(pkg / "a_user.py", _user("h3"))
    for i in range(3):  # checks that use no helper: the index sets `helpers` aside meanwhile
        old_file(pkg / f"m{i}_other.py", HEAD + "\ndef f(prepared):\n    return convert_pt2e(prepared)\n")
    old_file(pkg / "z_user.py", _user("h3"))
    monkeypatch.setattr(set_asides, "UNUSED_CHECKS", 1)
    monkeypatch.setattr(set_asides, "EVERY", 1)
    s = Settings(root=tmp_path, cache_dir=tmp_path / "cache", select=("QL204",))
    ProjectIndex._default = None
    pools = []
    real = calibration_carry.run_carry

    def recording(project, path):
        carry = real(project, path)
        pools.append(carry._pool if carry is not None else None)
        return carry

    monkeypatch.setattr("qlint.rules.ql204_convert_without_calibration.run_carry", recording)
    together = _findings(run_check([str(pkg)], s, use_cache=False, jobs=1))
    index = ProjectIndex._default
    assert index.set_aside.count > 0
    kept = list(pools[0].values())
    assert {k.func.name for k in kept} >= {"h3", "h4", "h5"}  # z_user's, kept anew
    for k in kept:  # only summaries of the scope the index holds now
        assert k.home is not None and index.held_scope(k.home.path) is k.home
        assert index.scope_at(k.summary.path).functions[k.func.name] is k.func

    alone = []
    for path in sorted(pkg.iterdir()):
        ProjectIndex._default = None
        alone += _findings(run_check([str(path)], s, use_cache=False, jobs=1))
    assert together == sorted(alone)
    assert {name for name, _ in together} == {"a_user.py", "z_user.py"}
