"""QL201: models handed to a helper from a list comprehension that builds one model per item
of a table of constants (issue 14, item 7; `built_items`).

ExecuTorch's Qualcomm grid_sample test writes `grid_samples = [GridSample(mode, pad, align)
for mode, pad, align in itertools.product(modes, padding_modes, align_corners)]` and then
`for i, module in enumerate(grid_samples): self.get_qdq_module(module, ...)`. The
comprehension had no elements the walk knew: the loop item was a model of unknown mode and
the caller unclassified. Each element is now a construction of the class, in its mode.
"""

from __future__ import annotations

import pytest

from tests.test_ql201_keyed_rows import CAPTURE_ROW, _rows

QUIET = {
    "ExecuTorch's grid_sample test: a product of lists of constants": """
        import itertools

        def main(x, q, n):
            dims = [1, 2]
            skips = [False, True]
            models = [Flagged(dim, skip) for dim, skip in itertools.product(dims, skips)]
            for j in range(n):
                for i, module in enumerate(models):
                    module = quantize(module, (x,), q)
        """,
    "a range, with a condition": """
        def main(x, q):
            models = [Shuffle() for k in range(4) if k % 2]
            for module in models:
                quantize(module, (x,), q)
        """,
    "an outer model of the target's name is not what the element reads": """
        def main(x, q):
            dim = Net()
            models = [Flagged(dim) for dim in [1, 2]]
            for module in models:
                quantize(module, (x,), q)
        """,
}


@pytest.mark.parametrize("caller", QUIET.values(), ids=QUIET.keys())
def test_built_harmless_models_keep_the_helper_quiet(tmp_path, caller):
    assert _rows(tmp_path, caller) == []


LOUD = {
    "a batch-norm model built per item": """
        def main(x, q):
            models = [Net() for _ in range(3)]
            for module in models:
                quantize(module, (x,), q)
        """,
    "a model among the values the class is given": """
        def main(x, q):
            models = [Flagged(dim) for dim in [1, Net()]]
            for module in models:
                quantize(module, (x,), q)
        """,
    "a parameter's items": """
        def main(x, q, dims):
            models = [Flagged(dim) for dim in dims]
            for module in models:
                quantize(module, (x,), q)
        """,
    "an element that is no construction (a method's result)": """
        def main(x, q):
            models = [Leaky().eval() for _ in range(2)]
            for module in models:
                quantize(module, (x,), q)
        """,
    "a dropout given to each model before the call": """
        def main(x, q):
            models = [Shuffle() for _ in range(2)]
            for module in models:
                lower(module, x)
                quantize(module, (x,), q)
        """,
    "a function's result, not a construction": """
        def main(x, q):
            models = [make(k) for k in range(2)]
            for module in models:
                quantize(module, (x,), q)
        """,
}


@pytest.mark.parametrize("caller", LOUD.values(), ids=LOUD.keys())
def test_built_models_that_may_be_harmful_keep_the_report(tmp_path, caller):
    assert _rows(tmp_path, caller) == [CAPTURE_ROW]
