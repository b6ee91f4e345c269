"""QL201: a helper that captures a field or an item of a bundle it is handed
(`artifact.model`, `artifact.data["forward"]`, `for name, m in artifact.data.items()`),
vouched for by its callers (issue 14, item 7).

Quiet when every caller builds the bundle in the call (or binds it once to a name that only
that call reads) from a dataclass or a class whose `__init__` stores the value unchanged, and
what the helper reads there is an eval-mode model (or one with nothing mode-dependent). Loud
when one caller's bundle holds a train-mode model with batch norm, when the bundle or what it
holds changes between the construction and the call, when the class transforms or changes
the value, when the helper reads another field than the one the caller filled, and when one
caller cannot be classified.
"""

from __future__ import annotations

import textwrap

import pytest

from qlint.engine import check_source
from tests.conftest import lint, package_repository, settings_for

HEAD = """\
from dataclasses import dataclass, field

import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(x)


class LinearOnly(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


@dataclass
class PipelineArtifact:
    data: dict = field(default_factory=dict)
    model: nn.Module = None


class Artifact:
    def __init__(self, data=None, model=None):
        self.data = data
        self.model = model
"""
# Each helper, and the argument its callers fill for what it reads (`{}`: the model(s)).
HELPERS = {
    "loop": ("for name, model in artifact.data.items():\n        CAPTURE(model)\n", "data={{'forward': {}}}"),
    "key": ("CAPTURE(artifact.data['forward'])\n", "data={{'forward': {}}}"),
    "field": ("CAPTURE(artifact.model)\n", "model={}"),
    "values": ("for m in artifact.data.values():\n        CAPTURE(m)\n", "data={{'a': {}, 'b': LinearOnly()}}"),
}
CAPTURE = "prepare_pt2e(torch.export.export({}, (x,)).module(), q)"


def helper(kind: str) -> str:
    body = HELPERS[kind][0]
    head, _, rest = body.partition("CAPTURE(")
    inner, _, tail = rest.partition(")\n")
    return f"\n\ndef quantize_run(artifact, x, q):\n    {head}{CAPTURE.format(inner)}\n{tail}"


def capture_row(kind: str) -> int:
    return HEAD.count("\n") + 3 + HELPERS[kind][0].count("\n")


def build(kind: str, model: str, cls: str = "PipelineArtifact") -> str:
    return f"{cls}({HELPERS[kind][1].format(model)})"


def main(*lines: str, params: str = "x, q") -> str:
    """A caller `main` whose body is `lines`."""
    return f"\n\ndef main({params}):\n" + "".join(f"    {line}\n" for line in lines)


def ql201(src: str, head: str = HEAD) -> list[int]:
    return [d.range.start.row for d in lint(head + textwrap.dedent(src), select=("QL201",))]


@pytest.mark.parametrize("kind", sorted(HELPERS))
@pytest.mark.parametrize("cls", ["PipelineArtifact", "Artifact"])
def test_bundles_built_in_the_call_with_eval_models_vouch_for_the_helper(kind, cls):
    caller = f"\n\ndef main(x, q):\n    quantize_run({build(kind, 'Net().eval()', cls)}, x, q)\n"
    assert ql201(helper(kind) + caller) == []
    # Without a caller the helper is reported: the vouching is what silences it.
    assert ql201(helper(kind)) == [capture_row(kind)]


@pytest.mark.parametrize("kind", sorted(HELPERS))
def test_a_bundle_bound_once_for_the_call_and_models_switched_before_it(kind):
    bound = f"\n\ndef main(x, q):\n    a = {build(kind, 'Net().eval()')}\n    quantize_run(a, x, q)\n"
    assert ql201(helper(kind) + bound) == []
    # The model's mode when the bundle reaches the helper is what counts.
    switched = main("m = Net()", f"a = {build(kind, 'm')}", "m.eval()", "quantize_run(a, x, q)")
    assert ql201(helper(kind) + switched) == []
    nothing_dependent = f"\n\ndef main(x, q):\n    quantize_run({build(kind, 'LinearOnly()')}, x, q)\n"
    assert ql201(helper(kind) + nothing_dependent) == []
    module_level = f"\n\na = {build(kind, 'Net().eval()')}\nquantize_run(a, X, Q)\n"
    assert ql201(helper(kind) + module_level) == []


@pytest.mark.parametrize("kind", sorted(HELPERS))
def test_a_train_mode_model_with_batch_norm_in_one_callers_bundle_is_the_finding(kind):
    src = helper(kind) + (
        f"\n\ndef main(x, q):\n    quantize_run({build(kind, 'Net().eval()')}, x, q)\n"
        f"    quantize_run({build(kind, 'Net()', 'Artifact')}, x, q)\n"
    )
    assert ql201(src) == [capture_row(kind)]
    later = main("m = Net().eval()", f"a = {build(kind, 'm')}", "m.train()", "quantize_run(a, x, q)")
    assert ql201(helper(kind) + later) == [capture_row(kind)]


