"""QL102 on an installed package (torch's own checkout is one): the import root of a file under
`site-packages` is all of site-packages, so an import of another installed package resolves
there, and a function of that package which inserts what it is given is a wrapper like any
other. Such packages exist beside torch (coremltools' `optimize/torch/_utils/graph_utils.py`,
ExecuTorch's passes): the helper search of an installed file must follow imports into them,
not only into its own top-level package (a bound that skipped them would miss the first case)."""

from __future__ import annotations

import pytest

from tests.conftest import check_file

WRAPPER = "def insert(graph, op):\n    return graph.{call}(op, ())\n"
USER = """import torch

from extpkg.graph_utils import insert


def rewrite(gm):
    insert(gm.graph, torch.ops.aten.relu)
"""


def _installed(tmp_path, call: str):
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    for package, module, text in (
        ("extpkg", "graph_utils.py", WRAPPER.format(call=call)),
        ("torchlike", "passes.py", USER),
    ):
        (site / package).mkdir(parents=True, exist_ok=True)
        (site / package / "__init__.py").write_text("")
        (site / package / module).write_text(text)
    return site / "torchlike" / "passes.py"


@pytest.mark.parametrize(("call", "found"), [("call_function", [7]), ("getattr", [])])
def test_a_wrapper_of_another_installed_package(tmp_path, call, found):
    result = check_file(_installed(tmp_path, call), ("QL102",))
    assert [d.range.start.row for d in result.diagnostics] == found
