"""QL201: models handed to a helper from rows of dicts keyed by constants (issue 14, item 7;
`keyed_rows`).

ExecuTorch's Qualcomm tests write `test_comb = [{QCOM_MODULE: [Acos()], QCOM_SAMPLE_INPUTS:
[(x,)]}, ...]` (the keys imported from utils/constants.py) and then `for comb in test_comb:
for module in comb[QCOM_MODULE]: ... module = self.get_qdq_module(module, x)`, or hand
`case[QCOM_MODULE]` to the helper directly. The item was a model of unknown mode, so 44 of
get_qdq_module's callers were unclassified; it is now each model the rows hold under that key.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import check_file, package_repository, rows_of
from tests.test_ql201_loop_items import HEAD

CONSTANTS = 'MODULE = "module"\nINPUTS = "inputs"\nOTHER = "other"\n'
# The callers are in another module, as ExecuTorch's are: one that cannot be classified
# leaves the helper judged as if its callers were unknown, which is the report.
IMPORT = (
    "from pkg.constants import INPUTS, MODULE, OTHER\n"
    "from pkg.suite import Flagged, Leaky, Net, Shuffle, lower, make_train, quantize\n"
)
EXTRA = """

class Flagged(nn.Module):
    def __init__(self, dim, skip=False):
        super().__init__()
        self.dim = dim
        self.skip = skip
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(x) if self.skip else x

