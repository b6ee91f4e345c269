"""`word_search`: the anchored search finds what `re.search` finds, and the word count what
`len(re.findall(r"\\bWORD\\b", text))` counts, on the look-alikes that make `\\b` matter."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from qlint.analysis.graphs.compile_backends import _REGISTERS
from qlint.analysis.graphs.dead_code import _SELF_MODULE
from qlint.analysis.graphs.never_called import DYNAMIC_LOOKUP
from qlint.analysis.names.op_refs import OpRef
from qlint.analysis.word_search import AnchoredPattern, ascii_word_count, spells_word
from qlint.rules.op_spellings import OverloadSpelling

TEXTS = [
    "",
    "vars(x)",
    "observers(x)",  # `vars` inside a word: no `\b` before it
    "x = observer_vars (y)",  # `vars` after `_`, a word character
    "print(vars  (m))",
    "vars\n(m)",
    "m.__dict__",
    "__dict__",
    "ab__dict__cd",  # `__dict__` has no `\b`: matches inside a word
    "globalsx(1) locals(2)",  # the first anchor fails, a later one matches
    "getmembers getmembers(m)",  # the same anchor fails, then matches further on
    "sys.modules_x import_module(n) __import__ (n)",
    "mysys.modules sys.modules",
    "sys.modules.get(n)",
    "xx__import__(n) importlib.import_module(n)",
    "no lookup at all here",
    "vars" * 50 + " vars(",
    "backend_x = 1; my_backend = 2",  # `backend` inside words: no registration
    "torch.compile(m, backend = be)",
    "rebackend=1\ndynamo.optimize ('eager')",  # the first word fails, the other matches
    "optimizer(x) optimize\n(y)",
]


_ANCHORED = [DYNAMIC_LOOKUP, _SELF_MODULE, _REGISTERS]


@pytest.mark.parametrize("compiled", _ANCHORED, ids=["dynamic", "self_module", "registers"])
@pytest.mark.parametrize("text", TEXTS)
def test_anchored_search_is_re_search(compiled: AnchoredPattern, text: str) -> None:
    expected = re.search(compiled.pattern, text)
    found = compiled.search(text)
    assert (found and found.span()) == (expected and expected.span())


def test_anchored_search_on_real_modules() -> None:
    """qlint's own sources: modules that use `vars(`, `__dict__` and `sys.modules`, and many
    that spell the words only inside longer ones."""
    root = Path(__file__).resolve().parents[1] / "qlint"
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for compiled in _ANCHORED:
            expected = re.search(compiled.pattern, text)
            found = compiled.search(text)
            assert (found and found.span()) == (expected and expected.span()), path


def test_missing_anchor_is_refused() -> None:
    with pytest.raises(AssertionError):
        AnchoredPattern("x", ())


@pytest.mark.parametrize(
    "text, word",
    [
        ("def f(): pass\n", "f"),
        ("def f(): pass\nf()\n", "f"),
        ("def ff(): pass\nff_x = ff2\n", "ff"),  # longer words do not count
        ("def g(): pass\nx.g\ng", "g"),  # at the very end, after a dot
        ("_g g_ g", "g"),
        ("helper helper helper", "helper"),  # counted up to the limit
        ("", "f"),
    ],
)
def test_ascii_word_count_is_findall(text: str, word: str) -> None:
    expected = len(re.findall(rf"\b{re.escape(word)}\b", text))
    assert ascii_word_count(text, word, 2) == min(expected, 2)
    assert ascii_word_count(text, word, 100) == expected


def _word_search(text: str, word: str) -> bool:
    return re.search(rf"\b{re.escape(word)}\b", text) is not None


@pytest.mark.parametrize(
    "text, word",
    [
        ("get_qdq_module(m)", "get_qdq_module"),
        ("get_qdq_module_x(m)", "get_qdq_module"),  # only inside a longer word
        ("xget_qdq_module get_qdq_module", "get_qdq_module"),  # a later occurrence is the word
        ("édynamic_quant dynamic_quanté", "dynamic_quant"),  # non-ASCII letters are word characters
        ("dynamic_quant٣", "dynamic_quant"),  # and so are non-ASCII digits
        ("a·dynamic_quant", "dynamic_quant"),  # `·` is none
        ("dynamic_quant", "dynamic_quant"),  # the text's ends are boundaries
        ("x.y x .y", ".y"),  # a word led by a non-word character needs a word character before it
        ("f( f (", "f("),
        ("", "f"),
        ("abc", ""),
        ("", ""),
    ],
)
def test_spells_word_is_re_search(text: str, word: str) -> None:
    assert spells_word(text, word) is _word_search(text, word)


def test_spells_word_every_short_text() -> None:
    """Every text of up to five characters over word, non-word and non-ASCII characters."""
    alphabet = "a_é .٣"
    words = ["a", "a_", "_a", "é", ".", "a.", ".a", "aa", "a a", "٣a"]
    texts = ["".join(chars) for size in range(6) for chars in itertools.product(alphabet, repeat=size)]
    for text in texts:
        for word in words:
            assert spells_word(text, word) is _word_search(text, word), (text, word)


def test_spells_word_on_real_modules() -> None:
    root = Path(__file__).resolve().parents[1] / "qlint"
    words = ["ast", "spells_word", "re", "text", "names_naming", "_", "self.", "def", "import re"]
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for word in words:
            assert spells_word(text, word) is _word_search(text, word), (path, word)


@pytest.mark.parametrize(
    "text",
    [
        "aten.relu.default",
        "x = aten . relu . Tensor",
        "xaten.relu.default",  # the namespace inside a word: no overload of it
        "my_aten.relu.default aten.relu.default",  # a later occurrence spells one
        "aten.relu(x)",
        "aten.relu_.default",
        "",
    ],
)
def test_overload_spelling_is_re_search(text: str) -> None:
    ref = OpRef("aten", "relu", None)
    expected = re.search(r"\baten\s*\.\s*relu\s*\.\s*[A-Za-z_]\w*", text) is not None
    assert OverloadSpelling(ref).search(text) is expected
