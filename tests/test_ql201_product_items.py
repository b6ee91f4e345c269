"""QL201: models handed to a helper from a loop over a list comprehension of
`itertools.product` of lists written in the caller (issue 14, item 7; `product_items`).

ExecuTorch's Qualcomm max-pool test writes `test_pairs = [(module, quant_type) for module,
quant_type in itertools.product(modules, test_quants)]` over `modules = [MaxPool2d(...), ...]`
and then `for i, (test_module, qtype) in enumerate(test_pairs): self.get_qdq_module(
test_module, ...)`. The comprehension had no elements the walk knew, so the loop item was a
model of unknown mode and the caller unclassified.
"""

from __future__ import annotations

import pytest

from tests.test_ql201_keyed_rows import CAPTURE_ROW, _rows

QUIET = {
    "ExecuTorch's max-pool test: pairs of a model and a dtype": """
        import itertools

        def main(x, q):
            modules = [Shuffle(), Net().eval()]
            dtypes = [torch.float, torch.half, torch.int8]
            pairs = [(module, dtype) for module, dtype in itertools.product(modules, dtypes)]
            for i, (module, dtype) in enumerate(pairs):
                quantize(module, (x,), q)
        """,
    "the elements swapped": """
        import itertools

        def main(x, q):
            modules = [Shuffle(), Leaky()]
            flags = [True, False]
            pairs = [(f, m) for m, f in itertools.product(modules, flags)]
            for flag, module in pairs:
                quantize(module, (x,), q)
        """,
}


@pytest.mark.parametrize("caller", QUIET.values(), ids=QUIET.keys())
def test_products_of_harmless_models_keep_the_helper_quiet(tmp_path, caller):
    assert _rows(tmp_path, caller) == []


LOUD = {
    "a batch-norm model among them": """
        import itertools

        def main(x, q):
            modules = [Shuffle(), Net()]
            dtypes = [torch.float, torch.half]
            pairs = [(module, dtype) for module, dtype in itertools.product(modules, dtypes)]
            for module, dtype in pairs:
                quantize(module, (x,), q)
        """,
    "a condition in the comprehension": """
        import itertools

        def main(x, q, keep):
            modules = [Shuffle(), Net()]
            dtypes = [torch.float]
            pairs = [(m, d) for m, d in itertools.product(modules, dtypes) if keep(m)]
            for module, dtype in pairs:
                quantize(module, (x,), q)
        """,
    "switched to train through the list after the comprehension": """
        import itertools

        def main(x, q):
            modules = [Shuffle(), Net().eval()]
            dtypes = [torch.float]
            pairs = [(m, d) for m, d in itertools.product(modules, dtypes)]
            for m in modules:
                m.train()
            for module, dtype in pairs:
                quantize(module, (x,), q)
        """,
    "switched to train through a pair, then read from the list": """
        import itertools

        def main(x, q):
            modules = [Shuffle(), Net().eval()]
            dtypes = [torch.float]
            pairs = [(m, d) for m, d in itertools.product(modules, dtypes)]
            for module, dtype in pairs:
                module.train()
            for module in modules:
                quantize(module, (x,), q)
        """,
    "a dropout given through a pair before the call": """
        import itertools

        def main(x, q):
            modules = [Shuffle(), Leaky()]
            dtypes = [torch.float]
            pairs = [(m, d) for m, d in itertools.product(modules, dtypes)]
            for i, (module, dtype) in enumerate(pairs):
                lower(module, x)
                quantize(module, (x,), q)
        """,
    "a dropout given through one target alone": """
        import itertools

        def main(x, q):
            modules = [Shuffle(), Leaky()]
            dtypes = [torch.float]
            for module in [m for m, d in itertools.product(modules, dtypes)]:
                module.extra = nn.Dropout(0.5)
            pairs = [m for m, d in itertools.product(modules, dtypes)]
            for module in pairs:
                quantize(module, (x,), q)
        """,
    "a comprehension written inline, not bound to a name": """
        import itertools

        def main(x, q):
            modules = [Shuffle(), Net()]
            dtypes = [torch.float]
            for module, dtype in [(m, d) for m, d in itertools.product(modules, dtypes)]:
                quantize(module, (x,), q)
        """,
    "a list the walk does not follow": """
        import itertools

        def main(x, q, more):
            modules = [Shuffle(), *more]
            dtypes = [torch.float]
            pairs = [(m, d) for m, d in itertools.product(modules, dtypes)]
            for module, dtype in pairs:
                quantize(module, (x,), q)
        """,
}


@pytest.mark.parametrize("caller", LOUD.values(), ids=LOUD.keys())
def test_products_reaching_a_train_mode_model_keep_the_report(tmp_path, caller):
    assert _rows(tmp_path, caller) == [CAPTURE_ROW]
