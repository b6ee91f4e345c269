"""`qlint check -` on a module (an editor's or pre-commit's check of one edited buffer) imports
what checking it needs, not the tree walk, the rollout reports nor the notebook support: a
Python process pays for every module it imports, on each check of each edit."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# The command line in a fresh interpreter, then the modules it imported.
PROBE = """
import json, sys
from qlint.cli import main
main(["check", "--exit-zero", "--no-cache", "--stdin-filename", sys.argv[1], "-"])
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)))
"""
NOT_NEEDED = ("qlint.rollout", "qlint.rollout_cli", "qlint.repos", "qlint.discovery", "qlint.notebook")


def _imported(tmp_path, name: str, text: str) -> set[str]:
    path = tmp_path / name
    path.write_text(text)
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(path)], input=text.encode(), env=env, cwd=tmp_path, capture_output=True
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return set(json.loads(proc.stderr.decode().rpartition("MODULES ")[2]))


def test_a_buffer_check_imports_no_tree_walk_nor_notebook_support(tmp_path):
    modules = _imported(tmp_path, "m.py", "import torch\n\nx = torch.ops.aten.add\n")
    assert "qlint.engine" in modules  # the probe saw the check
    assert not [m for m in NOT_NEEDED if m in modules]


def test_a_notebook_buffer_still_gets_the_notebook_support(tmp_path):
    modules = _imported(tmp_path, "n.ipynb", '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    assert "qlint.notebook" in modules


# Read only where the project's wrapper index is built or another module's text is searched
# for wrappers, the Ctrl-C path of a forked child, and OpenSSL's hashing once a process has
# hashed more than a one-file check does: a check of one matcher needs none.
DEFERRED = (
    "qlint.analysis.graphs.wrapper_candidates",
    "qlint.analysis.graphs.module_text",
    "qlint.analysis.graphs.masked_text",
    "qlint.analysis.graphs.sink_index",
    "signal",
    "tomllib",
    "_hashlib",
)


def test_a_matcher_is_still_flagged_without_the_deferred_modules(tmp_path):
    text = (
        "import torch\n\n\ndef find(gm):\n    for node in gm.graph.nodes:\n"
        "        if node.target == torch.ops.quantized_decomposed.dequantize_per_tensor:\n"
        "            return node\n"
    )
    path = tmp_path / "m.py"
    path.write_text(text)
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(path)], input=text.encode(), env=env, cwd=tmp_path, capture_output=True
    )
    assert "m.py:6:" in proc.stdout.decode() and "QL101" in proc.stdout.decode()
    modules = set(json.loads(proc.stderr.decode().rpartition("MODULES ")[2]))
    assert "qlint.rules.ql101_packet_matcher" in modules and "qlint.analysis.graphs.forwarding" in modules
    assert [m for m in DEFERRED if m in modules] == []


def test_a_buffer_check_with_a_cache_reads_summaries_without_the_results_cache(tmp_path):
    # A buffer's result is never cached: the store of module summaries is found by the cache's
    # key alone (`cache_keys`), without the results cache and its listings and indexes.
    text = "import torch\n\n\ndef f(gm):\n    return gm.graph.call_function(torch.ops.aten.add, ())\n"
    path = tmp_path / "m.py"
    path.write_text(text)
    probe = PROBE.replace('"--no-cache"', '"--cache-dir", "cache"')
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    proc = subprocess.run(
        [sys.executable, "-c", probe, str(path)], input=text.encode(), env=env, cwd=tmp_path, capture_output=True
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert "m.py:5:" in proc.stdout.decode() and "QL102" in proc.stdout.decode()
    modules = set(json.loads(proc.stderr.decode().rpartition("MODULES ")[2]))
    assert "qlint.cache_keys" in modules  # the store of summaries was looked for
    results_cache = ("qlint.cache", "qlint.listing_store", "qlint.wrapper_store", "qlint.listed_dependencies")
    assert [m for m in results_cache if m in modules] == []


def test_a_check_of_a_file_on_disk_builds_no_dataclass(tmp_path):
    """`qlint check FILE` (pre-commit's call after an edit) or a tree run: the notebook support
    the runner imports to tell a notebook from a module makes its classes without `dataclasses`
    (`qlint.value_classes`), which imported `inspect`, `dis` and `tokenize` into every run that
    checked a file (~0.8 MiB of a run's memory, and its start-up)."""
    path = tmp_path / "m.py"
    path.write_text("import torch\n\nx = node.target == torch.ops.aten.add\n")
    probe = (
        "import sys\nfrom qlint.cli import main\n"
        "try:\n    main(['check', '--exit-zero', '--no-cache', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m in ('qlint.notebook', 'dataclasses', 'inspect', 'dis')))"
    )
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    argv = [sys.executable, "-c", probe, str(path)]
    out = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert "QL101" in out.stdout  # the file was checked
    assert out.stdout.strip().splitlines()[-1] == "['qlint.notebook']"


def test_a_plain_check_of_a_capture_helper_loads_neither_argparse_nor_openssl(tmp_path):
    """The command line of an editor's or pre-commit's check is read without argparse
    (`qlint.plain_args`), and QL201's kept caller verdicts hash the checked module's shape with
    `short_digests` (its budget, as every digest of a one-file check): argparse with gettext
    and locale, and OpenSSL (`hashlib`), each cost a few milliseconds of every such process."""
    helper = (
        "import torch\nfrom torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n\n\n"
        "def quantize(model, example, quantizer):\n    ep = torch.export.export(model, example)\n"
        "    return prepare_pt2e(ep.module(), quantizer)\n"
    )
    (tmp_path / "user.py").write_text(
        "import torch\nfrom helper import quantize\n\n\ndef run(q):\n"
        "    m = torch.nn.BatchNorm1d(2).eval()\n    return quantize(m, (torch.randn(1, 2),), q)\n"
    )
    modules = _imported(tmp_path, "helper.py", helper)
    assert "qlint.analysis.flow.kept_caller_verdicts" in modules  # QL201 searched the helper's callers
    assert [m for m in ("argparse", "gettext", "_hashlib") if m in modules] == []


def test_a_buffer_check_reading_a_kept_wrapper_index_imports_no_helper_search(tmp_path):
    """A module no rule's text reads, checked after a tree run kept the project's wrapper
    index: the index is read (`wrapper_index`), not built, and the helper search whose chain
    depth the builder takes from `wrapper_chains` is not imported (with it, seven modules)."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "b.py").write_text(
        "import torch\n\n\ndef f(gm):\n    return gm.graph.call_function(torch.ops.aten.add, ())\n"
    )
    text = "import torch\n\n\ndef lower(m):\n    return torch.compile(m)\n"
    (tmp_path / "pkg" / "a.py").write_text(text)
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    tree_run = [sys.executable, "-m", "qlint", "check", "--exit-zero", "-q", "--cache-dir", "cache", "."]
    assert subprocess.run(tree_run, env=env, cwd=tmp_path, capture_output=True).returncode == 0
    probe = PROBE.replace('"--no-cache"', '"--cache-dir", "cache"')
    proc = subprocess.run(
        [sys.executable, "-c", probe, "pkg/a.py"], input=text.encode(), env=env, cwd=tmp_path, capture_output=True
    )
    assert proc.returncode == 0, proc.stderr.decode()
    modules = set(json.loads(proc.stderr.decode().rpartition("MODULES ")[2]))
    assert "qlint.analysis.graphs.wrapper_index" in modules  # the kept index was read
    assert "qlint.analysis.graphs.wrapper_chains" not in modules
