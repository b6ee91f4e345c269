"""benchmarks/edited_one_file.py times bench_trees.py's edited one-file check in new processes,
side by side, and says whether the two sides found the same."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from tests.conftest import old_package
from tests.snippets import SEQUENTIAL_CAPTURE as _CAPTURE

_ROOT = Path(__file__).resolve().parent.parent


def _bench():
    path = _ROOT / "benchmarks" / "edited_one_file.py"
    spec = importlib.util.spec_from_file_location("edited_one_file", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_both_sides_are_timed_phase_by_phase_and_agree(tmp_path, monkeypatch, capsys):
    (tmp_path / ".git").mkdir()
    pkg = old_package(tmp_path, capture=_CAPTURE)
    monkeypatch.setenv("PYTHONPATH", str(_ROOT))
    argv = ["edited_one_file.py", str(pkg / "capture.py"), "--against", str(_ROOT), "--runs", "1", "--phases"]
    monkeypatch.setattr(sys, "argv", argv)
    assert _bench().main() == 0
    out = capsys.readouterr().out
    assert "(9 lines)" in out
    for side in ("this", "against"):
        assert f"   {side:8} CPU " in out and "findings 1" in out
        phases = next(line for line in out.splitlines() if line.startswith(f"   {side:8} phases"))
        assert all(f" {phase} " in phases for phase in ("QL201", "parse", "import", "rest"))
    assert "this / against CPU" in out


def test_the_phases_probe_runs_the_check_as_the_qlint_command_does(tmp_path):
    """The `--phases` probe ends its process after the check, as `qlint` does: the check keeps
    the collector off and leaves its garbage to the exit. Else the collector ran once the check
    ended, and "rest" held work the command never does (ExecuTorch's qualcomm
    test_qnn_delegate.py: 43 of 390 ms)."""
    import json
    import subprocess

    (tmp_path / ".git").mkdir()
    pkg = old_package(tmp_path, capture=_CAPTURE)
    buffer = tmp_path / "edited.py"
    buffer.write_text(_CAPTURE + "x = 1\n")
    cache = tmp_path / "cache"
    after = "\nimport gc\nsys.__stdout__.write(' ' + json.dumps(gc.isenabled()))\n"
    env = _bench()._env(str(_ROOT))
    cmd = [sys.executable, "-c", _bench()._PHASES + after, str(cache), str(pkg / "capture.py"), str(buffer)]
    out = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout
    spent, collector = out.rsplit(" ", 1)
    assert "QL201" in json.loads(spent)
    assert json.loads(collector) is False


def test_the_samples_probe_charges_the_check_to_qlints_functions(tmp_path, monkeypatch, capsys):
    """`--samples`: the probe's stack samples, each charged to the innermost function of qlint
    (or to the imports), summed over the runs and printed share by share per side."""
    import json
    import subprocess

    (tmp_path / ".git").mkdir()
    pkg = old_package(tmp_path, capture=_CAPTURE)
    buffer = tmp_path / "edited.py"
    buffer.write_text(_CAPTURE + "x = 1\n")
    bench = _bench()
    cmd = [sys.executable, "-c", bench._SAMPLES, str(tmp_path / "cache"), str(pkg / "capture.py"), str(buffer)]
    out = subprocess.run(cmd, cwd=tmp_path, env=bench._env(str(_ROOT)), capture_output=True, text=True, check=True)
    taken = json.loads(out.stdout)["self"]
    assert sum(taken.values()) > 0
    # Where: a function of qlint's package (relative to the directory holding it), the imports,
    # or another module's function with no qlint frame under it.
    assert all(w == "(import)" or w.startswith(("qlint/", "(other) ")) for w in taken), taken
    assert any(w.startswith("qlint/") or w == "(import)" for w in taken)

    monkeypatch.setenv("PYTHONPATH", str(_ROOT))
    argv = ["edited_one_file.py", str(pkg / "capture.py"), "--runs", "2", "--samples"]
    monkeypatch.setattr(sys, "argv", argv)
    assert bench.main() == 0
    printed = capsys.readouterr().out
    assert "   this     samples (" in printed and "over 2 runs), share by function:" in printed
    shares = [line for line in printed.splitlines() if line.startswith("      ") and "%  " in line]
    assert shares and len(shares) <= bench._SHOWN_SAMPLES


def test_runs_may_write_their_bytecode(monkeypatch):
    """A PYTHONDONTWRITEBYTECODE in the caller's environment is not handed to the timed runs:
    each would compile qlint's sources again wherever their bytecode is stale or missing."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    bench = _bench()
    assert "PYTHONDONTWRITEBYTECODE" not in bench._env(None)
    env = bench._env(str(_ROOT))
    assert "PYTHONDONTWRITEBYTECODE" not in env and env["PYTHONPATH"] == str(_ROOT)


