"""QL201 through a quantizer class whose instances stay in the module (`confined_instances`),
with its loads found on the rows Python reads them on (`FileContext.lines_containing`, which
reads `ctx.words`): the rows spelling the class's name were `str.splitlines` of the raw text,
which splits a row at a form feed (`\\x0c`, a page break many old modules hold) where Python
does not, and reads no fullwidth spelling (a fullwidth `M` of `MyQuantizer` is `M` to Python, NFKC).
An instance handed on from a row after a form feed, or under a fullwidth spelling, was not
seen leaving the module: the method's calls were taken as all known, and a train-mode model
reaching it through the instance handed on went unreported.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.test_ql201_kept_instances import BOUND, CAPTURE_ROW
from tests.test_ql201_kept_instances import _rows as kept_rows
from tests.test_ql201_quantizer_subclasses import HEAD, QUANTIZER, TEST, capture_row, rows

# A function of another library handed an instance: it may call `prepare` on anything.
HANDED = "\n\ndef test_handed():\n    somelib.run({name}())\n"
HEAD_LIB = HEAD + "import somelib\n"
SRC = QUANTIZER.format(base="object") + TEST.format(mode=".eval()")


def _rows(src: str, tmp_path) -> list[int]:
    return rows(src, tmp_path, head=HEAD_LIB)


def test_the_plain_module_is_quiet_and_an_instance_handed_on_is_loud(tmp_path):
    assert _rows(SRC, tmp_path) == []
    assert _rows(SRC + HANDED.format(name="MyQuantizer"), tmp_path) == [capture_row(SRC, HEAD_LIB)]


def test_a_fullwidth_spelling_hands_the_instance_on_as_its_plain_twin(tmp_path):
    src = SRC + HANDED.format(name="\uff2dyQuantizer")  # a fullwidth `M`
    assert _rows(src, tmp_path) == [capture_row(SRC, HEAD_LIB)]


def test_a_row_after_a_form_feed_is_read_where_python_reads_it(tmp_path):
    # A page break before the quantizer: every row after it is one row further for splitlines.
    src = "\n\x0c\n" + SRC + HANDED.format(name="MyQuantizer")
    assert _rows(src, tmp_path) == [capture_row(SRC, HEAD_LIB) + 2]
    assert _rows("\n\x0c\n" + SRC, tmp_path) == []


def test_rows_ended_by_a_lone_carriage_return_read_as_their_plain_twin(tmp_path):
    plain = SRC + HANDED.format(name="MyQuantizer")
    src = (HEAD_LIB + textwrap.dedent(plain)).replace("\n", "\r")
    assert rows(src, tmp_path, head="") == [capture_row(SRC, HEAD_LIB)]


# The same rows for the instances of a class whose method's name too many modules spell
# (`kept_instances`): an instance escaping in the class's own module, after a page break or
# under a fullwidth spelling, keeps the callers unknown and the finding.
ESCAPE = "\n\ndef default_stage(q):\n    return {name}(q)\n"


@pytest.mark.parametrize(
    "extra",
    ["\n\x0c\n" + ESCAPE.format(name="Quantize"), ESCAPE.format(name="\uff31uantize")],  # a fullwidth `Q`
    ids=["after_a_form_feed", "fullwidth"],
)
def test_a_kept_instance_escaping_so_keeps_the_finding(tmp_path, monkeypatch, extra):
    assert kept_rows(tmp_path / "loud", monkeypatch, extra=extra, use=BOUND) == [CAPTURE_ROW]
    assert kept_rows(tmp_path / "quiet", monkeypatch, extra="\n\x0c\n", use=BOUND) == []
