"""QL201: models handed to a helper from a loop over `zip(models, inputs)` of lists written
in the caller (issue 14, item 7; `loop_items`).

ExecuTorch's Qualcomm tests write `modules = [Gather()]`, `sample_inputs = [(x, i)]` and then
`for i, (module, sample_input) in enumerate(zip(modules, sample_inputs)): module =
self.get_qdq_module(module, sample_input)`. A loop over `enumerate(modules)` bound the item to
the list's models; one over `zip(...)` left it unknown, and the caller unclassified. `zip`
pairs the lists' elements by position, up to the shortest.
"""

from __future__ import annotations

import pytest

from tests.test_ql201_keyed_rows import CAPTURE_ROW, _rows

QUIET = {
    "zipped (ExecuTorch's slice_copy test)": """
        def main(x, q):
            modules = [Shuffle(), Leaky()]
            sample_inputs = [(x,), (x, x)]
            for module, sample_input in zip(modules, sample_inputs):
                module = quantize(module, sample_input, q)
                lower(module, sample_input)
        """,
    "enumerated and zipped (ExecuTorch's gather test)": """
        def main(x, q):
            modules = [Shuffle(), Net().eval()]
            sample_inputs = [(x,), (x, x)]
            for i, (module, sample_input) in enumerate(zip(modules, sample_inputs)):
                quantize(module, sample_input, q)
        """,
    "a train-mode model past the shortest list is never paired": """
        def main(x, q):
            modules = [Shuffle(), Net()]
            sample_inputs = [(x,)]
            for module, sample_input in zip(modules, sample_inputs):
                quantize(module, sample_input, q)
        """,
}


@pytest.mark.parametrize("caller", QUIET.values(), ids=QUIET.keys())
def test_zipped_harmless_models_keep_the_helper_quiet(tmp_path, caller):
    assert _rows(tmp_path, caller) == []


LOUD = {
    "a batch-norm model zipped": """
        def main(x, q):
            modules = [Shuffle(), Net()]
            sample_inputs = [(x,), (x, x)]
            for module, sample_input in zip(modules, sample_inputs):
                quantize(module, sample_input, q)
        """,
    "the lists zipped the other way round": """
        def main(x, q):
            modules = [Shuffle(), Net()]
            sample_inputs = [(x,), (x, x)]
            for sample_input, module in zip(sample_inputs, modules):
                quantize(module, sample_input, q)
        """,
    "a model appended after": """
        def main(x, q):
            modules = [Shuffle()]
            sample_inputs = [(x,), (x, x)]
            modules.append(Net())
            for module, sample_input in zip(modules, sample_inputs):
                quantize(module, sample_input, q)
        """,
    "the list handed to a call that may fill it": """
        def main(x, q, fill):
            modules = [Shuffle()]
            sample_inputs = [(x,), (x, x)]
            fill(modules)
            for module, sample_input in zip(modules, sample_inputs):
                quantize(module, sample_input, q)
        """,
    "a list spread into another: which elements pair up is not known": """
        def main(x, q, more):
            modules = [*more, Shuffle()]
            sample_inputs = [(x,), (x, x)]
            for module, sample_input in zip(modules, sample_inputs):
                quantize(module, sample_input, q)
        """,
    "zip(strict=True) is not read": """
        def main(x, q):
            modules = [Shuffle(), Net()]
            sample_inputs = [(x,), (x, x)]
            for module, sample_input in zip(modules, sample_inputs, strict=True):
                quantize(module, sample_input, q)
        """,
}


@pytest.mark.parametrize("caller", LOUD.values(), ids=LOUD.keys())
def test_zipped_loops_reaching_a_train_mode_model_keep_the_report(tmp_path, caller):
    assert _rows(tmp_path, caller) == [CAPTURE_ROW]
