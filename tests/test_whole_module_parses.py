"""A large module is parsed one top-level definition at a time wherever qlint parses a whole
module (issue 13, peak memory): the engine's parse of a checked file and `live_trees.parse`
(a caller module's, a summary's, a project scan's) give the tree `ast.parse` gives, without
the parser's own whole-module tree beside it. A smaller module is still one parse."""

from __future__ import annotations

import ast

import pytest

from qlint import engine
from qlint.analysis.names import live_trees, piecewise_parse

FILLERS = "".join(f"\n\ndef filler_{i}(x):\n    return x + {i}\n" for i in range(8000))
LARGE = "import torch\n" + FILLERS
# Over `piecewise_parse._SMALL` (what a summary kept for a reader is cut at), under `LARGE`:
# one parse here, the pieces cost more instructions than the peak they save.
MIDDLE = "import torch\n" + FILLERS[: len(FILLERS) // 4]
SMALL = "import torch\n\n\ndef f(x):\n    return x\n"
# The size of torchao's test_qat.py (103 KB), under its test_quantize_pt2e.py (177 KB): on top
# of what a run over ao held by then, the whole parse of either was the run's peak.
AO_TEST_SIZE = "import torch\n" + FILLERS[: FILLERS.index("\n\ndef", 103_000)]


@pytest.fixture
def parsed_lengths(monkeypatch):
    """The length of every text handed to `ast.parse`."""
    seen: list[int] = []
    real = ast.parse

    def parse(source, *a, **kw):
        seen.append(len(source))
        return real(source, *a, **kw)

    monkeypatch.setattr(ast, "parse", parse)
    return seen, real


@pytest.mark.parametrize(
    "parse",
    [engine.parse_module, lambda text, path: live_trees.parse(text, path)],
    ids=["engine", "live_trees"],
)
@pytest.mark.parametrize("text", [LARGE, AO_TEST_SIZE], ids=["large", "ao_test_size"])
def test_a_large_module_is_parsed_in_pieces_into_the_same_tree(parsed_lengths, parse, text, tmp_path):
    seen, real = parsed_lengths
    tree = parse(text, str(tmp_path / "large.py"))
    assert ast.dump(tree, include_attributes=True) == ast.dump(real(text), include_attributes=True)
    assert len(seen) > 1 and max(seen) < len(text)  # never the whole text at once


@pytest.mark.parametrize(
    "parse",
    [engine.parse_module, lambda text, path: live_trees.parse(text, path)],
    ids=["engine", "live_trees"],
)
@pytest.mark.parametrize("text", [SMALL, MIDDLE], ids=["small", "middle"])
def test_a_smaller_module_is_one_parse(parsed_lengths, parse, text, tmp_path):
    seen, real = parsed_lengths
    assert len(text) < piecewise_parse.LARGE
    tree = parse(text, str(tmp_path / "small.py"))
    assert ast.dump(tree, include_attributes=True) == ast.dump(real(text), include_attributes=True)
    assert seen == [len(text)]


def test_a_large_module_that_does_not_parse_raises_what_the_whole_parse_raises(parsed_lengths, tmp_path):
    _, real = parsed_lengths
    broken = LARGE + "\n\ndef broken(:\n    pass\n"
    with pytest.raises(SyntaxError) as whole:
        real(broken, filename="large.py")
    with pytest.raises(SyntaxError) as pieces:
        engine.parse_module(broken, "large.py")
    assert (pieces.value.msg, pieces.value.lineno, pieces.value.offset) == (
        whole.value.msg,
        whole.value.lineno,
        whole.value.offset,
    )
