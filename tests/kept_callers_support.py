"""Shared pieces of the tests of caller answers kept between runs (`kept_caller_verdicts`,
`kept_qat_callers`, `kept_call_paths`): a repository whose helper module `pkg/utils/<name>`
has its callers in `scripts/`, checked as pre-commit checks one edited file, in a new process
(every memo forgotten, a new index), with the store or without it."""

from __future__ import annotations

from pathlib import Path

from qlint.analysis import scan_memo
from qlint.analysis.flow import caller_modules, kept_call_paths, kept_caller_verdicts, kept_qat_callers
from qlint.analysis.graphs import kept_answers, kept_shards
from qlint.analysis.names import content_keys
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from tests.conftest import old_file, settings_for

# The helper module both QAT/PTQ caller tests check (`pkg/utils/qat_utils.py`): one capture
# whose branch its callers' `is_qat` picks.
HELPER = """\
import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


def quant(model, q, x, is_qat=False):
    gm = export(model, (x,)).module()
    if is_qat:
        return prepare_qat_pt2e(gm, q)
    return prepare_pt2e(gm, q)


def unrelated(path):
    return path + ".pte"
"""
# A train-mode model for QAT: the flag rules the PTQ branch out, and QL202 has nothing to report.
TRAINS = """\
from pkg.nets import Net
from pkg.utils.qat_utils import quant


def main(q, x):
    quant(Net(), q, x, is_qat=True)
"""

_TABLES = (kept_caller_verdicts._KEPT, kept_qat_callers._KEPT, kept_call_paths._KEPT)


def new_process() -> None:
    """Forget what this process learned, as a new `qlint` run starts without it."""
    caller_modules._MODULES.clear()
    content_keys._DIGESTS.clear()
    scan_memo.forget()
    kept_answers.forget()
    for table in _TABLES:
        table.clear()


def callers_repo(tmp_path: Path, helper: str, text: str, scripts: dict[str, str], **modules: str):
    """(the repository's root, the helper module's path): `pkg/utils/<helper>` holding `text`,
    `pkg/<module>.py` for each of `modules`, `scripts/<name>.py` for each of `scripts`; every
    file with an old mtime (`old_file`)."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "pkg" / "utils").mkdir(parents=True)
    old_file(root / "pkg" / "__init__.py", "")
    for name, source in modules.items():
        old_file(root / "pkg" / f"{name}.py", source)
    old_file(root / "pkg" / "utils" / "__init__.py", "")
    old_file(root / "pkg" / "utils" / helper, text)
    (root / "scripts").mkdir()
    old_file(root / "scripts" / "__init__.py", "")
    for name, source in scripts.items():
        old_file(root / "scripts" / f"{name}.py", source)
    return root, str(root / "pkg" / "utils" / helper)


def check_anew(rules: tuple[str, ...], path: str, text: str) -> tuple[list[tuple], int]:
    """(a new process's findings for the helper module holding `text`, caller modules analysed)."""
    new_process()
    built = caller_modules.BUILT[0]
    project = ProjectIndex(overlay={path: text})
    result = check_source(text, path, settings_for(rules), project)
    assert not result.errors, result.errors
    caller_modules.checked_once(path)
    kept_shards.flush()
    return [(d.code, d.range.start.row, d.message) for d in result.diagnostics], caller_modules.BUILT[0] - built


def check_without_store(rules: tuple[str, ...], path: str, text: str) -> list[tuple]:
    """`check_anew`'s findings from a run without a store (what the store must never change)."""
    kept_answers.use(None)
    try:
        found = check_anew(rules, path, text)[0]
        assert not any(_TABLES)  # nothing worked out for a store without one
        return found
    finally:
        new_process()
        kept_answers.use(ProjectIndex.store)


def edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1
    return text.replace(old, new)


def codes(found: list[tuple]) -> list[str]:
    return [code for code, _, _ in found]
