"""The helper search asks the methods a module's classes inherit once per class and depth in a
check (`imported_helpers._inherited_helpers`): `helper_names` walks each class's chain of bases,
and subclasses of one base share its chain (torch's `_inductor/ir.py`: ~100 classes, 9,120
asks of `forwarded_params` for ~400 methods). The answers are the same: a wrapper method
inherited through the shared base is still found, and a look-alike that inserts nothing is not."""

from __future__ import annotations

import pytest

from qlint.analysis.graphs import forwarding
from qlint.analysis.names.project import ProjectIndex
from tests.conftest import check_file

BUILDER = "class Builder:\n    def insert(self, graph, op):\n        return graph.{call}(op, ())\n"
USER = """import torch

from pkg.builders import Builder


class Base(Builder):
    def noop(self, x):
        return x

{siblings}

class Last(Base):
    def run(self, gm):
        self.insert(gm.graph, torch.ops.aten.relu)
"""


def _checked(tmp_path, siblings: int, call: str, monkeypatch) -> tuple[list[int], int]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    pkg = tmp_path / "pkg"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "builders.py").write_text(BUILDER.format(call=call))
    classes = "\n".join(f"class S{i}(Base):\n    pass\n\n" for i in range(siblings))
    (pkg / "user.py").write_text(USER.format(siblings=classes))
    asked: list[str] = []
    real = forwarding.Forwarding.forwarded_params

    def counted(self, func, *args, **kwargs):
        if getattr(func, "name", None) == "noop":
            asked.append(func.name)
        return real(self, func, *args, **kwargs)

    monkeypatch.setattr(forwarding.Forwarding, "forwarded_params", counted)
    monkeypatch.setattr(forwarding, "SHARED", {})
    result = check_file(pkg / "user.py", ("QL102",), ProjectIndex())
    return [d.range.start.row for d in result.diagnostics], len(asked)


def test_a_shared_base_is_asked_once_however_many_subclasses(tmp_path, monkeypatch):
    rows_one, asked_one = _checked(tmp_path, 1, "call_function", monkeypatch)
    rows_many, asked_many = _checked(tmp_path, 6, "call_function", monkeypatch)
    assert asked_one > 0 and asked_many == asked_one
    assert len(rows_one) == len(rows_many) == 1  # the packet Last.run hands to Builder.insert


@pytest.mark.parametrize("siblings", [1, 6])
def test_an_inherited_method_that_inserts_nothing_is_no_wrapper(tmp_path, monkeypatch, siblings):
    rows, _ = _checked(tmp_path, siblings, "getattr", monkeypatch)
    assert rows == []
