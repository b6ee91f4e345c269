"""A re-check of an edited buffer reuses the unchanged statements of the last check's tree
(`statement_reuse`), and with them what the analyses kept on their nodes (issue 13).

Two things must hold: the tree is the one a fresh parse gives (every field and position),
and a check with reuse reports exactly what a fresh check of the same text reports, however
the edit changed what unchanged bodies read (a module constant, an import, a renamed
function, another module).
"""

from __future__ import annotations

import ast
import os
import random
import textwrap

from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.statement_reuse import PreviousTrees, confined_edit, edited_lines, graft
from qlint.engine import check_source
from tests.conftest import settings_for

MODULE = textwrap.dedent(
    """\
    import torch

    OPS = {torch.ops.aten.relu.default}


    @decorated(1)
    def first(node):
        return node.target in OPS


    class Matchers:
        def second(self, node):
            x = 1
            return node.target == torch.ops.aten.add.Tensor

        def third(self, node):
            try:
                pass
            except ValueError:
                return 2


    def last(value):
        match value:
            case 1:
                return "one"
            case _:
                return value
    """
)


def _reused(old: str, new: str) -> tuple[ast.Module, ast.Module, int]:
    old_tree, new_tree = ast.parse(old), ast.parse(new)
    put = graft(old, old_tree, new, new_tree)
    assert ast.dump(new_tree, include_attributes=True) == ast.dump(ast.parse(new), include_attributes=True)
    return old_tree, new_tree, put


def _named(tree: ast.Module, name: str) -> ast.AST:
    return next(n for n in ast.walk(tree) if getattr(n, "name", None) == name)


def test_edited_lines_brackets_the_change():
    assert edited_lines("a\nb\nc\n", "a\nbx\nc\n") == (2, 2, 0)
    assert edited_lines("a\nb\nc\n", "a\nb\nb\nc\n") == (3, 4, 1)  # the suffix's first line counts
    assert edited_lines("a\nb\n", "a\nb\n") == (3, 3, 0)  # nothing changed: no line is edited


def test_an_edit_inside_one_method_reuses_every_other_statement():
    new = MODULE.replace("x = 1", "x = 12")
    old_tree, new_tree, put = _reused(MODULE, new)
    assert put > 0
    for name in ("first", "third", "last"):
        assert _named(new_tree, name) is _named(old_tree, name)
    assert _named(new_tree, "second") is not _named(old_tree, "second")
    # The class holding the edit is the new parse; its unchanged method is the old node.
    assert _named(new_tree, "Matchers") is not _named(old_tree, "Matchers")
    assert new_tree.body[0] is old_tree.body[0]  # the import above


def test_statements_below_a_new_line_are_not_reused():
    new = MODULE.replace("x = 1\n", "x = 1\n        y = 2\n")
    old_tree, new_tree, _ = _reused(MODULE, new)
    assert _named(new_tree, "first") is _named(old_tree, "first")
    for name in ("third", "last"):  # their rows moved: a node's kept facts may hold rows
        assert _named(new_tree, name) is not _named(old_tree, name)


def test_an_edited_decorator_or_class_header_is_a_change_of_that_statement():
    old_tree, new_tree, _ = _reused(MODULE, MODULE.replace("@decorated(1)", "@decorated(2)"))
    assert _named(new_tree, "first") is not _named(old_tree, "first")
    assert _named(new_tree, "second") is _named(old_tree, "second")
    old_tree, new_tree, _ = _reused(MODULE, MODULE.replace("class Matchers:", "class Matcher:"))
    assert _named(new_tree, "second") is _named(old_tree, "second")
    assert _named(new_tree, "Matcher") is not _named(old_tree, "Matchers")


def test_a_statement_that_changed_block_is_the_new_parse_where_its_text_is_the_same():
    # `if True:` replaces the class header: `second` keeps its text, lines and columns.
    new = MODULE.replace("class Matchers:", "if True:     ")
    old_tree, new_tree, _ = _reused(MODULE, new)
    assert isinstance(new_tree.body[3], ast.If)
    assert _named(new_tree, "second") is _named(old_tree, "second")


def test_random_edits_give_the_fresh_parse():
    # Every edit of a real module that still parses: the tree with reused statements dumps
    # exactly as a fresh parse (fields, rows and columns), through a run of edits.
    path = os.path.join(os.path.dirname(ast.__file__), "textwrap.py")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    rng = random.Random(13)
    tree, checked, reused = ast.parse(text), 0, 0
    while checked < 40:
        at = rng.randrange(len(text))
        kind = rng.randrange(4)
        if kind == 0:
            new = text[:at] + rng.choice(["x", " ", "1", "(", ")", ":", "#", "'", '"""', "\t"]) + text[at:]
        elif kind == 1:
            new = text[:at] + text[at + rng.randint(1, 30) :]
        elif kind == 2:
            new = text[:at] + "\n" + text[at:]
        else:
            line_start, line_end = text.rfind("\n", 0, at) + 1, text.find("\n", at) + 1 or len(text)
            new = text[:line_end] + text[line_start:line_end] + text[line_end:]
        try:
            new_tree = ast.parse(new)
        except (SyntaxError, ValueError):
            continue
        reused += graft(text, tree, new, new_tree)
        assert ast.dump(new_tree, include_attributes=True) == ast.dump(ast.parse(new), include_attributes=True)
        text, tree, checked = new, new_tree, checked + 1
    assert reused > 200


