"""EXQ101 through qlint's own engine, as installed: the registry finds the entry point."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from qlint.engine import check_source
from qlint.settings import Settings

from qlint_example_plugin.print_in_pass import PrintInGraphPass

SETTINGS = Settings(select=("EXQ",))


def lint(source: str) -> list[tuple[str, int]]:
    result = check_source(textwrap.dedent(source), "snippet.py", SETTINGS)
    assert not result.errors, result.errors
    return [(d.code, d.range.start.row) for d in result.diagnostics]


def test_print_in_a_pass_function_and_in_a_pass_class():
    assert lint(
        """
        from torch.fx.passes.infra.pass_base import PassBase

        def fuse_pass(gm):
            print("fusing")

        class Fold(PassBase):
            def call(self, gm):
                print(gm)
        """
    ) == [("EXQ101", 5), ("EXQ101", 9)]


def test_quiet_outside_passes_and_for_other_prints():
    assert (
        lint(
            """
            def helper(gm):
                print(gm)

            class Report:
                def call(self, gm):
                    print(gm)

            def run_pass(gm):
                self.print(gm)
                log.info("print(x)")
            """
        )
        == []
    )


def test_a_print_in_a_nested_pass_is_reported_once():
    assert lint(
        """
        def outer_pass(gm):
            def inner_pass(node):
                print(node)
        """
    ) == [("EXQ101", 4)]


def test_page_examples():
    page = Path(PrintInGraphPass.page_path()).read_text()
    example, use_instead = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert [code for code, _ in lint(example)] == ["EXQ101"]
    assert lint(use_instead) == []
