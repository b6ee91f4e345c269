"""QL201: a model that builds a module in a method and calls it through a local name
(issue 14, item 7; `called_locals`).

ExecuTorch's Qualcomm test models (`AdaptiveMaxPool2D`, `AdaptiveAvgPool3D`) write
`adaptive_max_pool = torch.nn.AdaptiveMaxPool2d(...)` in `forward` and return
`adaptive_max_pool(x)`. The call of a name held in a variable may run anything, so such a model
was not known in full and a caller passing it kept the helper's finding. A name the function
binds once, to the construction of a class whose content is read, runs that module: what it
holds is read with the construction. A name bound otherwise too (twice, as a parameter, to
what a function returns) is still anything.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.test_ql201_loop_items import CAPTURE_ROW, ql201

POOL = """
class Pool(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.size = size

    def forward(self, x):
{body}
"""


def _caller(body: str, passed: str = "Pool(4)") -> str:
    return POOL.format(body=textwrap.indent(textwrap.dedent(body), " " * 8)) + textwrap.dedent(
        f"""
        def main(x, q):
            quantize({passed}, (x,), q)
        """
    )


QUIET = {
    "a torch.nn class": """
        pool = torch.nn.AdaptiveMaxPool2d(self.size, False)
        return pool(x)
        """,
    "a class of the module": """
        flip = Shuffle()
        return flip(x)
        """,
    "bound in a branch, called after": """
        if self.size:
            pool = nn.AvgPool1d(self.size)
            return pool(x)
        return x
        """,
}


@pytest.mark.parametrize("body", QUIET.values(), ids=QUIET.keys())
def test_a_module_built_and_called_in_a_method_is_read_in_full(body):
    assert ql201(_caller(body)) == []


LOUD = {
    "the module built has dropout": """
        drop = nn.Dropout(0.5)
        return drop(x)
        """,
    "the name bound twice": """
        pool = nn.AvgPool1d(self.size)
        if self.size > 2:
            pool = make_pool(self.size)
        return pool(x)
        """,
    "the name bound to what a function returns": """
        pool = make_pool(self.size)
        return pool(x)
        """,
    "the name a loop's target too": """
        pool = nn.AvgPool1d(self.size)
        for pool in make_pools():
            x = pool(x)
        return x
        """,
}


@pytest.mark.parametrize("body", LOUD.values(), ids=LOUD.keys())
def test_a_local_called_that_may_hold_anything_keeps_the_finding(body):
    (d,) = ql201("from pools import make_pool, make_pools\n" + _caller(body))
    assert d.range.start.row == CAPTURE_ROW


def test_a_parameter_called_keeps_the_finding():
    body = """
        pool = self.size
        return pool(x)
        """
    (d,) = ql201(_caller(body))
    assert d.range.start.row == CAPTURE_ROW