def test_previous_trees_are_bounded_and_dropped():
    kept = PreviousTrees(limit=2)
    for name in "abc":
        kept.keep(name, "x = 1\n", ast.parse("x = 1\n"))
    assert kept.reuse("a", "x = 1\n", ast.parse("x = 1\n")) == 0  # the oldest went
    assert kept.reuse("c", "x = 1\ny = 2\n", ast.parse("x = 1\ny = 2\n")) == 1
    kept.drop("c")
    assert kept.reuse("c", "x = 1\n", ast.parse("x = 1\n")) == 0


# -- the checks: with reuse, what a fresh check of the same text says ----------------------

QL101 = textwrap.dedent(
    """\
    import torch
    from pkg.ops import EXTRA

    DQ_OPS = {torch.ops.quantized_decomposed.dequantize_per_channel}


    def count(ep):
        return sum(1 for n in ep.graph.nodes if n.target in DQ_OPS)


    def extra(ep):
        return [n for n in ep.graph.nodes if n.target in EXTRA]


    def helper(node):
        return node.target == torch.ops.aten.relu.default


    def uses_helper(ep):
        return [n for n in ep.graph.nodes if helper(n)]
    """
)

QL201 = textwrap.dedent(
    """\
    import torch
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


    def capture(model, example):
        return torch.export.export(model, example).module()


    def quantize(model, quantizer, calibration):
        prepared = prepare_pt2e(capture(model, (calibration[0],)), quantizer)
        for batch in calibration:
            prepared(batch)
        return convert_pt2e(prepared)


    def other(model):
        model.eval()
        return model
    """
)


def _rows(project: ProjectIndex | None, path: str, text: str, select=("QL",)) -> list[tuple]:
    result = check_source(text.encode(), path, settings_for(select), project)
    assert not result.errors, result.errors
    return [(d.code, d.range.start.row, d.range.start.col, d.message) for d in result.diagnostics]


def _same_as_fresh(tmp_path, texts: list[str], others: dict[str, list[str]] | None = None):
    """Check `texts` in turn with one project (reuse) and each with a fresh one; `others`:
    the other modules' text at each step (an editor's buffers). Returns the findings."""
    path = str(tmp_path / "pkg" / "checked.py")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(os.path.join(os.path.dirname(path), "__init__.py"), "w").close()
    kept = ProjectIndex()
    seen = []
    for step, text in enumerate(texts):
        overlay = {str(tmp_path / "pkg" / name): versions[step] for name, versions in (others or {}).items()}
        for other, content in overlay.items():
            kept.update(other, content)
        reused = _rows(kept, path, text)
        assert reused == _rows(ProjectIndex(overlay), path, text), step
        seen.append(reused)
    return seen


def test_a_module_constant_edited_changes_the_findings_of_unchanged_bodies(tmp_path):
    ops = ["EXTRA = {1}\n"] * 2
    edited = QL101.replace("dequantize_per_channel}", "dequantize_per_channel.default}")
    seen = _same_as_fresh(tmp_path, [QL101, edited], {"ops.py": ops})
    assert [r[1] for r in seen[0]] != [r[1] for r in seen[1]]


def test_an_import_changed_or_another_module_changed(tmp_path):
    ops = ["EXTRA = {1}\n", "import torch\nEXTRA = {torch.ops.aten.add}\n", "EXTRA = {1}\n"]
    swapped = QL101.replace("from pkg.ops import EXTRA", "EXTRA = {torch.ops.aten.mul}")
    seen = _same_as_fresh(tmp_path, [QL101, QL101, swapped], {"ops.py": ops})
    assert len({len(s) for s in seen}) > 1


def test_a_renamed_function_and_an_edited_helper(tmp_path):
    texts = [
        QL101,
        QL101.replace("def helper(", "def helper_(", 1),
        QL101.replace("relu.default", "relu"),
        QL101.replace("relu.default", "relu") + "\n",
        QL201,
        QL201.replace("model.eval()", "model.eval(); model.train()"),
        QL201.replace("return torch.export", "model.eval()\n    return torch.export"),
        QL201.replace("def capture(", "def captured("),
    ]
    seen = _same_as_fresh(tmp_path, texts)
    assert seen[0] != seen[2] and seen[4] != seen[6]


def _confined(old: str, new: str):
    old_tree, new_tree = ast.parse(old), ast.parse(new)
    first, _, added = edited_lines(old, new)
    graft(old, old_tree, new, new_tree)
    return old_tree, new_tree, confined_edit(old, old_tree, new_tree, first, added)


def test_an_edit_confined_to_one_method_body():
    old_tree, new_tree, found = _confined(MODULE, MODULE.replace("x = 1", "x = 12"))
    assert found is not None and found.old is _named(old_tree, "second") and found.new is _named(new_tree, "second")
    assert found.old_class is _named(old_tree, "Matchers") and found.new_class is _named(new_tree, "Matchers")
    assert found.new_class.bases is found.old_class.bases  # the header's expressions are the old ones
    _, _, found = _confined(MODULE, MODULE.replace("return node.target in OPS", "return node.target in OPS2"))
    assert found is not None and found.old_class is None


def test_edits_that_are_not_confined_to_a_body():
    for new in (
        MODULE.replace("OPS = {torch.ops.aten.relu.default}", "OPS = {torch.ops.aten.relu}"),  # a module statement
        MODULE.replace("@decorated(1)", "@decorated(2)"),  # a header
        MODULE.replace("def second(self, node):", "def second(self, nodes):"),
        MODULE.replace("class Matchers:", "class Matcher:"),
        MODULE.replace("x = 1\n", "x = 1\n        y = 2\n"),  # a line added
        MODULE.replace("x = 1\n", "x = 1; y = 2\n").replace("    return 2", "    return 3"),  # two bodies
    ):
        assert _confined(MODULE, new)[2] is None, new
