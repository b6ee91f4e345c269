"""QL201: a class's `self.model` across its methods, when a method hands `self` itself to a
call, or leaves another name on the stored model (issue 14, item 2).

The exporter of `test_ql201_later_stored_attributes` evals the model it is given before
storing it in `self.model`, and `export_q` hands `self.model` to a helper that captures it: the
class vouches for the helper's caller (every store is of an evaled model, nothing switches it
since). A method handing `self` to a call reaches the field too (`set_train(self)` with
`def set_train(e): e.model.train()`), and so does a name bound to the model before its switch
(`keep = model`, then `keep.train()` after the store): the class vouches for nothing then, and
the helper is judged as if its callers were unknown. A call that only reads what it is handed
(`print(self)`, `copy.copy(self)`, a project helper reading `e.model.training`) leaves it as
it was. The method doing the capture itself reads the helper it hands `self` to: its switch of
`e.model` is a switch of `self.model` right there.
"""

from __future__ import annotations

import pytest

from tests.conftest import check_file, package_repository, rows_of
from tests.snippets import NET_BN1D
from tests.test_ql201_later_stored_attributes import CAPTURE_ROW, _cross, _same
from tests.test_ql201_later_stored_attributes import EXPORTER as STORING

HELPERS = """\
import copy

import external


def set_train(e):
    e.model.train()


def set_eval(e):
    e.model.eval()


def train_if(e, flag):
    if flag:
        e.model.train()


def only_reads(e):
    print(e.model.training)
    if e.model.training:
        return e.name
    return len(e.model.state_dict())


def trains_part(e):
    e.model.bn.train()


def names_it(e):
    e.name = "exp"


def keeps(e):
    external.REGISTRY.append(e)


"""

# The exporter with a field it names itself and a method `other` whose body is OTHER.
EXPORTER = STORING.replace("        self.data = data\n", '        self.data = data\n        self.name = ""\n').replace(
    "    def export_q(self):\n", "    def other(self):\n        OTHER\n\n    def export_q(self):\n"
)


def _exporter(mode: str, other: str) -> str:
    return HELPERS + EXPORTER.replace("MODE", mode).replace("OTHER", other)


# Calls in another method that may change `self.model`: the class vouches for nothing.
MAY_CHANGE = {
    "a project helper switching the field": "set_train(self)",
    "by keyword": "set_train(e=self)",
    "one switching it the other way": "set_eval(self)",
    "one switching it in a branch": "train_if(self, True)",
    "one switching a part of it": "trains_part(self)",
    "one keeping `self` where anything may reach it": "keeps(self)",
    "a call the project does not define": "external.register(self)",
    "a method of another object": "external.hooks.append(self)",
    "a starred list": "external.run(*[self])",
    "`getattr` of the field": 'getattr(self, "model").train()',
    "`setattr` of the field": 'setattr(self, "model", None)',
    "a partial": "external.partial(set_eval, self)()",
}

# Calls in another method that cannot change it: the class still vouches.
READ_ONLY = {
    "print": "print(self)",
    "isinstance": "isinstance(self, Exporter)",
    "copy.copy": "copy.copy(self)",
    "copy.deepcopy": "copy.deepcopy(self)",
    "a project helper only reading the field": "only_reads(self)",
    "one writing another field": "names_it(self)",
    "an old-style super": "super(Exporter, self).__init__(None, None)",
    "`getattr` of another field": 'getattr(self, "name", None)',
    "`hasattr`": 'hasattr(self, "model")',
    "a bound method handed on, whose body reads only": "external.register(self.export_q)",
}


@pytest.mark.parametrize("other", list(MAY_CHANGE.values()), ids=list(MAY_CHANGE))
def test_a_call_handed_self_may_change_the_field(tmp_path, other):
    """The caller in another module vouches for nothing then; one in the helper's own module
    passing a field it cannot read stays quiet (`capture_common._mode_left_open`), and so does
    a class that stores the model in train mode: no longer known to hold it so."""
    assert _cross(tmp_path / "cross", _exporter("eval", other)) == [CAPTURE_ROW]
    assert _same(tmp_path / "same", _exporter("eval", other)) == []
    assert _same(tmp_path / "train", _exporter("train", other)) == []


@pytest.mark.parametrize("other", list(READ_ONLY.values()), ids=list(READ_ONLY))
def test_a_call_that_only_reads_self_leaves_it(tmp_path, other):
    assert _cross(tmp_path / "cross", _exporter("eval", other)) == []
    assert _same(tmp_path / "same", _exporter("eval", other)) == []


@pytest.mark.parametrize("other", list(READ_ONLY.values()), ids=list(READ_ONLY))
def test_a_train_store_is_still_reported_beside_readers(tmp_path, other):
    """The class's own word stays: stored in train mode, and read only elsewhere."""
    assert _cross(tmp_path / "cross", _exporter("train", other)) == [CAPTURE_ROW]
    assert _same(tmp_path / "same", _exporter("train", other)) == [CAPTURE_ROW]


def test_a_helper_shadowing_a_reader_is_no_reader(tmp_path):
    shadowed = _exporter("eval", "print(self)").replace("import copy\n", "import copy\n\nprint = set_train\n", 1)
    assert _cross(tmp_path, shadowed) == [CAPTURE_ROW]


# A name bound to the stored model before its switch.
ALIASED = {
    "a plain alias": ("keep = model", "keep.train()"),
    "an alias of an alias": ("keep = model\n        again = keep", "again.train()"),
    "a part": ("bn = model.bn", "bn.train()"),
    "a container": ("models = [model]", "models[0].train()"),
    "a cast": ("keep = model.half()", "keep.train()"),
    "a loop over its modules": ("for sub in model.modules():\n            pass", "sub.train()"),
    "a walrus": ("print(keep := model)", "keep.train()"),
}


