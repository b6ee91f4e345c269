"""The search for a helper's callers in the other modules does only the work its answer needs
(issue 13): a module that does not spell the helper's name as an identifier is not parsed,
the references fact is computed only for the modules the search reads, and a question that
wants to know whether one module names a function stops at the first. Each skip is exact:
the callers reached through an alias, a star import, a re-export, a subclass or a directory
without `__init__.py` are still found, with the verdicts of a search that reads everything."""

from __future__ import annotations

import ast

from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.recent_trees import RECENT
from qlint.analysis.names.references import REFERENCES, spells
from tests.test_ql201_project_callers import BN_CALLER, EVAL_CALLER, HEAD, IMPORT, _check, _repo


def _parsed(monkeypatch) -> list[str]:
    """The files `ast.parse` is asked to parse from now on (their base names)."""
    parsed: list[str] = []
    real = ast.parse

    def parse(source, filename="<unknown>", *args, **kwargs):
        parsed.append(str(filename).rsplit("/", 1)[-1])
        return real(source, filename, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", parse)
    return parsed


# -- the text test ----------------------------------------------------------------------------------
def test_a_module_spells_a_name_when_no_identifier_character_touches_it():
    for data in (b"f(helper)", b"helper", b"x.helper\n", b"\thelper(", b"from m import helper as h", b"(\nhelper,"):
        assert spells(data, "helper"), data
    for data in (b"helper_v2(x)", b"apply_helper(x)", b"helper2", b"_helper", b"Helper", b"", b"help"):
        assert not spells(data, "helper"), data
    # Found past a first occurrence inside a longer identifier.
    assert spells(b"my_helper = 1\nhelper(x)\n", "helper")
    # A byte past ASCII beside the name may belong to no identifier: the module is read.
    assert spells("« helper»".encode(), "helper") and spells("éhelper".encode(), "helper")
    # A name with regular-expression characters in it is matched as written.
    assert not spells(b"a_b", "a.b")


def test_a_module_holding_the_name_only_inside_longer_identifiers_is_not_parsed(tmp_path, monkeypatch):
    longer = "def quantize_module_v2(m):\n    return m\n\n\ndef main(m):\n"
    longer += "    return my_quantize_module(quantize_module_v2(m))\n"
    root = _repo(tmp_path, a=EVAL_CALLER, b=longer)
    parsed = _parsed(monkeypatch)
    assert _check(root, ProjectIndex()).diagnostics == []
    assert "b.py" not in parsed and "a.py" in parsed
    # The same module that also spells it: parsed, and its call judged.
    root = _repo(tmp_path / "c", a=EVAL_CALLER, b=BN_CALLER + "\n\ndef other(m):\n    return quantize_module_v2(m)\n")
    assert len(_check(root, ProjectIndex()).diagnostics) == 1
    assert "b.py" in parsed


def test_modules_that_hold_the_name_inside_other_identifiers_still_count_toward_the_limit(tmp_path):
    # Past 80 modules holding the helper's name as text, its callers are unknown (decided from
    # the texts): the test that keeps such modules from being parsed does not change that.
    longer = {f"u{i}": "def run(m):\n    return quantize_module_v2(m)\n" for i in range(81)}
    assert len(_check(_repo(tmp_path, a=EVAL_CALLER, **longer)).diagnostics) == 1
    fewer = {f"u{i}": "def run(m):\n    return quantize_module_v2(m)\n" for i in range(70)}
    assert _check(_repo(tmp_path / "f", a=EVAL_CALLER, **fewer)).diagnostics == []


# -- callers the text test must not drop -------------------------------------------------------------
def test_callers_at_the_edges_of_the_text_are_read(tmp_path):
    # The name last in the file, after a dot, with no line break after it: a use that is not a call.
    hook = "import pkg.utils.export_utils as eu\n\nHOOK = eu.quantize_module"
    assert len(_check(_repo(tmp_path, a=EVAL_CALLER, b=hook)).diagnostics) == 1
    # In parentheses, after a tab, as an argument: not a call either.
    wrapped = IMPORT + "\ndef main(run):\n\trun((quantize_module))\n"
    assert len(_check(_repo(tmp_path / "w", a=EVAL_CALLER, b=wrapped)).diagnostics) == 1


def test_a_caller_through_a_re_export_of_the_package_is_read(tmp_path):
    # `pkg/utils/__init__.py` re-exports the helper and a script imports it from there: a use
    # the search cannot read, which keeps the finding the eval-mode caller alone would lift.
    root = _repo(tmp_path, a=EVAL_CALLER)
    assert _check(root).diagnostics == []
    (root / "pkg" / "utils" / "__init__.py").write_text("from .export_utils import quantize_module\n")
    via = "from pkg.utils import quantize_module\n\ndef main(q, x, m):\n    quantize_module(m, q, x)\n"
    (root / "scripts" / "b.py").write_text(HEAD + via)
    assert len(_check(root).diagnostics) == 1


def test_callers_through_an_alias_or_a_star_import_in_a_directory_without_init_are_read(tmp_path):
    # `tools/nested/` has no `__init__.py`; the alias does not spell the name where it is called.
    for name, body in (
        ("alias", "from pkg.utils.export_utils import quantize_module as qm\n\ndef main(q, x, m):\n    qm(m, q, x)\n"),
        ("star", "from pkg.utils.export_utils import *\n\ndef main(q, x, m):\n    quantize_module(m, q, x)\n"),
    ):
        root = _repo(tmp_path / name, a=EVAL_CALLER)
        (root / "tools" / "nested").mkdir(parents=True)
        (root / "tools" / "nested" / "run.py").write_text(HEAD + body)
        assert len(_check(root).diagnostics) == 1, name
        (root / "tools" / "nested" / "run.py").write_text(HEAD + body.replace("(m, q, x)", "(m.eval(), q, x)"))
        assert _check(root).diagnostics == [], name


# -- the references fact is computed for the modules a search reads ---------------------------------
def test_the_references_fact_is_computed_only_for_the_modules_a_search_reads(tmp_path, monkeypatch):
    # The callers import a module of models: it is summarised for their analysis, and never
    # asked for its references (they were computed for every module summarised after the
    # first search: on ExecuTorch 284 modules, of which ~81 were read).
    root = _repo(tmp_path)
    (root / "pkg" / "models.py").write_text(HEAD + "\n\ndef make():\n    return nn.BatchNorm2d(3)\n")
    caller = IMPORT + "from pkg.models import make\n\ndef main(q, x):\n    quantize_module(make().eval(), q, x)\n"
    (root / "scripts" / "a.py").write_text(HEAD + caller)
    computed: list[str] = []
    real = type(REFERENCES).compute

    def compute(self, tree, scope, text):
        computed.append(text)
        return real(self, tree, scope, text)

    monkeypatch.setattr(type(REFERENCES), "compute", compute)
    project = ProjectIndex()
    assert _check(root, project).diagnostics == []
    assert len(computed) == 1 and "def main" in computed[0]  # a.py's, not models.py's
    assert project.fact_at(str(root / "pkg" / "models.py"), REFERENCES) is not None  # asked: computed
    assert len(computed) == 2


def test_a_references_fact_computed_late_is_stored_and_read_back(tmp_path, monkeypatch):
    from qlint.summary_cache import SummaryStore

    path = tmp_path / "m.py"
    path.write_text("from a import f as g\n\ng(1)\n")
    store = SummaryStore(tmp_path / "summaries")
    monkeypatch.setattr(ProjectIndex, "store", store)
    first = ProjectIndex()
    first.module_scope("m", str(path))  # summarised (and stored) without the fact
    refs = first.fact_at(str(path), REFERENCES)
    assert refs.rows(refs.names_for("f")) == {3}
    parsed = _parsed(monkeypatch)
    again = ProjectIndex().fact_at(str(path), REFERENCES)  # a later run: from the store
    assert again == refs and parsed == []


def test_a_module_summarised_before_the_search_is_parsed_once_for_its_references_and_calls(tmp_path, monkeypatch):
    root = _repo(tmp_path, a=EVAL_CALLER)
    project = ProjectIndex()
    assert project.module_scope("a", str(root / "scripts" / "a.py")) is not None  # summarised, tree dropped
    RECENT.clear()  # (else the search reads the tree recent_trees still holds, parsing nothing)
    parsed = _parsed(monkeypatch)
    assert _check(root, project).diagnostics == []
    assert parsed.count("a.py") == 1


# -- whether any other module names a function -------------------------------------------------------
SUBCLASS = (
    "from test.test_fusion import TestPatternMatcherBase\n\n\n"
    "class T(TestPatternMatcherBase):\n"
    "    def test_x(self, m, x):\n"
    "        self._test_common(m, x, check_quantization=True)\n"
)


def test_a_subclass_in_another_module_calling_the_method_keeps_the_finding(tmp_path, monkeypatch):
    # torchao's layout: the helper's caller is `TestPatternMatcherBase._test_common`, a method
    # of a test module, which a subclass in another module may call with anything.
    from qlint.analysis.flow import project_callers, project_search
    from tests.test_ql201_caller_branches import CAPTURE
    from tests.test_ql201_caller_branches import _check as check_ao
    from tests.test_ql201_caller_branches import _repo as ao_repo

    assert check_ao(ao_repo(tmp_path)) == []
    assert check_ao(ao_repo(tmp_path / "s", other_tests=SUBCLASS)) == [CAPTURE]
    # Longer names only: no other module names the method.
    longer = SUBCLASS.replace("_test_common", "_test_common_v2")
    assert check_ao(ao_repo(tmp_path / "l", other_tests=longer)) == []
    # Several modules name it: the first one read decides, the others are not read.
    read: list[str] = []
    real = project_search.references_loading
    # Asked by the caller search and by the text search it is built on.
    for module in (project_callers, project_search):
        monkeypatch.setattr(
            module, "references_loading", lambda ctx, path, *a, **k: read.append(path) or real(ctx, path, *a, **k)
        )
    many = {f"sub{i}": SUBCLASS for i in range(4)}
    assert check_ao(ao_repo(tmp_path / "m", **many)) == [CAPTURE]
    assert len([p for p in read if "/sub" in p]) == 1


# -- a test module's helper that nothing names -------------------------------------------------------
def test_a_test_helper_called_under_another_spelling_of_its_name_is_not_dead_code(tmp_path):
    # Its module's text spells `dynamic_quant` once (the `def`), so no node names it, and its
    # tree is not walked; unless the text is not ASCII: with a fullwidth `d` it is the same identifier.
    from tests.test_ql201_project_callers import _test_module

    assert _test_module(tmp_path, "\ndef test_linear():\n    pass\n") == []
    fullwidth = "\ndef test_it(q, x):\n    \uff44ynamic_quant(torch.nn.Dropout(), q, x)\n"
    assert len(_test_module(tmp_path / "w", fullwidth)) == 1


def test_a_module_is_read_whole_up_to_the_limit(tmp_path):
    from qlint.analysis.names.content_keys import content_bytes, content_key

    path = tmp_path / "m.py"
    for data in (b"", b"x = 1\n", b"y" * 4096):
        path.write_bytes(data)
        assert content_bytes({}, str(path), content_key({}, str(path)), 4096) == data
    path.write_bytes(b"y" * 4097)  # past the limit
    assert content_bytes({}, str(path), content_key({}, str(path)), 4096) is None
    assert content_bytes({}, str(tmp_path / "gone.py"), (1, 1), 4096) is None  # removed since
    assert content_bytes({}, str(tmp_path), (1, 1), 4096) is None  # a directory
    assert content_bytes({str(path): "é"}, str(path), ("overlay", 0), 4096) == "é".encode()


def _answer(call) -> tuple:
    facts = sorted((f.state, f.node.lineno, f.node.col_offset) if f.node else (f.state,) for f in call.facts)
    return call.path, call.call.lineno, call.call.col_offset, facts


def test_a_check_asking_twice_for_the_callers_of_a_helper_scans_the_project_once(tmp_path):
    from qlint.analysis.context import FileContext
    from qlint.analysis.flow import project_search
    from qlint.analysis.flow.project_callers import project_callers as callers_of
    from qlint.analysis.names import project_words
    from qlint.analysis.names.modules import module_name_for
    from qlint.source import LineIndex

    project_words.forget()
    unrelated = {f"u{i}": "def f():\n    return 1\n" for i in range(5)}
    root = _repo(tmp_path, a=EVAL_CALLER, b=BN_CALLER, **unrelated)
    path = root / "pkg" / "utils" / "export_utils.py"
    text = path.read_text()
    tree = ast.parse(text)
    ctx = FileContext(str(path), text, tree, LineIndex(text), None, ProjectIndex(), module_name_for(str(path)))
    func = ctx.scope.functions["quantize_module"]
    first = callers_of(ctx, func, 0)  # the 9 other modules, __init__.py files too
    assert project_words.reads() == 9 and sorted(c.path.rsplit("/", 1)[1] for c in first) == ["a.py", "b.py"]
    again = callers_of(ctx, func, 0)
    # The same answers; a caller module kept (`caller_modules`) or parsed again gives them
    # on nodes of its new tree, at the same places.
    assert project_words.reads() == 9 and list(map(_answer, again)) == list(map(_answer, first))
    assert project_search.candidate_modules(ctx, str(root), "nothing_names_this") == []
    assert project_words.reads() == 9


# -- one read of each module for every search of a run (`project_words`) ----------------------------
def _words_read_from_now():
    from qlint.analysis.names import project_words

    project_words.forget()
    return project_words


def test_checks_of_several_helpers_read_each_module_once(tmp_path):
    # Two helper modules, each checked (their callers searched, and the files naming their
    # modules): every other module of the project is read once for all of it.
    words = _words_read_from_now()
    unrelated = {f"u{i}": "def f():\n    return 1\n" for i in range(5)}
    root = _repo(tmp_path, a=EVAL_CALLER, b=BN_CALLER, **unrelated)
    other = root / "pkg" / "utils" / "other_utils.py"
    other.write_text((root / "pkg" / "utils" / "export_utils.py").read_text().replace("quantize_module", "other_q"))
    project = ProjectIndex()
    assert len(_check(root, project).diagnostics) == 1  # b.py's batch-norm model
    from qlint.engine import check_source
    from tests.conftest import settings_for

    result = check_source(other.read_text(), str(other), settings_for(("QL201",)), project)
    assert len(result.diagnostics) == 1  # nobody calls it
    modules = len(list(root.rglob("*.py")))
    assert words.reads() == modules  # each module once, whoever asked
    assert len(_check(root, project).diagnostics) == 1
    assert words.reads() == modules


def test_an_edited_buffer_in_the_editor_is_searched_and_only_it_is_read_again(tmp_path):
    # The language server: a caller's unsaved buffer turns an eval-mode call into a risky one,
    # and back; each edit reads that module again, not the project.
    words = _words_read_from_now()
    unrelated = {f"u{i}": "def f():\n    return 1\n" for i in range(5)}
    root = _repo(tmp_path, a=EVAL_CALLER, **unrelated)
    project = ProjectIndex()
    assert _check(root, project).diagnostics == []
    read = words.reads()
    caller = str(root / "scripts" / "a.py")
    project.update(caller, HEAD + BN_CALLER + "\n# ünïcode comment\n")
    assert len(_check(root, project).diagnostics) == 1
    project.update(caller, HEAD + EVAL_CALLER)
    assert _check(root, project).diagnostics == []
    # A buffer that names the helper only in a comment and a string calls nothing: no caller left.
    project.update(caller, HEAD + "# quantize_module(m)\nNAME = 'quantize_module'\n")
    assert len(_check(root, project).diagnostics) == 1
    project.update(caller, None)  # closed: the file on disk again
    assert _check(root, project).diagnostics == []
    assert words.reads() == read + 4  # the module at each content it had (disk twice)


def test_a_caller_deleted_or_added_between_checks_is_seen(tmp_path):
    words = _words_read_from_now()
    root = _repo(tmp_path, a=EVAL_CALLER, b=BN_CALLER)
    project = ProjectIndex()
    assert len(_check(root, project).diagnostics) == 1
    (root / "scripts" / "b.py").unlink()
    assert _check(root, project).diagnostics == []
    (root / "scripts" / "c.py").write_text(HEAD + BN_CALLER)
    assert len(_check(root, project).diagnostics) == 1
    # Every module once (b.py, now gone, too), but the helper's own, which is never searched.
    assert words.reads() == len(list(root.rglob("*.py")))


# -- whether another module uses a function, without analysing its callers ---------------------------
def test_used_elsewhere_answers_what_the_first_caller_found_answers(tmp_path, monkeypatch):
    from qlint.analysis.context import FileContext
    from qlint.analysis.flow import project_callers
    from qlint.analysis.flow.module_analysis import ModelFlow
    from qlint.analysis.names.modules import module_name_for
    from qlint.source import LineIndex

    scripts = {
        "call": EVAL_CALLER,
        "callback": IMPORT + "\nHOOKS = [quantize_module]\n",
        "own": "def quantize_module(m):\n    return m\n\n\nquantize_module(1)\n",
        "comment": "# quantize_module(m) is called elsewhere\nNAME = 'quantize_module'\n",
        "broken": IMPORT + "\ndef main(:\n    quantize_module(m)\n",
        "longer": "def run(m):\n    return quantize_module_v2(m)\n",
        "api": "from pkg.utils.export_utils import quantize_module as qm  # noqa: F401\n",
        "user": "from scripts.api import qm\n\ndef main(q, x, m):\n    qm(m.eval(), q, x)\n",
    }
    cases = [(), ("call",), ("callback",), ("own",), ("comment",), ("broken",), ("longer",), ("own", "comment")]
    cases += [("own", "call"), ("comment", "callback", "longer"), ("api",), ("api", "user"), ("own", "api", "user")]

    def ctx(path):
        text = path.read_text()
        tree = ast.parse(text)
        return FileContext(str(path), text, tree, LineIndex(text), None, ProjectIndex(), module_name_for(str(path)))

    analysed: list[object] = []
    real = ModelFlow.function
    for i, names in enumerate(cases):
        root = _repo(tmp_path / str(i), **{n: scripts[n] for n in names})
        path = root / "pkg" / "utils" / "export_utils.py"
        first = ctx(path)
        monkeypatch.setattr(ModelFlow, "function", lambda self, *a: analysed.append(a) or real(self, *a))
        used = project_callers.used_elsewhere(first, first.scope.functions["quantize_module"])
        assert analysed == [], names  # decided from the references alone
        monkeypatch.setattr(ModelFlow, "function", real)
        again = ctx(path)
        found = next(iter(project_callers.each_project_call(again, again.scope.functions["quantize_module"], 0)), False)
        assert used == (found is not False), names
        if "api" not in names:  # a re-export: whatever the search makes of it, the same
            assert used == bool({"call", "callback"} & set(names)), names
