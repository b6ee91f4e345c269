"""The two readings of the parts a function body gives a model (`given_parts`): the lax one the
capture rules weigh a capture by (`model_changes.BodyIndex.changes`, built on `changed_roots`)
and the strict one a loop over a model's direct children is read against (`given_names`,
`direct_children`). The strict reading counts everything the lax one does, and besides a plain
value stored, any store that is no assignment (`del`, an unpacking, a loop target), the
methods of torch.nn's containers that add a module, and the code of nested functions.

Then the same through QL201/QL202: a loop setting each direct child's flag after a part was
given in one of the strict reading's ways is not read (the model keeps its train mode: the PTQ
capture is reported), as torch captures a batch norm moved inside a container in train mode;
a model given nothing, or another model given a part, is read.
"""

from __future__ import annotations

import ast

import pytest

from qlint.analysis.flow.given_parts import given_names, given_to
from qlint.rules.model_changes import body_index
from tests.conftest import package_repository
from tests.switch_cases import capture_cases, file_findings, tree_findings
from tests.test_ql201_direct_children import BASES, CAPTURE, HEAD, LOOP


def _readings(body: str) -> tuple[set[str], frozenset[str]]:
    """(names the lax reading gives parts, names the strict one does) in `f`'s body."""
    fn = ast.parse("def f(model, other, parts, m, x, y, h):\n" + body).body[0]
    return {root for root, _ in body_index(fn).changes}, given_names(fn)


# Given a part strictly read only.
STRICT_ONLY = {
    "a-plain-value": "    model.name = 'vit'\n",
    "a-plain-tuple": "    model.shape = (3, 'x')\n",
    "appended-to-a-container": "    model.layers.append(m)\n",
    "extended": "    model.layers.extend([m])\n",
    "inserted": "    model.layers.insert(0, m)\n",
    "updated": "    model.heads.update({'a': m})\n",
    "dunder-setattr": "    model.__setattr__('bn', m)\n",
    "dunder-setitem": "    model.layers.__setitem__(0, m)\n",
    "a-nested-function": "    def grow():\n        model.bn = m\n",
    "a-lambda": "    grow = lambda: setattr(model, 'bn', m)\n",
    "a-nested-class": "    class Hook:\n        def run(self):\n            model.add_module('bn', m)\n",
    "deleted": "    del model.bn\n",
    "unpacked": "    model.a, model.b = x, y\n",
    "a-loop-target": "    for model.bn in parts:\n        pass\n",
    "a-with-target": "    with x as model.bn:\n        pass\n",
    "a-list-item-replaced": "    mods = [x, y]\n    mods[0] = m\n",
}

# Given a part in both readings.
BOTH = {
    "stored": "    model.bn = m\n",
    "stored-as-an-item": "    model[0] = m\n",
    "stored-deeper": "    model.body.layers[0] = m\n",
    "augmented": "    model.bn += m\n",
    "annotated": "    model.bn: object = m\n",
    "setattr": "    setattr(model, 'bn', m)\n",
    "through-getattr": "    getattr(model, 'body').bn = m\n",
    "added": "    model.add_module('bn', m)\n",
    "a-submodule-set": "    model.set_submodule('body.bn', m)\n",
    "a-hook": "    model.register_forward_hook(h)\n",
    "applied": "    model.apply(h)\n",
}

# Given nothing in either.
NEITHER = {
    "read": "    w = model.bn.weight\n    y = model.layers[0](x)\n",
    "switched": "    model.eval()\n    model.bn.train(False)\n",
    "a-tensor-changed-in-place": "    model.conv.weight.requires_grad_(False)\n",
    "another-model-given-one": "    other.bn = m\n    other.layers.append(m)\n",
    "a-part-popped": "    model.layers.pop()\n",
    "rebound": "    model = m\n",
}


@pytest.mark.parametrize("name", sorted(STRICT_ONLY))
def test_the_strict_reading_counts_what_the_lax_one_does_not(name):
    lax, strict = _readings(STRICT_ONLY[name])
    root = "mods" if name == "a-list-item-replaced" else "model"
    assert root not in lax
    assert root in strict


@pytest.mark.parametrize("name", sorted(BOTH))
def test_both_readings_count_a_part_given(name):
    lax, strict = _readings(BOTH[name])
    assert lax == {"model"}
    assert strict == {"model"}


@pytest.mark.parametrize("name", sorted(NEITHER))
def test_neither_reading_counts_what_gives_no_part(name):
    lax, strict = _readings(NEITHER[name])
    assert "model" not in lax
    assert "model" not in strict


def test_the_strict_reading_is_kept_on_the_body():
    fn = ast.parse("def f(model, m):\n    model.bn = m\n").body[0]
    assert given_names(fn) is given_names(fn)


@pytest.mark.parametrize(
    ("over", "given"),
    [
        ("model", True),
        ("model.body", True),
        ("model.layers[0]", True),
        ("other", False),
        ("other.body", False),
        # Reached through a call: whatever holds it may be given a part anywhere.
        ("make(other)", True),
        ("getattr(other, 'body')", True),
    ],
)
def test_the_model_a_loop_walks_is_named_by_its_plain_path(over, given):
    fn = ast.parse("def f(model, other, m):\n    model.bn = m\n").body[0]
    assert given_to(fn, ast.parse(over, mode="eval").body) is given


# (the model's construction, what runs before the capture), as in test_ql201_direct_children.
EVALED = {
    "children-flag-a-tensor-of-a-child-changed": ("Net()", "model.conv.weight.requires_grad_(False)\n" + LOOP),
    "children-flag-another-model-given-a-part": (
        "Net()",
        "other = Net()\nother.bn = nn.Sequential(nn.BatchNorm2d(3))\n" + LOOP,
    ),
}
NOT_READ = {
    "children-flag-given-a-part-in-a-nested-function": (
        "Net()",
        "def grow():\n    model.bn = nn.Sequential(nn.BatchNorm2d(3))\ngrow()\n" + LOOP,
    ),
    "children-flag-given-a-part-by-dunder-setattr": (
        "Net()",
        "model.__setattr__('bn', nn.Sequential(nn.BatchNorm2d(3)))\n" + LOOP,
    ),
}
MODULES = capture_cases(HEAD, CAPTURE, ((EVALED, True), (NOT_READ, False)), "build")


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    sources = {n: s for n, (s, _) in MODULES.items()}
    return package_repository(tmp_path_factory.mktemp("given_parts") / "repo", bases=BASES, **sources)


@pytest.fixture(scope="module")
def tree_run(repo) -> dict[str, list[tuple[str, int]]]:
    return tree_findings(repo, MODULES)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_loop_over_the_children_is_read_unless_the_model_was_given_a_part(repo, tree_run, name):
    expected = MODULES[name][1]
    assert sorted(tree_run[name]) == expected
    assert file_findings(repo, name) == expected
