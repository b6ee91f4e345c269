"""Calls that are statements of their own and hand the callee nothing the flow follows
(`main()` under `if __name__ == "__main__":`): the call is recorded as a caller site, and the
callee is analysed only where something asks for it (its own turn in the file's bodies, or a
call that hands it a value), never for that call alone."""

from __future__ import annotations

import ast
import os
import textwrap

from qlint.analysis.flow import model_interp
from qlint.analysis.flow.model_flow import module_flows
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.project import ProjectIndex
from qlint.optable import load_op_table
from qlint.rules.base import FileContext
from qlint.source import LineIndex
from tests.conftest import lint, write_package

HEAD = """\
import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer
"""


def _context(src: str, path: str = "snippet.py") -> FileContext:
    text = HEAD + textwrap.dedent(src)
    path = os.path.abspath(path)
    return FileContext(
        path, text, ast.parse(text), LineIndex(text), load_op_table(), ProjectIndex(), module_name_for(path)
    )


def interpreted(monkeypatch) -> list[str]:
    """The names of the bodies the model flow interprets from now on, in order (filled as it
    runs, until `monkeypatch` undoes it)."""
    seen: list[str] = []
    run = model_interp.Interpreter.run

    def counted(self):
        seen.append(getattr(self.func, "name", "<module>"))
        return run(self)

    monkeypatch.setattr(model_interp.Interpreter, "run", counted)
    return seen


def _analysed(monkeypatch, ctx: FileContext) -> list[str]:
    """The names of the bodies the model flow interprets for `ctx`, in order."""
    seen = interpreted(monkeypatch)
    module_flows(ctx)
    return seen


SCRIPT = """
def report():
    print("done")


def main():
    report()


if __name__ == "__main__":
    main()
"""


def test_a_bare_call_of_a_body_nothing_else_asks_for_is_not_analysed(monkeypatch):
    # `main` names no capture or quantization API and the module body hands it nothing.
    ctx = _context(SCRIPT)
    assert _analysed(monkeypatch, ctx) == ["<module>"]
    module = module_flows(ctx)[0]
    # Still a caller site: who calls `main` is read from the flows.
    assert [(site.callee.name, site.args) for site in module.calls] == [("main", {})]


def test_a_bare_call_handing_a_model_is_applied():
    # `to_eval(model)` is a statement of its own, but hands the helper a model: its `.eval()` counts.
    src = """
    def to_eval(m):
        m.eval()


    def quantize():
        model = nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3))
        to_eval(model)
        ep = export(model, (torch.randn(1, 3, 8, 8),))
        return prepare_pt2e(ep.module(), XNNPACKQuantizer())
    """
    assert [d.range.start.row for d in lint(HEAD + textwrap.dedent(src), select=("QL201",))] == []


def test_a_bare_call_of_a_helper_with_a_keyword_container_is_a_caller_site(monkeypatch):
    ctx = _context(
        """
        def settle(models=None):
            return models


        settle(models=[nn.Linear(2, 2)])
        """
    )
    module = module_flows(ctx)[0]
    (site,) = module.calls
    assert site.callee.name == "settle" and list(site.args) == [0] and isinstance(site.exprs[0], ast.List)


def test_a_bare_call_keeps_a_helper_vouched_by_its_callers():
    # `quantize()` under `__main__` passes no model; the other caller passes an eval-mode one.
    # The bare call must be a read call of `quantize`, or the helper would count as used
    # where the flow cannot see (issue 14, item 7) and be reported.
    src = """
    def quantize(model=None, x=torch.randn(1, 3, 8, 8)):
        ep = export(model, (x,))
        return prepare_pt2e(ep.module(), XNNPACKQuantizer())


    def main():
        quantize(nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3)).eval())


    if __name__ == "__main__":
        main()
        quantize()
    """
    assert [d.range.start.row for d in lint(HEAD + textwrap.dedent(src), select=("QL201",))] == []


def test_a_capture_reaching_prepare_two_modules_away_is_reported_after_a_bare_call(tmp_path):
    # The module body calls `main()` before `main`'s own turn: `main` is still analysed, and
    # its capture reaches `prepare_pt2e` through `steps.run` -> `quant.quantize`.
    write_package(
        tmp_path,
        "pkg",
        quant=HEAD + "\n\ndef quantize(ep):\n    return prepare_pt2e(ep.module(), XNNPACKQuantizer())\n",
        steps="from pkg.quant import quantize\n\n\ndef run(ep):\n    return quantize(ep)\n",
    )
    script = tmp_path / "script.py"
    src = HEAD + textwrap.dedent(
        """
        from pkg.steps import run


        def main():
            model = nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3))
            ep = export(model, (torch.randn(1, 3, 8, 8),))
            run(ep)


        if __name__ == "__main__":
            main()
        """
    )
    script.write_text(src)
    rows = [d.range.start.row for d in lint(src, path=str(script), select=("QL201",))]
    assert rows == [src.splitlines().index("    ep = export(model, (torch.randn(1, 3, 8, 8),))") + 1]
