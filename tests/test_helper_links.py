"""QL101 and QL102: a helper module of matchers that only passes linked to the inserting pass
import (`helper_links`; issue 14 item 15, pytorch-shir's `isel_utils`): the instruction
selectors import `rewrites`, whose pass inserts the intrinsics' packets, and the helpers they
call match those packets on the nodes they are handed. The helper is the pair's consumer as a
pass importing the inserting module is: the matcher and the insertion are quiet together. Loud
again where the helper may see other graphs: a module importing it that is not linked to the
insertion, an importer or the helper itself spelling an export, a lowering or a re-trace, no
importer at all, or an inserting pass that also keys on an overload of the op."""

from __future__ import annotations

import pytest

from tests.conftest import lint, write_package

OPS = """\
from torch.library import Library

accel_lib = Library("myaccel", "DEF")
accel_lib.define("requantize(Tensor x, float s) -> Tensor")
"""

# The pass inserting the packets (pytorch-shir's `rewrites.rewrite_quantized_ops`).
REWRITES = """\
import torch


def rewrite(gm):
    for n in list(gm.graph.nodes):
        if n.op == "call_function" and n.target == torch.ops.aten.hardtanh.default:
            with gm.graph.inserting_before(n):
                r = gm.graph.call_function({op}, (n.args[0], 0.5))
            n.replace_all_uses_with(r)
            gm.graph.erase_node(n)
    gm.recompile()
"""

# The helper module: matchers the selectors call on the nodes of their graph.
UTILS = """\
import torch


def extract_requant(n):
    if n.op != "call_function" or n.target != {op}:
        return None
    return n
"""

SELECTOR = """\
from . import rewrites
from .match_utils import extract_requant


def select(gm):
    for n in gm.graph.nodes:
        if extract_requant(n) is not None:
            n.meta["selected"] = True
"""

# Code keyed on the overload, after an AOT re-trace of the rewritten graph (pytorch-shir's
# lowering tables): it never sees the graphs the selectors walk.
LOWER = """\
import torch

LOWERINGS = {torch.ops.myaccel.requantize.default: "requant"}
"""

OWN = "torch.ops.myaccel.requantize"
RELU = "torch.ops.aten.relu"


def _package(tmp_path, op=OWN, **extra):
    modules = {
        "ops": OPS,
        "rewrites": REWRITES.format(op=op),
        "match_utils": UTILS.format(op=op),
        "select_small": SELECTOR,
        "select_large": SELECTOR,
        "lower": LOWER,
    }
    return write_package(tmp_path, "pkg", **{**modules, **extra})


def _rows(pkg, module: str, rule: str) -> list[int]:
    path = pkg / f"{module}.py"
    return [d.range.start.row for d in lint(path.read_text(), path=str(path), select=(rule,))]


@pytest.mark.parametrize("op", [OWN, RELU])
def test_a_helper_only_linked_passes_import_matches_the_packets_they_see(tmp_path, op):
    pkg = _package(tmp_path, op=op)
    assert _rows(pkg, "match_utils", "QL101") == []
    assert _rows(pkg, "rewrites", "QL102") == []


UNLINKED = """\
from .match_utils import extract_requant


def count(gm):
    return sum(extract_requant(n) is not None for n in gm.graph.nodes)
"""

EXPORTING = (
    SELECTOR
    + """

def select_exported(model, args):
    import torch

    select(torch.export.export(model, args).module())
"""
)


@pytest.mark.parametrize("op", [OWN, RELU])
@pytest.mark.parametrize(
    "extra",
    [
        # a module importing the helper that imports nothing of the insertion: any graph
        {"counting": UNLINKED},
        # a linked importer that exports its own model: the helper sees its overloads
        {"select_large": EXPORTING},
        # no selector imports the helper: nothing shows which graphs it is for
        {"select_small": SELECTOR.replace("from .match_utils", "from .other_utils"), "select_large": ""},
    ],
)
def test_a_helper_other_graphs_may_reach_stays_loud(tmp_path, op, extra):
    pkg = _package(tmp_path, op=op, **extra)
    assert _rows(pkg, "match_utils", "QL101") == [5]


