"""Module summaries: the scope rebuilt from a summary is the scope a whole parse gives, the
disk store serves only summaries of the current content, and checks read them."""

from __future__ import annotations

import ast
import marshal
from pathlib import Path

import pytest

from qlint import checksummed_files, summary_cache
from qlint.analysis.names import module_entries
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.scope import ModuleScope, same_tree
from qlint.analysis.names.summary import ModuleSummary, class_method_names
from qlint.runner import run_check
from qlint.settings import Settings
from qlint.summary_cache import SummaryStore
from tests.conftest import old_file

TRICKY = """\
import torch
from . import sibling as sib
aten = torch.ops.aten
A = B = (aten.add,
         aten.mul)
X, Y = aten.relu, "é" + "ü"
if torch.__version__ > "2":
    OPS = {aten.add, aten.sub}
    def helper(n):
        return n.target in OPS
else:
    OPS = {aten.add}
try:
    import foo
    Q = foo.Q; R = foo.R
except ImportError:
    Q = None
with open(__file__) as fh:
    @staticmethod
    @property
    def wrapped():
        return 1
@decorate(
    arg=1,
)
class Pass(Base):
    TARGETS = [aten.add]

    def call(self, gm):
        return gm
async def coro(): pass
S = 1; T = (2,
     3)
"""


def _positions(node: ast.AST) -> list[tuple]:
    return [
        (type(n).__name__, n.lineno, n.col_offset, n.end_lineno, n.end_col_offset)
        for n in ast.walk(node)
        if hasattr(n, "lineno")
    ]


def _same(a: ast.AST, b: ast.AST) -> bool:
    return same_tree(a, b) and _positions(a) == _positions(b)


def _summarised(text: str, module: str = "pkg.mod") -> tuple[ModuleScope, ModuleScope]:
    tree = ast.parse(text)
    eager = ModuleScope.build(tree, module, "/p/pkg/mod.py")
    summary = ModuleSummary.of(tree, eager, module, "digest")
    # Through plain data, as the disk store keeps it.
    summary = ModuleSummary.from_data(marshal.loads(marshal.dumps(summary.to_data())))
    lazy = summary.scope("/p/pkg/mod.py", lambda: text)
    assert lazy is not None
    return eager, lazy


@pytest.mark.parametrize("last_break", [True, False])
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_a_scope_from_a_summary_is_the_scope_of_a_whole_parse(newline, last_break):
    # The statements are cut out of the text by line offsets: every line break `ast` counts,
    # and a last line without one.
    text = TRICKY + "Z = (4,\n     5)" + ("\n" if last_break else "")
    eager, lazy = _summarised(text.replace("\n", newline))
    assert lazy.imports == eager.imports and lazy.imported_modules == eager.imported_modules
    for table in ("assigns", "functions", "classes"):
        assert sorted(getattr(lazy, table)) == sorted(getattr(eager, table)), table
    for name, values in eager.assigns.items():
        got = lazy.assigns[name]
        assert len(got) == len(values) and all(_same(a, b) for a, b in zip(values, got, strict=True)), name
    for name, func in eager.functions.items():
        assert _same(func, lazy.functions[name]), name
    for name, cls in eager.classes.items():
        assert _same(cls.node, lazy.classes[name].node)
        assert sorted(lazy.classes[name].methods) == sorted(cls.methods)
    assert same_tree(lazy.unique("A"), eager.unique("A")) and lazy.unique("OPS") is None  # two different values
    # The same node every time: rules key memos on node identity.
    assert lazy.functions["helper"] is lazy.functions["helper"]
    assert lazy.assigns["A"][0] is lazy.assigns["B"][0]


def test_a_scope_from_a_summary_keeps_the_import_fallbacks():
    # `helper_callees` reads a stand-in for a failed torchao import as the API in any module,
    # one read from its summary too: the summary keeps which functions are stand-ins.
    text = (
        "try:\n    from torchao.quantization.pt2e import move_exported_model_to_train\n"
        "except ImportError:\n    def move_exported_model_to_train(m):\n        return m\n"
    )
    eager, lazy = _summarised(text)
    assert eager.import_fallbacks == {"move_exported_model_to_train"}
    assert lazy.import_fallbacks == eager.import_fallbacks