def test_a_runs_cpu_is_not_counted_in_clock_ticks(tmp_path):
    """The CPU of a timed run is its child's own, finer than `os.times`' clock ticks (10 ms on
    Linux), which made every check's figure a multiple of 0.01 s: runs that each burn a
    different few milliseconds are not all counted in whole ticks."""
    bench = _bench()
    stdin = tmp_path / "empty"
    stdin.write_text("")
    burn = "import time\nend = time.process_time() + {}\nwhile time.process_time() < end:\n    pass\n"
    used = []
    for ms in (3, 7, 12, 16, 21):
        cmd = [sys.executable, "-c", burn.format(ms / 1000)]
        cpu, wall, _ = bench._timed_run(cmd, str(tmp_path), bench._env(None), str(stdin))
        assert 0.0 < cpu < 5.0 and wall > 0.0
        used.append(cpu)
    assert any(abs(cpu * 100 - round(cpu * 100)) > 1e-6 for cpu in used), used


def test_a_survey_checks_every_admitted_file_and_lists_the_slow_ones(tmp_path, monkeypatch, capsys):
    (tmp_path / ".git").mkdir()
    pkg = old_package(tmp_path, capture=_CAPTURE, plain="def f(x):\n    return x\n")
    monkeypatch.setenv("PYTHONPATH", str(_ROOT))
    bench = _bench()
    assert bench.admitted(str(tmp_path)) == [str(pkg / "capture.py")]  # `plain` holds no trigger
    monkeypatch.setattr(bench, "_SLOW", 0.0)  # every file listed
    monkeypatch.setattr(sys, "argv", ["edited_one_file.py", "--survey", str(tmp_path), "--runs", "1"])
    assert bench.main() == 0
    out = capsys.readouterr().out
    assert "1 files admitted by a QL1xx/QL2xx prefilter" in out
    assert "this     run 1: 1 files, CPU median" in out
    assert out.rstrip().endswith(str(pkg / "capture.py"))


_BUILDS = """\
from torch import nn


def build():
    model = nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3))
    model.train()
    return model
"""

_CAPTURE_BUILT = """\
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from pkg.{module} import build


def capture(x, quantizer):
    ep = export(build(), (x,)).module()
    return prepare_pt2e(ep, quantizer)
"""


def _elsewhere(tmp_path, capture: str, **modules: str) -> dict:
    import json
    import subprocess

    (tmp_path / ".git").mkdir()
    pkg = old_package(tmp_path, capture=capture, **modules)
    buffer = tmp_path / "edited.py"
    buffer.write_text(capture + "x = 1\n")
    bench = _bench()
    cmd = [sys.executable, "-c", bench._ELSEWHERE, str(tmp_path / "cache"), str(pkg / "capture.py"), str(buffer)]
    out = subprocess.run(cmd, cwd=tmp_path, env=bench._env(str(_ROOT)), capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_the_elsewhere_probe_charges_another_modules_helper_to_it(tmp_path):
    """`--elsewhere`: the flow of a helper of another module is work on that module (one
    outermost call), the checked module's own flows are not."""
    spent = _elsewhere(tmp_path, _CAPTURE_BUILT.format(module="builds"), builds=_BUILDS)
    assert set(spent) == {
        "their flows",
        "their statements parsed",
        "QL204 summaries of theirs",
        "listing and stats",
        "their helper search",
        "their facts computed",
        "whole check",
    }
    assert spent["their flows"][1] == 1
    assert 0 <= spent["their flows"][0] <= spent["whole check"][0]


def test_the_elsewhere_probe_charges_nothing_to_a_helper_of_the_checked_module(tmp_path):
    """The same helper written in the checked module: no flow of another module."""
    own = _CAPTURE_BUILT.format(module="capture").replace("from pkg.capture import build\n", _BUILDS)
    spent = _elsewhere(tmp_path, own)
    assert spent["their flows"] == [0.0, 0]


def test_the_elsewhere_option_prints_each_sides_work_on_other_modules(tmp_path, monkeypatch, capsys):
    (tmp_path / ".git").mkdir()
    pkg = old_package(tmp_path, capture=_CAPTURE_BUILT.format(module="builds"), builds=_BUILDS)
    monkeypatch.setenv("PYTHONPATH", str(_ROOT))
    argv = ["edited_one_file.py", str(pkg / "capture.py"), "--runs", "1", "--elsewhere"]
    monkeypatch.setattr(sys, "argv", argv)
    assert _bench().main() == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("   this     other modules (CPU ms"))
    assert "their flows " in line and "(1)" in line and "whole check " in line