def test_the_helper_spelling_a_re_trace_stays_loud(tmp_path):
    utils = UTILS + "\n\ndef traced(m, args):\n    return extract_requant(torch.export.export(m, args))\n"
    pkg = _package(tmp_path)
    (pkg / "match_utils.py").write_text(utils.format(op=OWN))
    assert _rows(pkg, "match_utils", "QL101") == [5]


def test_an_inserting_pass_keyed_on_the_overload_too_keeps_both_loud(tmp_path):
    # rewrites.py also matches `aten.relu.default` on the graph it rewrites: that graph carries
    # relu in both forms, and the helper's packet misses the traced ones.
    rewrites = REWRITES.replace("aten.hardtanh.default", "aten.relu.default")
    pkg = _package(tmp_path, op=RELU)
    (pkg / "rewrites.py").write_text(rewrites.format(op=RELU))
    assert _rows(pkg, "match_utils", "QL101") == [5]
    assert _rows(pkg, "rewrites", "QL102") == [8]


def test_a_module_walking_the_graph_it_is_handed_is_a_pass_not_a_helper(tmp_path):
    # The pipeline importing it beside the inserting pass may run it on any graph: only a
    # direct import links a pass to the insertion.
    utils = UTILS + "\n\ndef count(gm):\n    return sum(extract_requant(n) is not None for n in gm.graph.nodes)\n"
    pkg = _package(tmp_path)
    (pkg / "match_utils.py").write_text(utils.format(op=OWN))
    assert _rows(pkg, "match_utils", "QL101") == [5]
    assert _rows(pkg, "rewrites", "QL102") == [8]


# A module spelling the helper's name only right before a `(` (as nearly every module spells a
# package helper's `__init__`: `def __init__(`, `super().__init__(`) cannot import it.
CALLS_ONLY = """\
class Step:
    def match_utils(self, n):
        return n


def run(step, n):
    return step.match_utils(n)
"""


def test_importers_are_not_parsed_from_modules_spelling_the_name_only_as_a_call(tmp_path, monkeypatch):
    import qlint.rules.helper_links as helper_links

    parsed: list[str] = []
    real = helper_links.parsed_module

    def counting(reader, path, text):
        parsed.append(path.rsplit("/", 1)[-1])
        return real(reader, path, text)

    monkeypatch.setattr(helper_links, "parsed_module", counting)
    pkg = _package(tmp_path, calls_only=CALLS_ONLY)
    assert _rows(pkg, "match_utils", "QL101") == []
    assert "calls_only.py" not in parsed
    assert {"select_small.py", "select_large.py"} <= set(parsed)


# Modules spelling the helper's name outside any import: an attribute, a value, prose.
NAMED_ONLY = '''\
"""Runs the steps in order; see match_utils."""

DEFAULT = None


def run(step, registry, n):
    matcher = step.match_utils
    registry.add(match_utils)
    return matcher(n)


match_utils = DEFAULT
'''


def test_importers_are_parsed_only_from_modules_whose_imports_may_name_the_helper(tmp_path, monkeypatch):
    parsed = _parsed_by_the_search(monkeypatch)
    pkg = _package(tmp_path, named_only=NAMED_ONLY)
    assert _rows(pkg, "match_utils", "QL101") == []
    assert "named_only.py" not in parsed
    assert {"select_small.py", "select_large.py"} <= set(parsed)


def _parsed_by_the_search(monkeypatch) -> list[str]:
    import qlint.rules.helper_links as helper_links

    parsed: list[str] = []
    real = helper_links.parsed_module

    def counting(reader, path, text):
        parsed.append(path.rsplit("/", 1)[-1])
        return real(reader, path, text)

    monkeypatch.setattr(helper_links, "parsed_module", counting)
    return parsed