@pytest.mark.parametrize("kind", sorted(HELPERS))
@pytest.mark.parametrize(
    "change",
    [
        "a.data['extra'] = Net()",
        "a.data.update(extra=Net())",
        "a.data = {'forward': Net()}",
        "a.model = Net()",
        "register(a)",
        "print(a.model)",
        "a = PipelineArtifact(model=Net())",
    ],
)
def test_a_bundle_changed_or_read_between_construction_and_call_keeps_the_finding(kind, change):
    src = f"\n\ndef main(x, q):\n    a = {build(kind, 'Net().eval()')}\n    {change}\n    quantize_run(a, x, q)\n"
    assert ql201(helper(kind) + src) == [capture_row(kind)]


@pytest.mark.parametrize("kind", sorted(HELPERS))
@pytest.mark.parametrize(
    "init",
    [
        "        self.data = {k: v.train() for k, v in data.items()}\n        self.model = model.train()\n",
        "        self.data = data\n        self.model = model\n        model.train()\n        for m in data.values():\n"
        "            m.train()\n        self.data['extra'] = Net()\n",
        "        self.data = load(data)\n        self.model = wrap(model)\n",
    ],
)
def test_a_class_that_transforms_the_value_in_init_keeps_the_finding(kind, init):
    head = HEAD.replace("        self.data = data\n        self.model = model\n", init)
    caller = f"\n\ndef main(x, q):\n    quantize_run({build(kind, 'Net().eval()', 'Artifact')}, x, q)\n"
    assert ql201(helper(kind) + caller, head) == [capture_row(kind) + head.count("\n") - HEAD.count("\n")]


@pytest.mark.parametrize("kind", sorted(HELPERS))
@pytest.mark.parametrize(
    ("method", "fields"),
    [
        ("    def add(self, name, m):\n        self.data[name] = m\n", {"data"}),
        ("    def add(self, m):\n        self.data.update(extra=m)\n", {"data"}),
        ("    def add(self, m):\n        models = self.data\n        models['extra'] = m\n", {"data"}),
        ("    def reset(self):\n        self.model = Net()\n", {"model"}),
        ("    def fit(self):\n        self.model.train()\n", {"model"}),
        ("    def fit(self):\n        train(self.model, self.data)\n", {"data", "model"}),
        ("    def fit(self):\n        train(self)\n", {"data", "model"}),
        ("    def show(self):\n        print(len(self.data), self.model)\n        return self.data.items()\n", set()),
        ("    def __repr__(self):\n        return super(type(self), self).__repr__()\n", set()),
    ],
)
@pytest.mark.parametrize("cls", ["PipelineArtifact", "Artifact"])
def test_a_class_whose_methods_may_change_the_field_read_keeps_the_finding(kind, method, fields, cls):
    anchor = "    model: nn.Module = None\n" if cls == "PipelineArtifact" else "        self.model = model\n"
    head = HEAD.replace(anchor, anchor + "\n" + method, 1)
    caller = f"\n\ndef main(x, q):\n    quantize_run({build(kind, 'Net().eval()', cls)}, x, q)\n"
    read = "model" if kind == "field" else "data"
    row = capture_row(kind) + head.count("\n") - HEAD.count("\n")
    if cls == "Artifact" and "print" in method:
        fields = {"data", "model"}  # `attribute_sources` does not follow any attribute a method hands to a call
    assert ql201(helper(kind) + caller, head) == ([row] if read in fields else [])


def test_a_helper_reading_another_field_than_the_caller_filled_keeps_the_finding():
    caller = "\n\ndef main(x, q):\n    quantize_run(PipelineArtifact(data={'forward': Net().eval()}), x, q)\n"
    assert ql201(helper("field") + caller) == [capture_row("field")]
    caller = "\n\ndef main(x, q):\n    quantize_run(Artifact(model=Net().eval()), x, q)\n"
    assert ql201(helper("key") + caller) == [capture_row("key")]
    # A class that stores nothing it is given: what it holds is its own.
    head = HEAD + "\n\nclass Loaded:\n    def __init__(self, path):\n        self.model = torch.load(path)\n"
    caller = "\n\ndef main(x, q):\n    quantize_run(Loaded(Net().eval()), x, q)\n"
    assert ql201(helper("field") + caller, head) == [capture_row("field") + head.count("\n") - HEAD.count("\n")]


