"""QL201: models handed to a helper as `modules[i]` of a list written in the caller, which
the loop replaces by index (issue 14, item 7; `indexed_items`).

ExecuTorch's Qualcomm embedding test writes `modules = [Embedding(), Embedding()]` and then
`for i, qdtype in enumerate(quant_dtype): modules[i] = self.get_qdq_module(modules[i], ...)`.
The store left the list unfollowed and the read had no value: the caller was unclassified.
`modules[i]` is now any element the list may hold, written there or stored since.
"""

from __future__ import annotations

import pytest

from tests.test_ql201_keyed_rows import CAPTURE_ROW, _rows

QUIET = {
    "ExecuTorch's embedding test: read and replaced by the result": """
        def main(x, q, dtypes):
            modules = [Shuffle(), Shuffle()]
            for i, dtype in enumerate(dtypes):
                modules[i] = quantize(modules[i], (x,), q)
                lower(modules[i], x)
        """,
    "an eval-mode model among them, and one stored before the loop": """
        def main(x, q, n):
            modules = [Shuffle(), Net().eval()]
            modules[1] = Leaky()
            for i in range(n):
                quantize(modules[i], (x,), q)
        """,
    "a train-mode model in another list": """
        def main(x, q, n):
            modules = [Shuffle()]
            others = [Net()]
            others[0] = Net()
            for i in range(n):
                quantize(modules[i], (x,), q)
        """,
}


@pytest.mark.parametrize("caller", QUIET.values(), ids=QUIET.keys())
def test_indexed_harmless_models_keep_the_helper_quiet(tmp_path, caller):
    assert _rows(tmp_path, caller) == []


LOUD = {
    "a batch-norm model in the list": """
        def main(x, q, dtypes):
            modules = [Shuffle(), Net()]
            for i, dtype in enumerate(dtypes):
                modules[i] = quantize(modules[i], (x,), q)
        """,
    "a batch-norm model stored before the read": """
        def main(x, q, n):
            modules = [Shuffle(), Shuffle()]
            modules[n] = Net()
            quantize(modules[n], (x,), q)
        """,
    "stored after the call, read by the next iteration": """
        def main(x, q, n):
            modules = [Shuffle(), Shuffle()]
            for i in range(n):
                quantize(modules[i], (x,), q)
                modules[i] = Net()
        """,
    "the element switched through the read": """
        def main(x, q, n):
            modules = [Shuffle(), Net().eval()]
            modules[n].train()
            quantize(modules[n], (x,), q)
        """,
    "another element handed to a helper that gives it a dropout": """
        def main(x, q, pairs):
            modules = [Shuffle(), Shuffle()]
            for i, j in pairs:
                modules[i] = quantize(modules[i], (x,), q)
                lower(modules[j], x)
        """,
    "the stored element handed on a statement later (the index may have moved)": """
        def main(x, q, n):
            modules = [Shuffle(), Shuffle()]
            for i in range(n):
                modules[i] = quantize(modules[i], (x,), q)
                i = n - i
                lower(modules[i], x)
        """,
    "a model the walk cannot follow stored": """
        def main(x, q, n, make):
            modules = [Shuffle()]
            modules[n] = make()
            quantize(modules[n], (x,), q)
        """,
    "the list handed to a call that may change it": """
        def main(x, q, n, fill):
            modules = [Shuffle()]
            fill(modules)
            quantize(modules[n], (x,), q)
        """,
    "a slice stored": """
        def main(x, q, n):
            modules = [Shuffle()]
            modules[0:1] = [Net()]
            quantize(modules[n], (x,), q)
        """,
    "the last element, appended, read by a negative index": """
        def main(x, q):
            modules = [Shuffle()]
            modules.append(Net())
            quantize(modules[-1], (x,), q)
        """,
    "an augmented store": """
        def main(x, q, n, more):
            modules = [Shuffle()]
            modules[n] += more
            quantize(modules[n], (x,), q)
        """,
}


@pytest.mark.parametrize("caller", LOUD.values(), ids=LOUD.keys())
def test_indexed_reads_reaching_a_train_mode_model_keep_the_report(tmp_path, caller):
    assert _rows(tmp_path, caller) == [CAPTURE_ROW]