# However an unlinked module writes its import of the helper, it is found, and the helper stays
# loud: the text filter never drops an importer.
IMPORT_FORMS = {
    "bracketed with a comment": "from pkg.match_utils import (\n    extract_requant,  # see: rewrites.py\n)\n",
    "module from its package": "from . import (\n    ops,  # loaded first: x = 1\n    match_utils,\n)\n"
    "extract_requant = match_utils.extract_requant\n",
    "dotted with an alias": "import os, pkg.match_utils as mu\n\nextract_requant = mu.extract_requant\n",
    "continued row": "from pkg \\\n    import match_utils\n\nextract_requant = match_utils.extract_requant\n",
    "compound statement": "if True: from .match_utils import extract_requant\n",
    "module from a continued row": "from pkg.match_utils \\\n    import extract_requant\n",
}


@pytest.mark.parametrize("imports", IMPORT_FORMS.values(), ids=IMPORT_FORMS.keys())
def test_an_unlinked_importer_is_found_however_it_imports(tmp_path, imports):
    counting = imports + "\n\ndef count(gm):\n    return sum(extract_requant(n) is not None for n in gm.graph.nodes)\n"
    pkg = _package(tmp_path, counting=counting)
    assert _rows(pkg, "match_utils", "QL101") == [5]


# A package's `__init__` as the helper: its importers name the package (relative imports inside
# it need not spell its name), found where the project's imports are looked up.
def _package_helper(tmp_path, op=OWN, **extra):
    pkg = _package(tmp_path, op=op, **extra)
    (pkg / "match_utils").mkdir()
    (pkg / "match_utils.py").rename(pkg / "match_utils" / "__init__.py")
    return pkg


def _helper_rows(pkg) -> list[int]:
    return _rows(pkg / "match_utils", "__init__", "QL101")


PACKAGE_IMPORTS = {
    "from its relative name": ("from .match_utils import extract_requant", "extract_requant"),
    "from its whole name": ("from pkg.match_utils import extract_requant", "extract_requant"),
    "the package from its parent": ("from . import match_utils", "match_utils.extract_requant"),
    "the package as an alias": ("import pkg.match_utils as mu", "mu.extract_requant"),
}


@pytest.mark.parametrize("op", [OWN, RELU])
@pytest.mark.parametrize("imports, called", PACKAGE_IMPORTS.values(), ids=PACKAGE_IMPORTS.keys())
def test_a_package_helper_only_linked_passes_import_matches_the_packets_they_see(
    tmp_path, monkeypatch, op, imports, called
):
    import qlint.rules.helper_links as helper_links

    asked: list[str] = []
    real = helper_links.texts_naming
    monkeypatch.setattr(
        helper_links, "texts_naming", lambda reader, name, *a: asked.append(name) or real(reader, name, *a)
    )
    selector = SELECTOR.replace("from .match_utils import extract_requant", imports).replace(
        "extract_requant(n)", f"{called}(n)"
    )
    pkg = _package_helper(tmp_path, op=op, select_small=selector, select_large=selector)
    assert _helper_rows(pkg) == []
    assert _rows(pkg, "rewrites", "QL102") == []
    assert "__init__" not in asked  # the word no import of a package spells


# Inside the package, beside the helper: imports it without spelling its name.
INSIDE = """\
from . import extract_requant


def count(gm):
    return sum(extract_requant(n) is not None for n in gm.graph.nodes)
"""


@pytest.mark.parametrize("where", ["beside the package", "inside it"])
def test_a_package_helper_an_unlinked_module_imports_stays_loud(tmp_path, where):
    pkg = _package_helper(tmp_path, **({"counting": UNLINKED} if where == "beside the package" else {}))
    if where == "inside it":
        (pkg / "match_utils" / "counting.py").write_text(INSIDE)
    assert _helper_rows(pkg) == [5]


def test_a_package_helper_an_exporting_importer_imports_stays_loud(tmp_path):
    assert _helper_rows(_package_helper(tmp_path, select_large=EXPORTING)) == [5]