def test_only_the_statements_asked_for_are_parsed(monkeypatch):
    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(200))
    _, lazy = _summarised("import torch\n" + body + "OPS = [torch.ops.aten.add]\n")
    parsed: list[int] = []
    real_parse = ast.parse
    # Blank lines before a statement put it on its rows: only the rest is parsed text.
    monkeypatch.setattr(ast, "parse", lambda src, *a, **k: parsed.append(len(src.strip())) or real_parse(src, *a, **k))
    assert "f150" in lazy.functions and "nope" not in lazy.functions and lazy.unique("nope") is None
    assert parsed == []  # names alone come from the summary
    assert lazy.functions["f150"].name == "f150" and lazy.unique("OPS") is not None
    assert len(parsed) == 2 and max(parsed) < 60


def test_a_class_s_method_names_come_from_the_summary_unparsed(monkeypatch):
    # The last definition of a name wins, as in the scope; methods in their order, a name
    # defined twice once; nested classes' methods are not the class's.
    text = (
        "class Runner:\n    def old(self): pass\n"
        "class Runner(Base):\n    X = 1\n    def warm(self, gm): pass\n    async def cool(self): pass\n"
        "    def warm(self, gm): return gm\n    class Inner:\n        def hidden(self): pass\n"
        "    def __init__(self): pass\n"
    )
    eager, lazy = _summarised(text)
    parsed: list[str] = []
    real_parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda src, *a, **k: parsed.append(src) or real_parse(src, *a, **k))
    assert class_method_names(lazy, "Runner") == ["warm", "cool", "__init__"] == list(eager.classes["Runner"].methods)
    assert parsed == []
    # A class taken already answers from itself; so does a scope built whole.
    assert list(lazy.classes["Runner"].methods) == ["warm", "cool", "__init__"] and len(parsed) == 1
    assert class_method_names(lazy, "Runner") == ["warm", "cool", "__init__"] == class_method_names(eager, "Runner")


def test_a_summary_without_method_names_is_a_miss():
    tree = ast.parse("class A:\n    def f(self): pass\n")
    data = ModuleSummary.of(tree, ModuleScope.build(tree, "m", "/p/m.py"), "m", "d").to_data()
    unnamed = {k: v for k, v in data.items() if k != "methods"}
    for damaged in (unnamed, {**data, "methods": {}}, {**data, "methods": {"A": "f"}}):
        with pytest.raises((TypeError, KeyError)):
            ModuleSummary.from_data(damaged)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_the_last_statement_without_a_line_break_is_parsed_alone(monkeypatch, newline):
    text = "import torch\nA = 1\nOPS = [torch.ops.aten.add,\n       torch.ops.aten.mul]".replace("\n", newline)
    eager, lazy = _summarised(text)
    parsed: list[str] = []
    real_parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda src, *a, **k: parsed.append(src.strip()) or real_parse(src, *a, **k))
    assert _same(eager.assigns["OPS"][0], lazy.assigns["OPS"][0])
    assert len(parsed) == 1 and parsed[0].startswith("OPS") and "A = 1" not in parsed[0]


def test_a_statement_that_cannot_be_parsed_alone_falls_back_to_the_whole_module():
    # `A` shares its line with a statement that continues below: parsed alone it is cut off.
    eager, lazy = _summarised("A = 1; B = (\n    2)\n")
    assert _same(eager.assigns["A"][0], lazy.assigns["A"][0])
    assert _same(eager.assigns["B"][0], lazy.assigns["B"][0])


def test_a_module_that_does_not_parse_has_no_scope():
    summary = ModuleSummary.of(None, None, "m", "d")
    assert ModuleSummary.from_data(summary.to_data()).scope("/m.py", lambda: "") is None


