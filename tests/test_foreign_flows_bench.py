"""benchmarks/foreign_flows.py says how much of an edited one-file check goes to the model
flows of other modules' helpers, of which shape each was, and what the caller read of them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from tests.conftest import old_package

_ROOT = Path(__file__).resolve().parent.parent
_HELPERS = """\
import torch
from torch.export import export


def capture(model, x):
    return export(model, (x,)).module()


def size():
    return torch.ones(3)
"""
_CALLER = """\
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from pkg.helpers import capture, size


def run(x, quantizer):
    model = nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3))
    n = size()
    return prepare_pt2e(capture(model, x), quantizer), n
"""
# The same work with the helpers written in the module itself: no other module's flow.
_OWN = _HELPERS + _CALLER.replace("from pkg.helpers import capture, size\n", "")


def _bench():
    path = _ROOT / "benchmarks" / "foreign_flows.py"
    spec = importlib.util.spec_from_file_location("foreign_flows", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _lines(tmp_path, monkeypatch, capsys, name, *options):
    (tmp_path / ".git").mkdir()
    pkg = old_package(tmp_path, helpers=_HELPERS, caller=_CALLER, own=_OWN)
    argv = ["foreign_flows.py", str(pkg / f"{name}.py"), "--tree", str(tmp_path), "--runs", "1", *options]
    monkeypatch.setattr(sys, "argv", argv)
    assert _bench().main() == 0
    return capsys.readouterr().out.splitlines()


def test_a_caller_of_another_modules_helpers_is_charged_their_flows(tmp_path, monkeypatch, capsys):
    out = _lines(tmp_path, monkeypatch, capsys, "caller", "--reads")
    assert out[0].startswith("pkg/caller.py run 1: CPU ")
    assert "bodies analysed 2 (2 distinct), reused 0" in out[0]
    assert out[2].startswith("   the checked module's own flows ")
    assert out[4] == "   shapes of bodies analysed (count): captures a parameter as it came 1, inert 1"
    costliest = out[out.index("   the costliest of them:") + 1 :][:2]
    assert sorted(line.split("  ")[-1] for line in costliest) == [
        "pkg/helpers.py:capture [captures a parameter as it came]",
        "pkg/helpers.py:size [inert]",
    ]
    read = next(line for line in out if line.startswith("   fields read of finished foreign flows"))
    assert "params " in read and "captures " in read


def test_helpers_of_the_module_itself_are_not(tmp_path, monkeypatch, capsys):
    out = _lines(tmp_path, monkeypatch, capsys, "own")
    assert "other modules' flows 0.000 s (0%); bodies analysed 0 (0 distinct)" in out[0]
    assert "own bodies analysed 4" in out[0]  # and the module's body
    assert out[4] == "   shapes of bodies analysed (count): "
    assert not any(line.startswith("   fields read") for line in out)  # without --reads


def test_the_edited_check_runs_as_the_qlint_command_does(tmp_path, monkeypatch, capsys):
    """The probe ends its process after the check, as `qlint` does: the check keeps the
    collector off and leaves its garbage to the exit, and the CPU charged to it holds no
    collector pass the command never makes."""
    bench = _bench()
    final = "sys.__stdout__.write(json.dumps(stats))"
    assert bench._PROBE.count(final) == 1
    told = "import gc\nstats['collector'] = gc.isenabled()\n" + final
    monkeypatch.setattr(bench, "_PROBE", bench._PROBE.replace(final, told))
    (tmp_path / ".git").mkdir()
    pkg = old_package(tmp_path, helpers=_HELPERS, caller=_CALLER)
    buffer = tmp_path / "edited.py"
    buffer.write_text(_CALLER + "x = 1\n")
    cache = str(tmp_path / "cache")
    argv = ["check", "--exit-zero", "--quiet", "--cache-dir", cache, "--stdin-filename", str(pkg / "caller.py"), "-"]
    stats = bench._probe(argv, str(tmp_path), str(tmp_path), False, str(buffer))
    assert stats["errors"] == [] and stats["analysed"] == 2
    assert stats["collector"] is False


def _stats(tmp_path, name):
    (tmp_path / ".git").mkdir()
    pkg = old_package(tmp_path, helpers=_HELPERS, caller=_CALLER, own=_OWN)
    buffer = tmp_path / "edited.py"
    buffer.write_text((pkg / f"{name}.py").read_text() + "x = 1\n")
    cache = str(tmp_path / "cache")
    argv = ["check", "--exit-zero", "--quiet", "--cache-dir", cache, "--stdin-filename", str(pkg / f"{name}.py"), "-"]
    return _bench()._probe(argv, str(tmp_path), str(tmp_path), False, str(buffer))


def test_the_checked_modules_own_flows_are_charged_apart_from_the_helpers_they_ask_for(tmp_path):
    """The own module's flows (the lever of a kept flow of the checked module) and other
    modules' (of a kept helper flow) are told apart: a helper of another module analysed for
    one of the module's bodies is charged to other modules, and to the own body's share of it."""
    stats = _stats(tmp_path, "caller")
    assert stats["errors"] == [] and stats["analysed"] == 2
    assert stats["foreign_cpu"] > 0 and stats["foreign_in_own"] == stats["foreign_cpu"]
    assert stats["own_cpu"] > stats["foreign_in_own"]
    # The process's CPU holds the check's, and start-up and imports besides.
    assert stats["process_cpu"] > stats["cpu"] > stats["own_cpu"]


def test_a_module_with_its_own_helpers_is_charged_its_own_flows_alone(tmp_path):
    stats = _stats(tmp_path, "own")
    assert stats["errors"] == [] and stats["analysed"] == 0
    assert stats["foreign_cpu"] == stats["foreign_in_own"] == 0
    assert stats["own_cpu"] > 0


def test_the_survey_bounds_what_each_lever_could_make_of_the_p90(tmp_path, monkeypatch, capsys):
    """`--survey`: the edited check of every admitted file, and the p90 of its process CPU as
    it is, less the other modules' flows, less its own, less both."""
    (tmp_path / ".git").mkdir()
    old_package(tmp_path, helpers=_HELPERS, caller=_CALLER)
    argv = ["foreign_flows.py", "--survey", str(tmp_path), "--sample", "0", "--runs", "2"]
    monkeypatch.setattr(sys, "argv", argv)
    assert _bench().main() == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{tmp_path}: 1 files admitted by a QL1xx/QL2xx prefilter; CPU p90 of the edited check"
    for run, line in enumerate(out[1:3], start=1):
        ways = [part.rpartition(" ")[0] for part in line.removeprefix(f"   run {run}: ").split(", ")]
        assert [w.rpartition(" ")[0] for w in ways] == [
            "as is",
            "without other modules' flows",
            "without its own flows",
            "its own carried as an editor's",
            "without both",
        ]
        as_is, no_foreign, no_own, carried, neither = (float(w.rpartition(" ")[2]) for w in ways)
        # Other modules' flows here take well under a millisecond, printed to one.
        assert as_is >= no_foreign >= neither and as_is > no_own >= neither and no_foreign > neither
        assert no_own <= carried
    assert out[3] == "   files over 0.15 s in the last run: process CPU, other modules' flows, own flows, own carried"


def test_the_carried_probe_checks_the_edited_buffer_in_an_editors_index(tmp_path):
    """The edited check after the saved file's in one editor's index: the helper's flow and
    the module body's are carried, the edited function's analysed again; the finding stays."""
    (tmp_path / ".git").mkdir()
    pkg = old_package(tmp_path, own=_OWN)
    buffer = tmp_path / "edited.py"
    buffer.write_text(_OWN.replace("    n = size()\n", "    n = size()\n    n = n\n"))
    bench = _bench()
    stats = bench._carried(str(pkg / "own.py"), str(buffer), str(tmp_path))
    assert stats["findings"] == 1 and stats["own_carried"] > 0