class Leaky(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.LeakyReLU()

    def forward(self, x):
        return self.act(x)


def lower(m, x):
    m.extra = nn.Dropout(0.5)


def make_train(m):
    m.train()
"""
SUITE = HEAD + EXTRA
CAPTURE_ROW = SUITE.splitlines().index("    return prepare_pt2e(torch.export.export(model, x).module(), q)") + 1


def _rows(tmp_path, caller: str, constants: str = CONSTANTS) -> list[int]:
    callers = IMPORT + textwrap.dedent(caller)
    root = package_repository(tmp_path / "repo", constants=constants, suite=SUITE, test_rows=callers)
    return rows_of(check_file(root / "pkg" / "suite.py", ("QL201",)).diagnostics)


QUIET = {
    "ExecuTorch's form: rows of lists, rebound to the result in an inner loop, handed on after": """
        def main(x, q):
            test_comb = [
                {MODULE: [Leaky()], INPUTS: [(x,)]},
                {MODULE: [Shuffle(), Leaky()], INPUTS: [(x,), (x, x)]},
            ]
            for comb in test_comb:
                for module in comb[MODULE]:
                    for sample_input in comb[INPUTS]:
                        module = quantize(module, sample_input, q)
                        lower(module, sample_input)
        """,
    "the model read by key and handed over directly": """
        def main(x, q):
            cases = [
                {MODULE: Leaky(), INPUTS: (x,)},
                {MODULE: Net().eval(), INPUTS: (x,)},
            ]
            for i, case in enumerate(cases):
                quantize(case[MODULE], case[INPUTS], q)
        """,
    "a train-mode model under another key is not read": """
        def main(x, q):
            cases = [{MODULE: Shuffle(), OTHER: Net()}, {MODULE: Shuffle(), OTHER: Net()}]
            for case in cases:
                quantize(case[MODULE], (x,), q)
                print(case[OTHER])
        """,
    "a flag read by .get with a constant default (ExecuTorch's var test)": """
        def main(x, q, log):
            test_comb = [{MODULE: [Leaky()], INPUTS: [(x,)]}, {MODULE: [Shuffle()], INPUTS: [(x,)], "check": False}]
            for comb in test_comb:
                for module in comb[MODULE]:
                    for sample_input in comb[INPUTS]:
                        qdq_module = quantize(module, sample_input, q)
                        log(qdq_module, check=comb.get("check", True))
        """,
    "ExecuTorch's activation-fusion test: a row's lambda called, its message formatted, its inputs listed": """
        import torch


        def main(x, q, log):
            cases = [
                {"name": "a", MODULE: Leaky(), INPUTS: (torch.randn(2, 4),), "check": lambda o: "re" in o, "msg": "a"},
                {"name": "b", MODULE: Shuffle(), INPUTS: (torch.randn(4), 1), "check": lambda o: False, "msg": "b"},
            ]
            for case in cases:
                module = quantize(case[MODULE], case[INPUTS], q)
                ops = log(module, [case[INPUTS]])
                assert not case["check"](ops), f"{case['msg']}, got: {ops}"
        """,
    "keys written as literals": """
        def main(x, q):
            for case in [{"module": Shuffle()}, {"module": Leaky()}]:
                quantize(case["module"], (x,), q)
        """,
    "a row without the key raises KeyError before any call": """
        def main(x, q):
            cases = [{MODULE: Shuffle()}, {OTHER: Net()}]
            for case in cases:
                quantize(case[MODULE], (x,), q)
        """,
    "a flag the model stores handed on (ExecuTorch's index_copy test)": """
        def main(x, q):
            cases = [{MODULE: Flagged(1, skip=False), INPUTS: (x,)}, {MODULE: Flagged(2, True), INPUTS: (x,)}]
            for i, test in enumerate(cases):
                module = quantize(test[MODULE], test[INPUTS], q)
                lower(module, test[INPUTS], skip=test[MODULE].skip)
        """,
}


@pytest.mark.parametrize("caller", QUIET.values(), ids=QUIET.keys())
def test_rows_of_harmless_models_keep_the_helper_quiet(tmp_path, caller):
    assert _rows(tmp_path, caller) == []


LOUD = {
    "rows a function nested in the caller rebinds (nonlocal): a train-mode model may be read": """
        def main(x, q):
            cases = [{MODULE: Shuffle()}, {MODULE: Leaky()}]

            def reset():
                nonlocal cases
                cases = [{MODULE: Net()}]

            reset()
            for case in cases:
                quantize(case[MODULE], (x,), q)
        """,
    "a batch-norm model in one row's list": """
        def main(x, q):
            test_comb = [{MODULE: [Shuffle()], INPUTS: [(x,)]}, {MODULE: [Net()], INPUTS: [(x,)]}]
            for comb in test_comb:
                for module in comb[MODULE]:
                    for sample_input in comb[INPUTS]:
                        module = quantize(module, sample_input, q)
        """,
    "a batch-norm model read by key": """
        def main(x, q):
            cases = [{MODULE: Shuffle()}, {MODULE: Net()}]
            for i, case in enumerate(cases):
                quantize(case[MODULE], (x,), q)
        """,
    "the other key read": """
        def main(x, q):
            cases = [{MODULE: Shuffle(), OTHER: Net()}]
            for case in cases:
                quantize(case[OTHER], (x,), q)
        """,
    "switched to train through the key before the call": """
        def main(x, q):
            cases = [{MODULE: Net().eval()}]
            for case in cases:
                make_train(case[MODULE])
                quantize(case[MODULE], (x,), q)
        """,
    "a model added to a row's list": """
        def main(x, q):
            test_comb = [{MODULE: [Shuffle()]}]
            for comb in test_comb:
                comb[MODULE].append(Net())
                for module in comb[MODULE]:
                    quantize(module, (x,), q)
        """,
    "a row added to the list": """
        def main(x, q):
            test_comb = [{MODULE: [Shuffle()]}]
            test_comb.append({MODULE: [Net()]})
            for comb in test_comb:
                for module in comb[MODULE]:
                    quantize(module, (x,), q)
        """,
    "a key the rows cannot be known to differ from": """
        def main(x, q, key):
            cases = [{MODULE: Shuffle(), key: Net()}]
            for case in cases:
                quantize(case[MODULE], (x,), q)
        """,
    "a row spread from another dict": """
        def main(x, q, base):
            cases = [{MODULE: Shuffle(), **base}]
            for case in cases:
                quantize(case[MODULE], (x,), q)
        """,
    "a model read by .get": """
        def main(x, q, log):
            cases = [{MODULE: Shuffle(), OTHER: Net()}]
            for case in cases:
                log(case.get(OTHER, None))
                quantize(case[MODULE], (x,), q)
        """,
    "a default read by .get that is no constant": """
        def main(x, q, log):
            cases = [{MODULE: Shuffle()}]
            for case in cases:
                log(case.get(OTHER, Net()))
                quantize(case[MODULE], (x,), q)
        """,
    "another method of the row": """
        def main(x, q):
            cases = [{MODULE: Shuffle()}]
            for case in cases:
                case.update({MODULE: Net()})
                quantize(case[MODULE], (x,), q)
        """,
    "switched to train through the key spelled otherwise": """
        def main(x, q):
            cases = [{MODULE: Net().eval()}]
            for case in cases:
                make_train(case["module"])
                quantize(case[MODULE], (x,), q)
        """,
    "a row's item called that is no lambda in every row": """
        def main(x, q, check):
            cases = [{MODULE: Shuffle(), "check": check}, {MODULE: Leaky(), "check": lambda ops: False}]
            for case in cases:
                quantize(case[MODULE], (x,), q)
                case["check"](x)
        """,
    "a model of the rows handed on in a list literal": """
        def train_all(models):
            for m in models:
                m.train()


        def main(x, q):
            cases = [{MODULE: Net().eval()}]
            for case in cases:
                train_all([case[MODULE]])
                quantize(case[MODULE], (x,), q)
        """,
    "a model of the rows kept in a list": """
        def main(x, q):
            cases = [{MODULE: Net().eval()}]
            for case in cases:
                kept = [case[MODULE]]
                make_train(kept[0])
                quantize(case[MODULE], (x,), q)
        """,
    "a flag passed as a name, which may hold a module": """
        def main(x, q, skip):
            cases = [{MODULE: Flagged(1, skip=skip)}]
            for test in cases:
                make_train(test[MODULE].skip)
                quantize(test[MODULE], (x,), q)
        """,
    "an attribute the class builds itself": """
        def main(x, q):
            cases = [{MODULE: Flagged(1, False)}]
            for test in cases:
                lower(test[MODULE].act, x)
                quantize(test[MODULE], (x,), q)
        """,
    "a part switched to train through the key before the call": """
        def main(x, q):
            cases = [{MODULE: Net().eval()}]
            for case in cases:
                make_train(case[MODULE].bn)
                quantize(case[MODULE], (x,), q)
        """,
    "a part given a dropout through the key before the call": """
        def main(x, q):
            cases = [{MODULE: Leaky()}]
            for case in cases:
                lower(case[MODULE].act, x)
                quantize(case[MODULE], (x,), q)
        """,
    "not rebound to the result: the next input's capture sees what lower gave it": """
        def main(x, q):
            test_comb = [{MODULE: [Leaky()], INPUTS: [(x,), (x, x)]}]
            for comb in test_comb:
                for module in comb[MODULE]:
                    for sample_input in comb[INPUTS]:
                        qdq = quantize(module, sample_input, q)
                        lower(module, sample_input)
        """,
}


@pytest.mark.parametrize("caller", LOUD.values(), ids=LOUD.keys())
def test_rows_reaching_a_train_mode_model_keep_the_report(tmp_path, caller):
    assert _rows(tmp_path, caller) == [CAPTURE_ROW]


def test_a_key_constant_bound_twice_is_not_followed(tmp_path):
    # `MODULE` may name "other" when the rows are read: the Net under it may be the one passed.
    constants = CONSTANTS.replace('OTHER = "other"\n', 'OTHER = "other"\nMODULE = "other"\n')
    caller = QUIET["a train-mode model under another key is not read"]
    assert _rows(tmp_path, caller) == []
    assert _rows(tmp_path / "twice", caller, constants) == [CAPTURE_ROW]
