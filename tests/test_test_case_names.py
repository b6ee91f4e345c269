"""The names of `unittest.TestCase` dead code takes as called by the base (`test_case_names`):
a table, so that judging a test class's method does not import unittest (and the `inspect`,
`difflib`, `pprint` it pulls in), which holds every name the running Python's TestCase has."""

from __future__ import annotations

import subprocess
import sys
import unittest
from pathlib import Path

from qlint.analysis.graphs.test_case_names import TEST_CASE_NAMES
from tests.test_dead_code import PRELUDE

ROOT = Path(__file__).resolve().parents[1]


def test_every_name_of_the_running_pythons_test_case_is_listed():
    assert set(dir(unittest.TestCase)) <= TEST_CASE_NAMES


_CHECK = """
import sys
import qlint.cli
try:
    qlint.cli.main(["check", "--no-cache", "--quiet", "--exit-zero", sys.argv[1]])
except SystemExit:
    pass
print("unittest imported" if "unittest" in sys.modules else "unittest not imported")
"""


def _check(tmp_path: Path, method: str) -> list[str]:
    """A fresh `qlint check` of a test module whose test class defines `method` (converting
    without calibration: QL204), and whether it imported unittest."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "tests").mkdir()
    path = tmp_path / "tests" / "test_q.py"
    path.write_text(
        PRELUDE + "import unittest\n\n\nclass TestQ(unittest.TestCase):\n"
        f"    def {method}(self):\n"
        "        m = torch.export.export(torch.nn.ReLU().eval(), (1,)).module()\n"
        "        m = prepare_pt2e(m, self.quantizer)\n"
        "        return convert_pt2e(m)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", _CHECK, str(path)],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line for line in out.splitlines() if line.startswith(("tests/test_q.py:", "unittest"))]


def test_a_hook_override_is_reported_and_unittest_is_not_imported(tmp_path):
    lines = _check(tmp_path, "setUp")
    assert [line.split(" ")[:2] for line in lines] == [["tests/test_q.py:10:16:", "QL204"], ["unittest", "not"]]


def test_a_helper_method_nothing_calls_is_quiet_and_unittest_is_not_imported(tmp_path):
    assert _check(tmp_path, "quantize_with_quantizer") == ["unittest not imported"]
