"""`text_imports` reads a module's imports from its text: never fewer than `ModuleScope` binds."""

from __future__ import annotations

import ast
import textwrap

import pytest

from qlint.analysis.names.scope import ModuleScope
from qlint.analysis.names.text_imports import class_bases, imported_modules, may_import, text_imports

SOURCES = {
    "plain": "import os\nimport a.b.c\nimport a.b as ab, x as y\n",
    "from": "from pkg.mod import f, g as h\nfrom pkg import (\n    one,  # the first (see F401)\n    two as deux,\n)\n",
    "relative": "from . import sibling\nfrom ..up import thing\nfrom .here import *\n",
    "continued": "from pkg.mod import a, \\\n    b\nimport os; from pkg.other import c\n",
    "guarded": "try:\n    from fast import impl\nexcept ImportError:\n    from slow import impl\n"
    "if X:\n    import z as zz\n",
}


@pytest.mark.parametrize("src", SOURCES.values(), ids=SOURCES.keys())
def test_every_import_the_scope_binds_is_read(src):
    src = textwrap.dedent(src)
    path = "/proj/pkg/sub/mod.py"
    scope = ModuleScope.build(ast.parse(src), "pkg.sub.mod", path)
    pairs = set(text_imports(src, "pkg.sub.mod", path))
    assert set(scope.imports.items()) <= pairs


def test_function_level_imports_are_read_too():
    src = "def f():\n    from pkg.late import helper\n    return helper\n"
    assert ("helper", "pkg.late.helper") in text_imports(src, "m", "/p/m.py")


def test_class_bases_with_dotted_names_and_keywords():
    src = "class A(Base, mod.Other, metaclass=Meta):\n    pass\n\n  class B(\n    pkg.deep.C[int]):\n    pass\n"
    bases = class_bases(src)
    assert {("Base",), ("mod", "Other"), ("Meta",), ("pkg", "deep", "C"), ("int",)} <= bases


def test_an_unclosed_bracket_full_of_comments_is_read_in_linear_time():
    # Each comment could end at any of its characters if the pattern let it: 2**40 ways.
    src = "from x import (\n" + "# a comment without the bracket\n" * 40
    assert text_imports(src, "m", "/p/m.py") == []


def test_file_imports_names_the_module_only_for_a_relative_import(tmp_path, monkeypatch):
    from qlint.analysis.names import text_imports as module

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").touch()
    path = str(pkg / "mod.py")
    named = []
    monkeypatch.setattr(module, "module_name_for", lambda p: named.append(p) or "pkg.mod")
    assert module.file_imports("import os\nfrom pkg.a import b\n", path) == [("os", "os"), ("b", "pkg.a.b")]
    assert named == []
    text = "import os\nfrom \t.a import b\n"
    assert module.file_imports(text, path) == [("os", "os"), ("b", "pkg.a.b")]
    assert module.file_imports(text, path) == [("os", "os"), ("b", "pkg.a.b")]
    assert named == [path]  # once per text


@pytest.mark.parametrize(
    "src, expected",
    [
        # Bare names (read without the alias pattern) and every form the pattern reads.
        ("from p import a, b_2, _c\n", [("a", "p.a"), ("b_2", "p.b_2"), ("_c", "p._c")]),
        ("import a.b.c, d\n", [("a", "a"), ("d", "d")]),
        ("from p import (a,\n    b as  bb,  # why\n    c)\n", [("a", "p.a"), ("bb", "p.b"), ("c", "p.c")]),
        ("import a.b as ab, x\\\n  as y\n", [("ab", "a.b"), ("y", "x")]),
        ("from p import a as\tb, 2bad, c d\n", [("b", "p.a"), ("2bad", "p.2bad")]),
        ("from p import é, a\n", [("é", "p.é"), ("a", "p.a")]),
    ],
)
def test_the_names_of_an_import_statement(src, expected):
    assert text_imports(src, "m", "/p/m.py") == expected


@pytest.mark.parametrize(
    "names, expected",
    [
        ("a, b_2, _c", [("a", None), ("b_2", None), ("_c", None)]),
        ("(pkg.mod,\n  other )", [("pkg.mod", None), ("other", None)]),
        (" .a , a..b ", [(".a", None), ("a..b", None)]),  # what `[\w.]+` matches whole
    ],
)
def test_plain_names_are_read_without_the_alias_pattern(monkeypatch, names, expected):
    from qlint.analysis.names import text_imports as module

    class Refusing:
        def match(self, text):
            raise AssertionError(f"the alias pattern was asked about {text!r}")

    monkeypatch.setattr(module, "_ALIAS", Refusing())
    assert module._aliases(names) == expected


@pytest.mark.parametrize(
    "part", ["a", "a.b", ".a", "a..b", "2bad", "a b", "a as b", "a\tas  b", "é", "a-b", "", " ", "a.b as c"]
)
def test_every_part_reads_as_the_alias_pattern_reads_it(part):
    from qlint.analysis.names.text_imports import _ALIAS, _aliases

    m = _ALIAS.match(" ".join(part.split()))
    assert _aliases(part) == ([(m.group(1), m.group(2))] if m else [])