_GRAPH_UTILS = """\
def insert_op(graph, op, args):
    return graph.call_function(op, args)
"""

_PASSES = """\
import torch

from pkg.graph_utils import insert_op


def rewrite(gm, node):
    insert_op(gm.graph, torch.ops.aten.relu, (node,))
"""


def test_the_elsewhere_probe_charges_the_search_of_an_imported_helper_to_its_module(tmp_path):
    """QL102's search for the insertion helper the checked module imports reads the module
    that defines it: work on that module."""
    spent = _elsewhere(tmp_path, _PASSES, graph_utils=_GRAPH_UTILS)
    assert spent["their helper search"][1] >= 1
    assert 0 <= spent["their helper search"][0] <= spent["whole check"][0]
    assert 0 <= spent["their facts computed"][0] <= spent["whole check"][0]


def test_the_elsewhere_probe_charges_no_search_to_a_helper_of_the_checked_module(tmp_path):
    """The same helper written in the checked module: no other module is searched."""
    own = _PASSES.replace("from pkg.graph_utils import insert_op\n", _GRAPH_UTILS)
    spent = _elsewhere(tmp_path, own)
    assert spent["their helper search"] == [0.0, 0]
    assert spent["their facts computed"] == [0.0, 0]


def test_a_fresh_run_checks_with_a_copy_of_the_cache_it_leaves_alone(tmp_path):
    """`--fresh`: each run starts from the cache as the tree run left it; what one run keeps
    is not the next one's to take."""
    bench = _bench()
    cache = tmp_path / "cache"
    (cache / "sub").mkdir(parents=True)
    (cache / "sub" / "kept").write_text("tree run")
    with bench.run_cache(str(cache), fresh=False) as used:
        assert used == str(cache)
    with bench.run_cache(str(cache), fresh=True) as used:
        assert used != str(cache)
        assert (Path(used) / "sub" / "kept").read_text() == "tree run"
        (Path(used) / "sub" / "kept").write_text("edited check")
        (Path(used) / "new").write_text("learnt")
    assert not Path(used).exists()
    assert (cache / "sub" / "kept").read_text() == "tree run"
    assert not (cache / "new").exists()


def test_the_fresh_option_gives_every_run_a_copy(tmp_path, monkeypatch, capsys):
    (tmp_path / ".git").mkdir()
    pkg = old_package(tmp_path, capture=_CAPTURE_BUILT.format(module="builds"), builds=_BUILDS)
    monkeypatch.setenv("PYTHONPATH", str(_ROOT))
    bench = _bench()
    asked = []
    real = bench.run_cache

    def recorded(cache, fresh):
        asked.append(fresh)
        return real(cache, fresh)

    monkeypatch.setattr(bench, "run_cache", recorded)
    monkeypatch.setattr(sys, "argv", ["edited_one_file.py", str(pkg / "capture.py"), "--runs", "2", "--fresh"])
    assert bench.main() == 0
    assert asked == [True, True]
    assert "   this     CPU" in capsys.readouterr().out