def _aliased(before: str, after: str, mode: str = "eval") -> str:
    text = EXPORTER.replace("MODE", mode).replace("        OTHER\n", "        pass\n")
    text = text.replace("        model = deepcopy(model)\n", f"        model = deepcopy(model)\n        {before}\n")
    return text.replace("        self.im = im\n", f"        self.im = im\n        {after}\n")


@pytest.mark.parametrize(("before", "after"), list(ALIASED.values()), ids=list(ALIASED))
def test_another_name_on_the_stored_model_may_switch_it(tmp_path, before, after):
    assert _cross(tmp_path / "cross", _aliased(before, after)) == [CAPTURE_ROW]
    assert _same(tmp_path / "train", _aliased(before, after.replace("train", "eval"), "train")) == []


def test_another_name_in_a_nested_function(tmp_path):
    text = _aliased("keep = model", "pass").replace("        pass\n", "        pass\n", 1)
    text = text.replace("        self.im = im\n", "        self.im = im\n        self.hook = lambda: keep.train()\n")
    assert _cross(tmp_path, text) == [CAPTURE_ROW]


LOOK_ALIKES = {
    "an alias read before the store only": ("keep = model\n        print(keep)", "pass"),
    "an output of the model": ("y = model(im)", "print(y)"),
    "what a helper made of it": ("n = len(list(model.parameters()))", "print(n)"),
    "an alias rebound since": ("keep = model\n        keep = None", "print(keep)"),
}


@pytest.mark.parametrize(("before", "after"), list(LOOK_ALIKES.values()), ids=list(LOOK_ALIKES))
def test_names_that_are_no_alias_after_the_store(tmp_path, before, after):
    assert _cross(tmp_path / "cross", _aliased(before, after)) == []
    assert _same(tmp_path / "train", _aliased(before, after, "train")) == [CAPTURE_ROW]


def test_a_name_bound_before_a_rebinding_of_the_local(tmp_path):
    """`keep` holds the caller's model; the local is a copy of it since: not the stored one."""
    text = _aliased("pass", "keep.train()").replace(
        "        model = deepcopy(model)\n", "        keep = model\n        model = deepcopy(model)\n"
    )
    assert _cross(tmp_path, text) == []


# The method capturing `self.model` hands `self` to a helper first.
CAPTURING = (
    NET_BN1D
    + """

class Exporter:
    def __init__(self, model):
        self.model = model

    def run(self, q, flag):
        STEP
        ep = torch.export.export(self.model, (torch.randn(2, 4),))
        return prepare_pt2e(ep.module(), q)


def main(q):
    return Exporter(Net().eval()).run(q, False)
"""
)
CAPTURING_ROW = CAPTURING.splitlines().index("        ep = torch.export.export(self.model, (torch.randn(2, 4),))") + 1


def _capturing(tmp_path, step: str, helpers: str = HELPERS):
    root = package_repository(tmp_path / "repo", exp=helpers + CAPTURING.replace("STEP", step))
    return check_file(root / "pkg" / "exp.py", ("QL201",)).diagnostics


@pytest.mark.parametrize(
    "step",
    ["set_train(self)", "set_train(e=self)", "train_if(self, flag)"],
    ids=["helper", "keyword", "in-a-branch-left-open"],
)
def test_a_helper_handed_self_switches_the_field_here(tmp_path, step):
    found = _capturing(tmp_path, step)
    assert rows_of(found) == [HELPERS.count("\n") + CAPTURING_ROW]


def test_the_message_names_the_helpers_switch(tmp_path):
    (found,) = _capturing(tmp_path, "set_train(self)")
    assert "after `e.model.train()` at line 7" in found.message


def test_a_helper_of_another_module_is_named_by_the_call(tmp_path):
    text = "from pkg.helpers import set_train\n" + CAPTURING.replace("STEP", "set_train(self)")
    root = package_repository(tmp_path / "repo", helpers=HELPERS, exp=text)
    (found,) = check_file(root / "pkg" / "exp.py", ("QL201",)).diagnostics
    assert found.range.start.row == CAPTURING_ROW + 1
    assert f"after `set_train(self)` at line {CAPTURING_ROW}" in found.message


@pytest.mark.parametrize(
    "step",
    [
        "set_eval(self)",
        "only_reads(self)",
        "train_if(self, False)",
        "print(self)",
        "set_train(self)\n        set_eval(self)",
    ],
    ids=["evals", "reads", "branch-ruled-out", "print", "trains-then-evals"],
)
def test_a_helper_handed_self_that_leaves_it_in_eval_mode(tmp_path, step):
    assert _capturing(tmp_path, step) == []


def test_an_unknown_call_handed_self_here_is_read_as_before(tmp_path):
    """What a call the project does not define does is not known: the walk reads it as it
    reads one handed `self.model`, and the field keeps the mode its class gives it."""
    assert _capturing(tmp_path, "external.register(self)") == []


def test_self_handed_outside_a_class_is_no_field(tmp_path):
    text = HELPERS + CAPTURING.replace("STEP", "pass")
    text += "\n\ndef loose(self, q):\n    set_train(self)\n    ep = torch.export.export(self.model, (1,))\n"
    text += "    return prepare_pt2e(ep.module(), q)\n"
    root = package_repository(tmp_path / "repo", exp=text)
    assert rows_of(check_file(root / "pkg" / "exp.py", ("QL201",)).diagnostics) == []
