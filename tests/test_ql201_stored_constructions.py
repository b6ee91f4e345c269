"""QL201: a model stored from `__init__` and captured in another method is vouched for by
the constructions of its class across the project (issue 14, item 2).

`self.model = model` in `__init__`, captured in `__enter__` of a context manager or in a
`run()` method: what each `Ctx(net.eval(), x)` passes is the model captured. Constructions in
the class's own module were read before; those in other modules now are too, found by the
class's name (`construction_references`). A reference that may build it out of sight (a
subclass, the class handed on as a value) leaves the constructions unknown, and the capture
is judged as if its callers were: reported.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import check_file, package_repository, rows_of
from tests.snippets import NET_BN2D

CTX = (
    NET_BN2D
    + """
    @classmethod
    def from_pretrained(cls, name):
        return cls().eval()


class Ctx:
    def __init__(self, model, x):
        self.model = model
        self.x = x

    def __enter__(self):
        captured = export(self.model, (self.x,)).module()
        self.prepared = prepare_pt2e(captured, None)
        return self.prepared

    def __exit__(self, *exc):
        return False
"""
)
CAPTURE_ROW = CTX.splitlines().index("        captured = export(self.model, (self.x,)).module()") + 1
IMPORT = "from pkg.ctx import Ctx, Net\n"


def _rows(tmp_path, script: str, own: str = "") -> list[int]:
    root = package_repository(tmp_path / "repo", ctx=CTX + own, run=IMPORT + textwrap.dedent(script))
    return rows_of(check_file(root / "pkg" / "ctx.py", ("QL201",)).diagnostics)


EVAL_CONSTRUCTIONS = {
    "in_a_with": """
        def main(x):
            with Ctx(Net().eval(), x) as p:
                p(x)
        """,
    "bound_first": """
        def main(x):
            m = Net()
            m.eval()
            ctx = Ctx(m, x)
            with ctx as p:
                p(x)
        """,
    "by_keyword": "def main(x):\n    Ctx(model=Net().eval(), x=x).__enter__()\n",
    "through_the_module": "import pkg.ctx as c\n\ndef main(x):\n    c.Ctx(Net().eval(), x).__enter__()\n",
    "pretrained": "def main(x):\n    Ctx(Net.from_pretrained('a'), x).__enter__()\n",
    "handed_on_by_a_caller": """
        def go(m, x):
            with Ctx(m, x) as p:
                p(x)

        def main(x):
            go(Net().eval(), x)
        """,
    "beside_type_tests_and_annotations": """
        def main(x, other: Ctx | None = None) -> Ctx:
            if isinstance(other, Ctx):
                return other
            made: Ctx = Ctx(Net().eval(), x)
            return made
        """,
}


@pytest.mark.parametrize("name", sorted(EVAL_CONSTRUCTIONS))
def test_constructions_elsewhere_passing_eval_models_keep_it_quiet(tmp_path, name):
    assert _rows(tmp_path, EVAL_CONSTRUCTIONS[name]) == []


RISKY = {
    "train_mode": "def main(x):\n    with Ctx(Net(), x) as p:\n        p(x)\n",
    "one_of_two": "def main(x):\n    Ctx(Net().eval(), x).__enter__()\n    Ctx(Net(), x).__enter__()\n",
    "its_own_parameter": "def main(m, x):\n    Ctx(m, x).__enter__()\n",
    "a_subclass": "class Sub(Ctx):\n    pass\n\n\ndef main(x):\n    Sub(Net().eval(), x).__enter__()\n",
    "the_class_as_a_value": "def main(x, make=Ctx):\n    make(Net().eval(), x).__enter__()\n",
}


@pytest.mark.parametrize("name", sorted(RISKY))
def test_a_construction_that_does_not_vouch_keeps_the_finding(tmp_path, name):
    assert _rows(tmp_path, RISKY[name]) == [CAPTURE_ROW]


def test_no_construction_anywhere_keeps_the_finding(tmp_path):
    assert _rows(tmp_path, "def main(x):\n    return x\n") == [CAPTURE_ROW]


def test_constructions_in_its_module_do_not_vouch_for_those_elsewhere(tmp_path):
    # Its module builds it with an eval-mode model; a script elsewhere with a train-mode one.
    own = "\n\ndef default(x):\n    with Ctx(Net().eval(), x) as p:\n        return p(x)\n"
    root = tmp_path / "t"
    assert _rows(root, "def main(x):\n    Ctx(Net(), x).__enter__()\n", own) == [CAPTURE_ROW]
    # The look-alikes that are right: every construction, here and there, passes eval.
    assert _rows(tmp_path / "e", "def main(x):\n    Ctx(Net().eval(), x).__enter__()\n", own) == []
    assert _rows(tmp_path / "n", "def main(x):\n    return Net()\n", own) == []
