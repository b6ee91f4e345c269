"""QL201: a caller that puts its own parameter in the bundle it hands to a helper
(`def export(model): quantize_run(Artifact(data={"forward": model}))`), followed up to its
own callers, as a caller handing on the parameter whole is (issue 14, item 7).

The session of a pipeline builds the artifact its stages read from the model its caller
gave it: what those callers pass decides. Quiet when every one of them passes an eval-mode
model (or one with nothing mode-dependent); loud when one passes a train-mode model with
batch norm, when the function that builds the bundle has no caller (a library's entry
point: its callers are unknown), when it switches or replaces the model before building the
bundle, and when one of its own callers cannot be classified.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint
from tests.test_ql201_bundle_callers import HEAD, build, capture_row, helper
from tests.test_ql201_project_callers import BN_CALLER, EVAL_CALLER, MODE_FREE_CALLER, _check, _repo

KINDS = ("loop", "key", "field")


def ql201(src: str) -> list[int]:
    return [d.range.start.row for d in lint(HEAD + textwrap.dedent(src), select=("QL201",))]


def export(kind: str, before: str = "") -> str:
    """`export(model, x, q)`: builds the bundle from its parameter and hands it to the helper."""
    return f"\n\ndef export(model, x, q):\n{before}    quantize_run({build(kind, 'model')}, x, q)\n"


@pytest.mark.parametrize("kind", KINDS)
def test_callers_of_the_function_building_the_bundle_vouch_for_the_helper(kind):
    callers = "\n\ndef main(x, q):\n    export(Net().eval(), x, q)\n    export(LinearOnly(), x, q)\n"
    assert ql201(helper(kind) + export(kind) + callers) == []
    # Switched to eval after construction, before the call: what reaches `export` counts.
    switched = "\n\ndef main(x, q):\n    m = Net()\n    m.eval()\n    export(m, x, q)\n"
    assert ql201(helper(kind) + export(kind) + switched) == []


@pytest.mark.parametrize("kind", KINDS)
def test_a_risky_or_unknown_caller_of_that_function_keeps_the_finding(kind):
    row = capture_row(kind)
    bn = "\n\ndef main(x, q):\n    export(Net().eval(), x, q)\n    export(Net(), x, q)\n"
    assert ql201(helper(kind) + export(kind) + bn) == [row]
    loaded = "\n\ndef main(x, q, path):\n    export(torch.load(path), x, q)\n"
    assert ql201(helper(kind) + export(kind) + loaded) == [row]
    handed = "\n\ndef main(m, x, q):\n    export(m, x, q)\n"  # its own callers unknown: nobody calls it
    assert ql201(helper(kind) + export(kind) + handed) == [row]
    # Nobody calls `export`: an entry point for callers qlint cannot see.
    assert ql201(helper(kind) + export(kind)) == [row]
    # Used otherwise than called: a callback.
    hooks = "\n\ndef main(x, q):\n    export(Net().eval(), x, q)\n\n\nHOOKS = [export]\n"
    assert ql201(helper(kind) + export(kind) + hooks) == [row]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "before",
    [
        "    model.train()\n",
        "    model = Net()\n",
        "    model = load(model)\n",
        "    model.bn = nn.BatchNorm1d(4)\n",
        "    model.add_module('bn', nn.BatchNorm1d(4))\n",
        "    register(model)\n",
    ],
)
def test_a_model_switched_replaced_or_given_parts_before_the_bundle_is_built_keeps_the_finding(kind, before):
    callers = "\n\ndef main(x, q):\n    export(LinearOnly().eval(), x, q)\n"
    assert ql201(helper(kind) + export(kind, before) + callers) == [capture_row(kind)]
    # Only looked at on the way: its callers still decide.
    assert ql201(helper(kind) + export(kind, "    print(model)\n") + callers) == []


def test_a_model_switched_after_the_bundle_is_built_keeps_the_finding():
    late = (
        "\n\ndef export(model, x, q):\n    a = PipelineArtifact(data={'forward': model})\n    model.train()\n"
        "    quantize_run(a, x, q)\n\n\ndef main(x, q):\n    export(Net().eval(), x, q)\n"
    )
    assert ql201(helper("loop") + late) == [capture_row("loop")]


# Across modules: the helper in `pkg/utils/export_utils.py`, `scripts/b.py` builds the bundle
# from its parameter, `scripts/c.py` and `d.py` call `b.run`.
ARTIFACT = """
class Artifact:
    def __init__(self, data):
        self.data = data


def quantize_all(artifact, quantizer, x):
    for name, model in artifact.data.items():
        prepare_pt2e(export(model, (x,)).module(), quantizer)
"""
RUN = (
    "from pkg.utils.export_utils import Artifact, quantize_all\n"
    "\ndef run(model, quantizer, x):\n    return quantize_all(Artifact({'forward': model}), quantizer, x)\n"
)


def _calling_run(caller: str) -> str:
    return caller.replace(
        "from pkg.utils.export_utils import quantize_module\n", "from scripts.b import run\n"
    ).replace("quantize_module(", "run(")


def _root(tmp_path, **scripts: str):
    root = _repo(tmp_path, **scripts)
    (root / "scripts" / "__init__.py").touch()
    helper_path = root / "pkg" / "utils" / "export_utils.py"
    helper_path.write_text(helper_path.read_text() + ARTIFACT)
    return root


def _rows(root) -> list[int]:
    text = (root / "pkg" / "utils" / "export_utils.py").read_text()
    capture = text.splitlines().index("        prepare_pt2e(export(model, (x,)).module(), quantizer)") + 1
    # The template's own helper (`quantize_module`, called by nobody) stays reported.
    return [d.range.start.row for d in _check(root).diagnostics if d.range.start.row == capture]


def test_callers_in_other_modules_of_a_caller_building_the_bundle(tmp_path):
    quiet = _root(tmp_path / "q", b=RUN, c=_calling_run(EVAL_CALLER), d=_calling_run(MODE_FREE_CALLER))
    assert _rows(quiet) == []
    bound = RUN.replace(
        "return quantize_all(Artifact({'forward': model})",
        "a = Artifact({'forward': model})\n    return quantize_all(a",
    )
    assert _rows(_root(tmp_path / "b", b=bound, c=_calling_run(EVAL_CALLER))) == []
    risky = _root(tmp_path / "r", b=RUN, c=_calling_run(EVAL_CALLER), d=_calling_run(BN_CALLER))
    assert len(_rows(risky)) == 1
    # `run` called by nobody: its callers are unknown.
    assert len(_rows(_root(tmp_path / "n", b=RUN))) == 1
    # `run` gives the model a batch norm before building the bundle.
    parts = RUN.replace("    return", "    model.bn = nn.BatchNorm2d(3)\n    return")
    assert len(_rows(_root(tmp_path / "p", b=parts, c=_calling_run(MODE_FREE_CALLER)))) == 1
    # `run` also called in its own module with a model it loads.
    local = RUN + "\n\ndef main(quantizer, x):\n    run(load_model(), quantizer, x)\n"
    assert len(_rows(_root(tmp_path / "l", b=local, c=_calling_run(EVAL_CALLER)))) == 1