# ------------------------------------------------------------------ the disk store


def _summary(digest: str = "d1", module: str | None = "pkg.mod") -> ModuleSummary:
    text = "import torch\nOPS = [torch.ops.aten.add]\n"
    tree = ast.parse(text)
    return ModuleSummary.of(tree, ModuleScope.build(tree, module, "/p/pkg/mod.py"), module, digest)


def test_the_store_serves_only_the_summary_of_the_current_content(tmp_path):
    store = SummaryStore(tmp_path / "s")
    assert store.get("/p/pkg/mod.py", "d1", "pkg.mod") is None
    store.put("/p/pkg/mod.py", _summary())
    got = SummaryStore(tmp_path / "s").get("/p/pkg/mod.py", "d1", "pkg.mod")
    assert got is not None and got.to_data() == _summary().to_data()
    assert store.get("/p/pkg/mod.py", "d2", "pkg.mod") is None  # the module changed
    assert store.get("/p/pkg/mod.py", "d1", "mod") is None  # another package layout
    assert store.get("/p/pkg/other.py", "d1", "pkg.mod") is None
    assert [p.name for p in (tmp_path / "s").iterdir() if p.name.startswith(".tmp")] == []


def test_a_damaged_summary_is_a_miss(tmp_path):
    store = SummaryStore(tmp_path / "s")
    store.put("/p/pkg/mod.py", _summary())
    (file,) = (tmp_path / "s").iterdir()
    good = file.read_bytes()
    for damaged in (b"", good[: len(good) // 2], good[:-1], bytes([good[0] ^ 1]) + good[1:], good[:-3] + b"xyz"):
        file.write_bytes(damaged)
        assert store.get("/p/pkg/mod.py", "d1", "pkg.mod") is None
    # A well-formed file with a valid checksum whose summary is not one: still a miss.
    header, magic = summary_cache._HEADER, summary_cache._MAGIC
    for bad in ({"module": 3}, {"digest": "d1", "module": "pkg.mod", "broken": False, "imports": {}, "imported": []}):
        payload = marshal.dumps({"magic": magic, "path": "/p/pkg/mod.py", "summary": bad})
        checksummed_files.write(file, header, payload)
        assert store.get("/p/pkg/mod.py", "d1", "pkg.mod") is None
    data = _summary().to_data()
    data["functions"] = {"f": [5, 2, 9, 0]}  # a location that cannot be
    payload = marshal.dumps({"magic": magic, "path": "/p/pkg/mod.py", "summary": data})
    checksummed_files.write(file, header, payload)
    assert store.get("/p/pkg/mod.py", "d1", "pkg.mod") is None


def test_an_unwritable_store_is_not_an_error(tmp_path):
    (tmp_path / "s").write_text("a file where the directory should be")
    SummaryStore(tmp_path / "s").put("/p/pkg/mod.py", _summary())


# ------------------------------------------------------------------ checks read summaries

HELPER = "import torch\n\nDQ_OPS = [torch.ops.quantized_decomposed.dequantize_per_tensor]\n"
USER = """\
from .helper import DQ_OPS


def match(node):
    return node.target in DQ_OPS
"""


@pytest.fixture
def package(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    old_file(pkg / "__init__.py", "")
    old_file(pkg / "helper.py", HELPER)
    old_file(pkg / "user.py", USER)
    return pkg


def _findings(pkg: Path, s: Settings, use_cache: bool = True) -> tuple[int, list[tuple]]:
    run = run_check([str(pkg / "user.py")], s, use_cache=use_cache, jobs=1)
    return run.cached, [(d.code, d.range.start.row) for r in run.results for d in r.diagnostics]


def test_a_check_reads_the_summary_of_an_imported_module_and_an_edit_recomputes(package, tmp_path, monkeypatch):
    s = Settings(root=tmp_path, cache_dir=tmp_path / "cache")
    ProjectIndex._default = None  # no module remembered in memory from other tests
    cached, first = _findings(package, s)
    assert cached == 0 and [c for c, _ in first] == ["QL101"]
    assert list((tmp_path / "cache").glob("*/*.summaries/*.summary"))  # helper's summary was written

    # A new process (no scope in memory) whose own result is not cached: helper.py's
    # summary is read, helper.py is not parsed as a whole.
    ProjectIndex._default = None
    for index in (tmp_path / "cache").rglob("*.index"):  # every shard of the results index
        index.unlink()
    whole_parses: list[str] = []
    real = module_entries.summarise
    monkeypatch.setattr(module_entries, "summarise", lambda path, *a: whole_parses.append(path) or real(path, *a))
    assert _findings(package, s) == (0, first)
    assert whole_parses == []

    # The helper changes: the user's cached result is recomputed from the new content.
    assert _findings(package, s)[0] == 1
    old_file(package / "helper.py", HELPER.replace("dequantize_per_tensor]", "dequantize_per_tensor.default]"))
    assert _findings(package, s) == (0, [])
    # The packet gate (`packet_imports`) read its new text: no packet left, nothing parsed.
    assert whole_parses == []
    assert _findings(package, s, use_cache=False) == (0, [])


def test_no_cache_writes_no_summary(package, tmp_path):
    s = Settings(root=tmp_path, cache_dir=tmp_path / "cache")
    assert _findings(package, s, use_cache=False)[1]
    assert not (tmp_path / "cache").exists()
    assert ProjectIndex.store is None  # the run's store does not outlive it


def test_a_file_of_the_sha256_format_reads_as_absent(tmp_path):
    # Written by qlint before the CRC-32 check: a miss, never decoded.
    import hashlib

    target = tmp_path / "old.summary"
    payload = marshal.dumps({"x": 1})
    target.write_bytes(b"h\n" + hashlib.sha256(payload).digest() + payload)
    assert checksummed_files.read(target, b"h\n") is None
    checksummed_files.write(target, b"h\n", payload)
    assert checksummed_files.read_marshalled(target, b"h\n") == {"x": 1}
    assert checksummed_files.read(target, b"other\n") is None


def test_short_digests_are_sha256():
    import hashlib

    from qlint.short_digests import sha256_hex

    for data in (b"", b"qlint", bytes(range(256)) * 40):
        assert sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_a_module_whose_digest_is_known_for_its_stat_is_read_without_hashing(package, tmp_path, monkeypatch):
    """Its summary is found by the digest known for its stat (hashed already, or kept by an
    earlier run: `content_keys.consult`); once its stat changes it is hashed again, and the
    summary of its new content is the one read."""
    import os

    from qlint.analysis.names import content_keys, module_entries
    from qlint.short_digests import content_sha256_hex

    monkeypatch.setattr(ProjectIndex, "store", SummaryStore(tmp_path / "s"))
    hashed: list[int] = []
    monkeypatch.setattr(module_entries, "content_sha256_hex", lambda data: hashed.append(1) or content_sha256_hex(data))
    helper = str(package / "helper.py")
    content_keys._DIGESTS.clear()
    try:
        first = module_entries.module_entry(ProjectIndex(), helper)
        assert hashed == [1] and first is not None
        later = module_entries.module_entry(ProjectIndex(), helper)  # another index: its own scopes
        assert hashed == [1] and later is not None and later[0] == first[0]
        assert later[1].unique("DQ_OPS") is not None

        before = os.stat(helper).st_mtime_ns
        old_file(package / "helper.py", HELPER.replace("DQ_OPS", "DQ_LIST"))
        os.utime(helper, ns=(before - 10**9, before - 10**9))
        changed = module_entries.module_entry(ProjectIndex(), helper)
        assert hashed == [1, 1] and changed is not None
        assert changed[0][1] == content_sha256_hex((package / "helper.py").read_bytes())
        assert changed[1].unique("DQ_LIST") is not None and changed[1].unique("DQ_OPS") is None
    finally:
        content_keys._DIGESTS.clear()