# How else imports are written, for `may_import`: names ending a statement, a bracket or a
# compound statement, aliases over continued rows, comments with any character.
MORE_SOURCES = {
    "compound": "if TYPE_CHECKING: import pkg.typing_only\ntry: from fast import impl\nexcept ImportError: pass\n",
    "commented list": "from pkg import (  # why: see x = y\n    # one: two\n    first,\n    second as s  # (b)\n)\n",
    "continued alias": "import pkg.mod \\\n  as m\nfrom pkg.deep \\\n    import leaf\n",
    "semicolons": "x = 1; import a.b; from c import d;\n",
    "tight": "from .rel import(x,y)\nfrom..up import z\n",
    "unicode": "from pkg import é as e\nimport β.ñ\n",
}


def _imported_last_parts(tree: ast.Module) -> set[str]:
    # What `packet_scan.imported_names` reads from a parsed module.
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            out.update([node.module.rpartition(".")[2]] if node.module else [])
            out.update(a.name for a in node.names if a.name != "*")
        elif isinstance(node, ast.Import):
            out.update(a.name.rpartition(".")[2] for a in node.names)
    return out


@pytest.mark.parametrize("src", [*SOURCES.values(), *MORE_SOURCES.values()], ids=[*SOURCES, *MORE_SOURCES])
def test_may_import_never_misses_a_name_an_import_binds_or_comes_from(src):
    names = _imported_last_parts(ast.parse(textwrap.dedent(src)))
    assert names
    assert all(may_import(textwrap.dedent(src), n) for n in names)


@pytest.mark.parametrize(
    "src",
    [
        "class Step:\n    def __init__(self):\n        super().__init__()\n",
        "import torch\n\nf = torch._decomp.decompositions.f\n",
        "from pkg import decompositions_for_jvp\nx = get_decompositions()\n",
        "def run(table):\n    return len(table.decompositions)\n",
        '"""Matches what decompositions\nleave; see torch._decomp.decompositions."""\n',
        'import os\n\nx = {"decompositions": 1}\n',
        "import os\n\n\ndef f(table, decompositions=None):\n    return decompositions\n",
    ],
)
def test_may_import_is_false_where_a_name_is_spelled_outside_any_import(src):
    assert not may_import(src, "decompositions") and not may_import(src, "__init__")


def test_may_import_counts_a_walk_too_long_to_finish_as_an_import():
    # A name list longer than the walk reaches: the answer may only err towards a parse.
    src = "from pkg import (\n" + "    name,\n" * 1000 + "    last,\n)\n"
    assert may_import(src, "last")
    assert not may_import("x = 1\n" + "y\n" * 1000 + "last\n", "last")


def test_file_imports_names_the_module_for_a_relative_import_statement_only(tmp_path, monkeypatch):
    # `from .` in prose (a docstring) is no relative import: the module is not named for it,
    # while a relative statement after it still is.
    from qlint.analysis.names import text_imports as module

    named = []
    monkeypatch.setattr(module, "module_name_for", lambda p: named.append(p) or "pkg.mod")
    text = '"""Copied from .here, as from . they were."""\nimport os\n'
    assert module.file_imports(text, "/p/pkg/mod.py") == [("os", "os")]
    assert named == []
    text = '"""Copied from .here."""\nimport os\n  from ..up import b\n'
    assert module.file_imports(text, "/p/pkg/mod.py") == [("os", "os"), ("b", "up.b")]
    assert named == ["/p/pkg/mod.py"]


def test_a_text_s_statements_are_read_once_for_its_spans_and_its_imports(monkeypatch):
    from qlint.analysis.names import text_imports as module

    starts = []
    real = module._starts
    monkeypatch.setattr(module, "_starts", lambda text, word: starts.append(text) or real(text, word))
    text = "import torch\nfrom torch.ops import aten\nx = 1\n"
    spans = module.import_spans(text)
    assert [text[a:b] for a, b in spans] == ["import torch", "from torch.ops import aten"]
    # A statement's own text read meanwhile (`packet_text.torch_names`) does not replace it.
    assert text_imports(text[spans[1][0] : spans[1][1]], None, "") == [("aten", "torch.ops.aten")]
    assert module.file_imports(text, "/p/m.py") == [("torch", "torch"), ("aten", "torch.ops.aten")]
    assert module.import_spans(text) == spans
    assert starts.count(text) == 1
    # An equal text that is another object is read again: only the very text is remembered.
    again = "".join(["import torch\n", "from torch.ops import aten\nx = 1\n"])
    assert module.import_spans(again) == spans
    assert starts.count(text) == 2


def test_imported_modules_names_a_plain_import_whole_and_what_a_from_import_may_name(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "nn").mkdir(parents=True)
    for d in (pkg, pkg / "nn"):
        (d / "__init__.py").touch()
    src = (
        "import torch._refs.nn.functional\nimport a.b as ab, c\n"
        "from pkg.nn import (\n    functional as F,  # the refs\n    other,\n)\nfrom .functional import f\n"
    )
    assert imported_modules(src, str(pkg / "nn" / "mod.py")) == {
        "torch._refs.nn.functional",
        "a.b",
        "c",
        "pkg.nn",
        "pkg.nn.functional",
        "pkg.nn.other",
        "pkg.nn.functional.f",
    }
