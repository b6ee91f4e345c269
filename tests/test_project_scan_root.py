"""The project a module belongs to for the cross-module questions of QL101/QL102 (`scan_root`):
counted up from the file by its module name, so a package mapped onto the repository root is
the repository even where a directory on the way lacks `__init__.py`."""

from __future__ import annotations

import textwrap

from qlint.analysis.graphs.project_scan import scan_root
from qlint.engine import check_source
from tests.conftest import mapped_repository, settings_for

INSERTER = """\
import torch
from torch.fx import symbolic_trace


def add_relu(model, node):
    gm = symbolic_trace(model)
    gm.graph.call_function(torch.ops.aten.relu, (node,))
    return gm
"""

MATCHER = """\
import torch


def count_relus(gm):
    return sum(n.target == torch.ops.aten.relu for n in gm.graph.nodes)
"""


def test_a_package_mapped_onto_the_repository_root_is_the_repository(tmp_path):
    passes = mapped_repository(tmp_path)
    (passes / "add.py").write_text("x = 1\n")
    assert scan_root(str(passes / "add.py")) == str(tmp_path)
    assert scan_root(str(passes / "__init__.py")) == str(tmp_path)


def test_a_package_of_init_files_is_its_top_directory(tmp_path):
    (tmp_path / "top" / "inner").mkdir(parents=True)
    for d in (tmp_path / "top", tmp_path / "top" / "inner"):
        (d / "__init__.py").touch()
    (tmp_path / "top" / "inner" / "m.py").write_text("x = 1\n")
    (tmp_path / "script.py").write_text("x = 1\n")
    assert scan_root(str(tmp_path / "top" / "inner" / "m.py")) == str(tmp_path / "top")
    assert scan_root(str(tmp_path / "top" / "inner" / "__init__.py")) == str(tmp_path / "top")
    assert scan_root(str(tmp_path / "script.py")) is None


def test_a_packet_inserted_elsewhere_in_the_mapped_repository_quiets_the_matcher(tmp_path):
    # The matcher's project is the repository, where another module inserts the packet into
    # legacy FX graphs; with the import root joined with `executorch` no module was seen.
    passes = mapped_repository(tmp_path)
    other = tmp_path / "backends" / "other"
    other.mkdir()
    (other / "__init__.py").touch()
    (other / "inserter.py").write_text(INSERTER)
    matcher = passes / "matcher.py"
    matcher.write_text(MATCHER)
    result = check_source(matcher.read_bytes(), str(matcher), settings_for(("QL101",)))
    assert result.diagnostics == []
    (other / "inserter.py").write_text(textwrap.dedent("x = 1\n"))
    result = check_source(matcher.read_bytes(), str(matcher), settings_for(("QL101",)))
    assert [d.code for d in result.diagnostics] == ["QL101"]
