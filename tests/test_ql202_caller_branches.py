"""QL202: a shared helper's QAT branch, decided call by call (the mirror of QL201's, issue 14).

A helper that puts the model in eval mode and prepares for QAT only under `if is_qat:` is
right when no call path into it can take that branch: every call leaves `is_qat` False (or
passes it), or forwards its own flag to callers that do. One call that may pass True, a flag
the analysis cannot read, a use of the helper that is not a call, or no caller at all keeps
the report. The walk is QL201's (`call_paths`); these tests hold its QAT side.
"""

from __future__ import annotations

import textwrap

from tests.conftest import check_file, lint, package_repository, rows_of

HEAD = """\
import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 3)
        self.bn = torch.nn.BatchNorm2d(3)


def quantize(model, x, quantizer, is_qat=False):
    model.eval()
    gm = export(model, (x,)).module()
    if is_qat:
        return prepare_qat_pt2e(gm, quantizer)
    return prepare_pt2e(gm, quantizer)
"""
CAPTURE = HEAD.splitlines().index("    gm = export(model, (x,)).module()") + 1


def rows(src: str, tmp_path) -> list[int]:
    """QL202's rows for `src` after HEAD, checked as the one module of a repository."""
    root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
    (root / ".git").mkdir(parents=True)
    return [d.range.start.row for d in lint(HEAD + textwrap.dedent(src), path=str(root / "h.py"), select=("QL202",))]


def test_callers_that_leave_or_pass_the_ptq_flag_are_quiet(tmp_path):
    assert rows("\n\ndef main(x, q):\n    return quantize(Net(), x, q)\n", tmp_path) == []
    assert rows("\n\ndef main(x, q):\n    return quantize(Net(), x, q, is_qat=False)\n", tmp_path) == []
    assert rows("\n\ndef main(x, q):\n    return quantize(Net(), x, q, False)\n", tmp_path) == []


def test_a_flag_forwarded_to_callers_that_all_pass_false_is_quiet(tmp_path):
    src = """

    def run(model, x, q, qat=False):
        return quantize(model, x, q, is_qat=qat)


    def main(x, q):
        run(Net(), x, q)
        run(Net(), x, q, qat=False)
    """
    assert rows(src, tmp_path) == []


def test_a_caller_that_may_take_the_qat_branch_keeps_the_report(tmp_path):
    assert rows("\n\ndef main(x, q):\n    return quantize(Net(), x, q, is_qat=True)\n", tmp_path) == [CAPTURE]
    # One caller of two is enough.
    two = "\n\ndef main(x, q):\n    quantize(Net(), x, q)\n    quantize(Net(), x, q, is_qat=True)\n"
    assert rows(two, tmp_path) == [CAPTURE]
    # Forwarded, and one caller up passes True.
    up = "\n\ndef run(x, q, qat):\n    return quantize(Net(), x, q, is_qat=qat)\n"
    up += "\n\ndef main(x, q):\n    run(x, q, True)\n"
    assert rows(up, tmp_path) == [CAPTURE]


def test_callers_that_cannot_all_be_read_keep_the_report(tmp_path):
    # A flag the analysis cannot read, handed on by a function nobody calls.
    assert rows("\n\ndef run(x, q, flag):\n    return quantize(Net(), x, q, is_qat=flag)\n", tmp_path) == [CAPTURE]
    # `**options` may hold the flag.
    assert rows("\n\ndef run(x, q, **options):\n    return quantize(Net(), x, q, **options)\n", tmp_path) == [CAPTURE]
    # The helper handed on as a callback.
    assert rows("\n\ndef run(x, q):\n    return apply(quantize, Net(), x, q)\n", tmp_path) == [CAPTURE]
    # Nobody calls it: it is there for callers qlint cannot see.
    assert rows("", tmp_path) == [CAPTURE]


def test_a_caller_in_another_module_decides_too(tmp_path):
    root = package_repository(tmp_path / "repo")
    helper = root / "pkg" / "quant.py"
    helper.write_text(HEAD)

    def check(flag: str) -> list[int]:
        (root / "run.py").write_text(
            f"from pkg.quant import Net, quantize\n\n\ndef main(x, q):\n    quantize(Net(), x, q{flag})\n"
        )
        return rows_of(check_file(helper, ("QL202",)).diagnostics)

    assert check("") == []
    assert check(", is_qat=True") == [CAPTURE]