@pytest.mark.parametrize("kind", sorted(HELPERS))
@pytest.mark.parametrize(
    "caller",
    [
        "def main(x, q, artifact):\n    quantize_run(artifact, x, q)\n",
        "def main(x, q):\n    quantize_run(make_artifact(), x, q)\n",
        main("d = {'forward': Net().eval()}", "quantize_run(PipelineArtifact(data=d, model=M), x, q)"),
        main("quantize_run(PipelineArtifact(data={'f': Net().eval(), **extra}, model=M), x, q)", params="x, q, extra"),
        main(
            "quantize_run(PipelineArtifact({'f': Net().eval()}, Net().eval()), x, q)",
            "run(quantize_run)",
            params="x, q, run",
        ),
    ],
)
def test_an_unclassifiable_caller_keeps_the_finding(kind, caller):
    ok = main("quantize_run(PipelineArtifact(data={'forward': Net().eval()}, model=Net().eval()), x, q)")
    ok = ok.replace("def main(", "def first(")
    assert ql201(helper(kind) + ok) == []
    assert ql201(helper(kind) + ok + "\n\n" + caller) == [capture_row(kind)]


def test_nested_bundles_and_a_list_field():
    head = HEAD + "\n\n@dataclass\nclass Outer:\n    inner: PipelineArtifact\n"
    helper_ = "\n\ndef quantize_run(outer, x, q):\n    for m in outer.inner.data:\n"
    helper_ += "        " + CAPTURE.format("m") + "\n"
    row = head.count("\n") + 5
    good = "\n\ndef main(x, q):\n    quantize_run(Outer(PipelineArtifact(data=[Net().eval(), LinearOnly()])), x, q)\n"
    assert ql201(helper_ + good, head) == []
    bad = "\n\ndef main(x, q):\n    quantize_run(Outer(PipelineArtifact(data=[Net().eval(), Net()])), x, q)\n"
    assert ql201(helper_ + bad, head) == [row]
    nested_literal = "\n\ndef main(x, q):\n    quantize_run(Outer(PipelineArtifact(data=[(Net().eval(),)])), x, q)\n"
    assert ql201(helper_ + nested_literal, head) == [row]  # a literal inside the field: not followed


def test_the_key_of_a_pair_is_no_model_the_caller_wrote():
    # `for model, name in artifact.data.items()` captures the key: not what the caller vouches for.
    swapped = helper("loop").replace("for name, model in", "for model, name in")
    caller = "\n\ndef main(x, q):\n    quantize_run(PipelineArtifact(data={'forward': Net().eval()}), x, q)\n"
    assert ql201(swapped + caller) == [capture_row("loop")]


def test_callers_in_other_modules_of_the_project(tmp_path):
    root = package_repository(tmp_path / "repo")
    path = root / "pkg" / "helpers.py"
    path.write_text(HEAD + helper("loop"))
    caller = "from pkg.helpers import Artifact, LinearOnly, Net, PipelineArtifact, quantize_run\n\n\n"

    def rows(body: str) -> list[int]:
        (root / "pkg" / "script.py").write_text(caller + textwrap.dedent(body))
        result = check_source(path.read_text(), str(path), settings_for(("QL201",)))
        assert not result.errors, result.errors
        return [d.range.start.row for d in result.diagnostics]

    assert rows("def main(x, q):\n    quantize_run(PipelineArtifact(data={'f': Net().eval()}), x, q)\n") == []
    assert rows("def main(x, q):\n    a = Artifact({'f': LinearOnly()})\n    quantize_run(a, x, q)\n") == []
    train_mode = "def main(x, q):\n    quantize_run(PipelineArtifact(data={'f': Net()}), x, q)\n"
    assert rows(train_mode) == [capture_row("loop")]
    assert rows("def main(x, q, a):\n    quantize_run(a, x, q)\n") == [capture_row("loop")]
    bound = main("a = Artifact({'f': Net().eval()})", "a.data['g'] = Net()", "quantize_run(a, x, q)").lstrip()
    assert rows(bound) == [capture_row("loop")]


@pytest.mark.parametrize("kind", sorted(HELPERS))
def test_a_dataclass_with_post_init_keeps_the_finding(kind):
    post_init = "    model: nn.Module = None\n\n    def __post_init__(self):\n        self.data = dict(self.data)\n"
    head = HEAD.replace("    model: nn.Module = None\n", post_init, 1)
    caller = main(f"quantize_run({build(kind, 'Net().eval()')}, x, q)")
    assert ql201(helper(kind) + caller, head) == [capture_row(kind) + head.count("\n") - HEAD.count("\n")]


@pytest.mark.parametrize("kind", sorted(HELPERS))
def test_a_bundle_handed_back_by_another_call_keeps_the_finding(kind):
    # `same(a)` returns the bundle the caller built, after the caller changed what it holds.
    same = "\n\ndef same(artifact):\n    return artifact\n"
    changed = main(f"a = {build(kind, 'Net().eval()')}", "a.data['x'] = a.model = Net()", "quantize_run(same(a), x, q)")
    assert ql201(helper(kind) + same + changed) == [capture_row(kind)]