# A package of the same name elsewhere, and a module of the helper's package that does not
# import it: their importers do not import the helper.
NAMESAKE_USER = """\
from .match_utils import tables


def count(gm):
    return sum(n.target in tables for n in gm.graph.nodes)
"""

SUBMODULE_USER = """\
from pkg.match_utils.tables import TABLES


def count(gm):
    return sum(n.target in TABLES for n in gm.graph.nodes)
"""


@pytest.mark.parametrize("case", ["namesake package", "submodule"])
def test_a_package_helper_stays_quiet_beside_importers_of_other_modules(tmp_path, case):
    pkg = _package_helper(tmp_path)
    (pkg / "match_utils" / "tables.py").write_text("TABLES = {}\n")
    if case == "namesake package":
        vendor = pkg / "vendor"
        (vendor / "match_utils").mkdir(parents=True)
        (vendor / "__init__.py").touch()
        (vendor / "match_utils" / "__init__.py").write_text("tables = set()\n")
        (vendor / "use.py").write_text(NAMESAKE_USER)
    else:
        (pkg / "use.py").write_text(SUBMODULE_USER)
    assert _helper_rows(pkg) == []


# The search is lazy: a question stops at the first importer that unlinks the helper, and a
# later one reads what was found before searching on (torch's `_refs.nn.functional`: five
# importers among 590 modules spelling `functional`, the first one found settles it).
def _helper_context(path):
    import ast

    from qlint.analysis.context import FileContext
    from qlint.analysis.names.modules import module_name_for
    from qlint.analysis.names.project import ProjectIndex
    from qlint.source import LineIndex

    text, name = path.read_text(), str(path)
    return FileContext(name, text, ast.parse(text), LineIndex(text), None, ProjectIndex(), module_name_for(name))


@pytest.mark.parametrize("package", [False, True], ids=["module", "package"])
def test_the_importer_search_stops_at_the_first_unlinked_importer(tmp_path, monkeypatch, package):
    import qlint.rules.helper_links as helper_links

    counters = {f"count{i}": UNLINKED for i in range(6)}
    pkg = (_package_helper if package else _package)(tmp_path, **counters)
    found: list[str] = []
    real = helper_links._Importer.__init__

    def counted(self, path, *args, **kwargs):
        found.append(path)
        real(self, path, *args, **kwargs)

    monkeypatch.setattr(helper_links._Importer, "__init__", counted)
    assert (_helper_rows(pkg) if package else _rows(pkg, "match_utils", "QL101")) == [5]
    # 8 modules import the helper; the two selectors are linked, any counter settles it.
    assert 1 <= len(found) <= 3


def test_a_later_question_reads_what_was_found_then_searches_on(tmp_path):
    import qlint.rules.helper_links as helper_links

    pkg = _package_helper(tmp_path, count=UNLINKED)
    helper = _helper_context(pkg / "match_utils" / "__init__.py")
    whole = sorted(i.path for i in helper_links._importers(helper, helper))
    assert [p.rsplit("/", 1)[1] for p in whole] == ["count.py", "select_large.py", "select_small.py"]
    helper = _helper_context(pkg / "match_utils" / "__init__.py")
    first = next(helper_links._importers(helper, helper))  # a question settled by the first
    again = [i.path for i in helper_links._importers(helper, helper)]
    assert again[0] == first.path and sorted(again) == whole  # each once, none missed
    assert [i.path for i in helper_links._importers(helper, helper)] == again  # kept whole


def test_likely_importers_of_a_package_are_read_first(tmp_path, monkeypatch):
    import qlint.rules.helper_links as helper_links

    # Relative imports (deferred: they spell no parent package) and the parent's name.
    absolute = UNLINKED.replace("from .match_utils import", "from pkg.match_utils import")
    pkg = _package_helper(tmp_path, aaa=UNLINKED, zzz=absolute)
    helper = _helper_context(pkg / "match_utils" / "__init__.py")
    first = next(helper_links._importers(helper, helper))
    assert first.path.endswith("zzz.py")
