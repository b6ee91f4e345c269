"""Rows of `#`s (section banners) beside a dotted chain are read in linear time.

The text gates once let a comment end anywhere inside such a row, so one banner split into
exponentially many comments: qlint never finished a 1,900-line lowering pass whose sections
open with `# Other ops` and a banner. Each case runs in a child process with a deadline, so
a regression fails here instead of hanging the suite.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

BANNER = "#" * 72

MATCHER_BETWEEN_BANNERS = f"""\
import torch


def lower(gm):
    for node in gm.graph.nodes:
        target = node.target
        {BANNER}
        # Other ops
        {BANNER}
        if target == torch.ops.aten.add:
            pass
"""


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60, check=True
    )


def test_a_matcher_between_banners_is_checked_and_reported(tmp_path):
    (tmp_path / "to_tt_pass.py").write_text(MATCHER_BETWEEN_BANNERS)
    proc = subprocess.run(
        [sys.executable, "-m", "qlint", "check", "--no-cache", "-j1", "--output-format", "concise", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    assert "to_tt_pass.py:10:" in proc.stdout and "QL101" in proc.stdout


def test_the_packet_gate_reads_a_banner_after_an_anchor_word():
    proc = _run(f"""
        from qlint.analysis.graphs.packet_text import spells_packet
        print(spells_packet("x = torch.ops  # ops\\n{BANNER}\\ny = 1\\n"))
        print(spells_packet("x = (torch.ops  # ops\\n{BANNER}\\n.aten.add)\\n"))
    """)
    # The root alone is no packet; continued across the banner, inside brackets, it is one.
    assert proc.stdout.split() == ["False", "True"]


def test_an_attribute_spelling_reads_a_banner_after_a_dot():
    proc = _run(f"""
        from qlint.analysis.graphs.chain_modules import _attribute
        print(_attribute(b"x = (y.  # see\\n{BANNER}\\n    other)\\n# insert_node\\n", "insert_node"))
        print(_attribute(b"x = (y.  # see\\n{BANNER}\\n    insert_node)\\n", "insert_node"))
    """)
    # A name inside a comment is not spelled; after the comments, on the next row, it is.
    assert proc.stdout.split() == ["False", "True"]
