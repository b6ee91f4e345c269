"""QL201's callers read from the modules' summaries which of them load the helper's name, and
where (issue 13): a module that only mentions it is not built into a context, and only the
statements on the listed rows are walked, with the same verdicts as a walk of every node."""

from __future__ import annotations

import ast

from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.references import REFERENCES
from tests.test_ql201_project_callers import BN_CALLER, EVAL_CALLER, HEAD, IMPORT, _check, _repo


def _refs(source: str):
    tree = ast.parse(source)
    return REFERENCES.load("m.py", None, REFERENCES.compute(tree, None, source))


def test_the_fact_lists_loads_attribute_loads_and_import_aliases():
    refs = _refs(
        "from a import f as g, h\n"
        "import b\n"
        "f = 1\n"  # a store is not a use
        "g(1)\n"
        "b.f(2)\n"
        "'f' and print('f')\n"  # strings name nothing
        "@b.deco(f)\n"
        "def k():\n"
        "    return h\n"
    )
    assert refs.names_for("f") == {"f", "g"}
    assert refs.rows({"f", "g"}) == {4, 5, 7, 8}  # a decorator's row and its `def`'s
    assert refs.rows({"h"}) == {9}
    assert refs.rows({"nothing"}) == set()


def test_a_damaged_fact_is_rejected():
    import pytest

    for bad in ({"loads": {"f": ["1"]}, "aliases": {}}, {"loads": {}, "aliases": {"f": [1]}}, {"loads": {}}):
        with pytest.raises((TypeError, KeyError)):
            REFERENCES.load("m.py", None, bad)


def test_a_module_that_only_mentions_the_helper_is_not_built(tmp_path, monkeypatch):
    from qlint.analysis.flow import project_callers

    mention = '"""See quantize_module in pkg.utils."""\n# quantize_module(model) needs eval()\nX = 1\n'
    root = _repo(tmp_path, a=EVAL_CALLER, b=mention)
    built: list[str] = []
    real = project_callers._module
    monkeypatch.setattr(
        project_callers, "_module", lambda ctx, path, data, *rest: built.append(path) or real(ctx, path, data, *rest)
    )
    assert _check(root, ProjectIndex()).diagnostics == []
    assert [p.rsplit("/", 1)[1] for p in built] == ["a.py"]


def test_a_helper_used_as_a_decorator_is_still_seen_as_a_use_that_is_not_a_call(tmp_path):
    decorated = IMPORT + "\n@quantize_module\ndef main(quantizer, x):\n    pass\n"
    assert len(_check(_repo(tmp_path, a=EVAL_CALLER, b=decorated)).diagnostics) == 1
    called = IMPORT + "\n@register(quantize_module)\nclass Main:\n    pass\n"
    assert len(_check(_repo(tmp_path / "c", a=EVAL_CALLER, b=called)).diagnostics) == 1


def test_a_renamed_import_is_followed_through_the_fact(tmp_path):
    renamed = "from pkg.utils.export_utils import quantize_module as qm\n\ndef main(q, x, m):\n    qm(m.eval(), q, x)\n"
    assert _check(_repo(tmp_path, a=renamed)).diagnostics == []
    bn = BN_CALLER.replace(IMPORT, "").replace("quantize_module(", "qm(")
    renamed_bn = "from pkg.utils.export_utils import quantize_module as qm\n" + bn
    assert len(_check(_repo(tmp_path / "r", a=HEAD + renamed_bn)).diagnostics) == 1


def test_a_caller_on_a_late_row_of_a_long_module_is_found(tmp_path):
    filler = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(200))
    root = _repo(tmp_path, a=filler + BN_CALLER)
    assert len(_check(root).diagnostics) == 1
    assert _check(_repo(tmp_path / "e", a=filler + EVAL_CALLER)).diagnostics == []


def test_a_caller_module_is_parsed_once_for_its_summary_and_its_calls(tmp_path, monkeypatch):
    # The summary's parse (for the references) is handed to the reading of the module's
    # calls instead of a second parse of the same text; the verdicts stay those of a fresh parse.
    root = _repo(tmp_path, a=EVAL_CALLER, b="X = 1  # not quantize_module: a mention\n")
    parsed: list[str] = []
    real = ast.parse

    def parse(source, filename="<unknown>", *args, **kwargs):
        parsed.append(str(filename))
        return real(source, filename, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", parse)
    assert _check(root, ProjectIndex()).diagnostics == []
    assert sorted(p.rsplit("/", 1)[1] for p in parsed if "/scripts/" in p) == ["a.py", "b.py"]
    bn = _repo(tmp_path / "bn", a=EVAL_CALLER, b=BN_CALLER)
    assert len(_check(bn, ProjectIndex()).diagnostics) == 1


def test_a_kept_tree_is_handed_over_only_for_the_content_it_was_parsed_from(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("def f():\n    return 1\n")
    project = ProjectIndex()
    assert project.fact_at(str(path), REFERENCES, keep_tree=True) is not None
    assert project.take_tree(str(path), b"def f():\n    return 2\n") is None  # another content
    assert project.take_tree(str(path), path.read_bytes()) is None  # dropped by the first ask
    other = tmp_path / "n.py"
    other.write_text("x = 1\n")
    project.fact_at(str(other), REFERENCES, keep_tree=True)
    tree = project.take_tree(str(other), other.read_bytes())
    assert isinstance(tree, ast.Module) and ast.dump(tree) == ast.dump(ast.parse("x = 1\n"))
    project.fact_at(str(other), REFERENCES, keep_tree=True)  # summary known: nothing parsed, nothing kept
    assert project.take_tree(str(other), other.read_bytes()) is None
    third = tmp_path / "o.py"
    third.write_text("y = 2\n")
    project.fact_at(str(third), REFERENCES)  # not asked to keep it
    assert project.take_tree(str(third), third.read_bytes()) is None


def test_no_caller_module_tree_outlives_the_check(tmp_path):
    # A module that mentions the helper but names no caller is parsed for its summary with
    # its tree kept for a reading of its calls that never comes: a worker kept that tree
    # (a whole test module, on ao) until its next caller search.
    own = "def quantize_module(model):\n    return model\n"  # its own function of that name
    root = _repo(tmp_path, a=EVAL_CALLER, b=own, c=own)
    project = ProjectIndex()
    assert _check(root, project).diagnostics == []
    assert project.kept_tree.held is None


def test_a_fact_asked_of_one_module_alone_comes_from_the_parse_of_its_summary(tmp_path, monkeypatch):
    # `fact_at(..., register=False)` of a module not summarised yet: one parse for both (the
    # wrapper search's chain facts were computed from a second parse, asked right after).
    import ast

    class Defs:
        key = "test-defs.1"
        lazy = True

        def compute(self, tree, scope, text):
            return [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]

        def load(self, path, summary, value):
            return value

    path = tmp_path / "m.py"
    path.write_text("def f():\n    pass\n")
    parsed: list[str] = []
    real = ast.parse

    def parse(source, filename="<unknown>", *args, **kwargs):
        parsed.append(filename)
        return real(source, filename, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", parse)
    project = ProjectIndex()
    assert project.fact_at(str(path), Defs(), register=False) == ["f"]
    assert project.module_scope("m", str(path)) is not None
    assert len(parsed) == 1 and Defs.key not in ProjectIndex.facts
