"""`lazy_patterns.lazy`: a pattern compiled at its first use answers as `re.compile`'s does."""

from __future__ import annotations

import re

from qlint.lazy_patterns import LazyPattern, lazy


def test_a_lazy_pattern_answers_as_the_compiled_one():
    text = "a = torch.ao.quantization\nB = 2\n"
    for source, flags in ((r"(\w+)\s*=", 0), (r"^b", re.I | re.M), (r"torch(?:ao|vision)", 0)):
        made, compiled = lazy(source, flags), re.compile(source, flags)
        found, expected = made.search(text), compiled.search(text)
        assert (found and found.span()) == (expected and expected.span())
        assert [m.span() for m in made.finditer(text)] == [m.span() for m in compiled.finditer(text)]
        assert made.findall(text, 2) == compiled.findall(text, 2)
        assert made.split(text) == compiled.split(text) and made.sub("x", text) == compiled.sub("x", text)
        assert made.pattern == compiled.pattern and made.groups == compiled.groups


def test_bytes_patterns_too():
    assert lazy(rb"\w+").findall(b"as x, y") == [b"as", b"x", b"y"]


def test_compiled_once_at_first_use(monkeypatch):
    made = lazy(r"x+")
    assert "search" not in vars(made)  # nothing compiled yet
    made.search("xx")
    calls = []
    monkeypatch.setattr(re, "compile", lambda *a: calls.append(a))
    assert made.match("xxx").group() == "xxx" and made.fullmatch("x") and calls == []


def test_special_names_are_not_delegated():
    made = LazyPattern("x")
    assert not hasattr(made, "__deepcopy_helper__")
    assert "search" not in vars(made)


# Modules that compile their patterns at import, and why that is right: the op-code and name
# patterns every rule's registration checks; the other commands' (`add-noqa`, notebooks), a
# file that does not parse, and a cold run's index of the project (built once per tree).
_COMPILED_AT_IMPORT = {
    "qlint.config",
    "qlint.rule_origins",
    "qlint.add_noqa",
    "qlint.notebook",
    "qlint.parse_failure",
    "qlint.analysis.graphs.sink_index",
    "qlint.analysis.graphs.wrapper_candidates",
    "qlint.analysis.graphs.module_text",
    "qlint.analysis.graphs.masked_text",
}

_IMPORT_ALL = """
import importlib, pkgutil, re, re._compiler, sys
import qlint

compiled = []
real = re._compiler.compile


def compile(pattern, flags=0):
    frame = sys._getframe(1)
    while frame.f_globals.get("__name__", "").partition(".")[0] == "re":
        frame = frame.f_back
    if frame.f_code.co_name == "<module>" and frame.f_globals["__name__"].startswith("qlint"):
        compiled.append(frame.f_globals["__name__"])
    return real(pattern, flags)


re._compiler.compile = compile
skipped = set(sys.argv[1:])
for info in pkgutil.walk_packages(qlint.__path__, "qlint."):
    if info.name.startswith(("qlint.lsp", "qlint.runtime", "qlint.__main__")) or info.name in skipped:
        continue
    importlib.import_module(info.name)
print(sorted(set(compiled) - skipped))
"""


def test_the_modules_a_check_may_import_compile_no_pattern_at_import():
    """A pattern compiled at import is paid by every `qlint check FILE` that imports its
    module, matched or not (50-300 thousand instructions each: an editor's check of torch's
    observer.py compiled 79): `lazy` compiles it at its first use."""
    import os
    import subprocess
    import sys

    import qlint

    source = os.path.dirname(os.path.dirname(os.path.abspath(qlint.__file__)))
    proc = subprocess.run(
        [sys.executable, "-P", "-c", _IMPORT_ALL, *sorted(_COMPILED_AT_IMPORT)],
        env={**os.environ, "PYTHONPATH": source},
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.strip() == "[]", proc.stdout
