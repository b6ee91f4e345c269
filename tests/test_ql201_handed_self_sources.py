"""QL201/QL202: a method handing `self` itself to a call, against every source of `self.model`
`__init__` vouches for (issue 14, item 2; stop 72's closure72 read it for `InMode` alone).

`__init__` says the field's mode three ways: it builds and evals it (`self.model = Net();
self.model.eval()`: `model_attrs.Evaled`), it evals its parameter and stores it
(`model.eval(); self.model = model`: `switched_params.Switched`), or it stores the parameter as
it came, in the mode the construction passes (`self.model = model`: `Stored`). Another method
handing `self` to a call (`set_train(self)` with `def set_train(e): e.model.train()`) may switch
the field as surely as one handing `self.model`: the class vouches for nothing then, and a
helper of another module capturing the field is judged as if its callers were unknown
(reported); in the helper's own module the field is unknown (quiet, never "train" on a
guess). A call that only reads (`print(self)`, `isinstance`, `copy.copy`, a project helper
reading `e.model.training`, `super(C, self)`) leaves the class's word, and so does one in
`__init__` before the field is set (`nn.Module.__init__(self)`): the store comes after it.
"""

from __future__ import annotations

import pytest

from tests.conftest import check_file, package_repository, rows_of
from tests.snippets import NET_BN1D

CAPTURE = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def to_q(m, x, q):
    ep = torch.export.export(m, (x,))
    return prepare_pt2e(ep.module(), q)
"""
CAPTURE_ROW = CAPTURE.splitlines().index("    ep = torch.export.export(m, (x,))") + 1

HELPERS = """
import copy

import external


def set_train(e):
    e.model.train()


def set_eval(e):
    e.model.eval()


def only_reads(e):
    print(e.model.training)
    return len(e.model.state_dict())


def keeps(e):
    external.REGISTRY.append(e)
"""

# `__init__` for each source; the construction `main` makes.
INIT = "    def __init__(self{param}):\n        INIT\n{body}"
EVALED = "        self.model = Net()\n        self.model.eval()\n"
SOURCES = {
    "evaled": (INIT.format(param="", body=EVALED), "Exporter()"),
    "switched": (
        INIT.format(param=", model", body="        model.eval()\n        self.model = model\n"),
        "Exporter(Net())",
    ),
    "stored": (INIT.format(param=", model", body="        self.model = model\n"), "Exporter(Net().eval())"),
}

EXPORTER = """

class Exporter(nn.Module):
SOURCE
    def tune(self):
        OTHER

    def quantize(self, q):
        CAPTURE


def main(q):
    e = MAKE
    e.tune()
    return e.quantize(q)
"""
CROSS = "return to_q(self.model, torch.randn(2, 4), q)"
SAME = "ep = torch.export.export(self.model, (torch.randn(2, 4),))\n        return PREPARE(ep.module(), q)"


def _exporter(source, other: str, capture: str, init: str = "pass", make: str | None = None) -> str:
    """`source`: a key of SOURCES, or an `__init__` of one's construction."""
    text, made = SOURCES[source] if isinstance(source, str) else source
    body = EXPORTER.replace("SOURCE", text.replace("INIT", init)).replace("MAKE", make or made)
    return NET_BN1D + HELPERS + body.replace("OTHER", other).replace("CAPTURE", capture)


def _cross(tmp_path, source, other: str, init: str = "pass") -> list[int]:
    text = "from pkg.capture import to_q\n" + _exporter(source, other, CROSS, init)
    root = package_repository(tmp_path / "repo", capture=CAPTURE, exp=text)
    return rows_of(check_file(root / "pkg" / "capture.py", ("QL201",)).diagnostics)


def _same(tmp_path, source: str, other: str, rule: str = "QL201", make: str | None = None) -> list[int]:
    prepare = "prepare_pt2e" if rule == "QL201" else "prepare_qat_pt2e"
    text = _exporter(source, other, SAME.replace("PREPARE", prepare), make=make)
    text = text.replace("import prepare_pt2e\n", "import prepare_pt2e, prepare_qat_pt2e\n", 1)
    root = package_repository(tmp_path / "repo", exp=text)
    return rows_of(check_file(root / "pkg" / "exp.py", (rule,)).diagnostics)


def _same_row(source: str) -> int:
    text = _exporter(source, "pass", SAME)
    return text.splitlines().index("        ep = torch.export.export(self.model, (torch.randn(2, 4),))") + 1


# `__init__` vouches for an eval-mode field (`Evaled`, `Switched`): a helper capturing it in
# another module is quiet, until another method hands `self` to a call that may switch it.
VOUCHING = ["evaled", "switched"]
MAY_CHANGE = {
    "a project helper training the field": "set_train(self)",
    "by keyword": "set_train(e=self)",
    "a helper keeping `self`": "keeps(self)",
    "a call the project does not define": "external.register(self)",
}
READ_ONLY = {
    "print": "print(self)",
    "isinstance": "isinstance(self, Exporter)",
    "copy.copy": "copy.copy(self)",
    "a project helper only reading the field": "only_reads(self)",
    "an old-style super": "super(Exporter, self).__repr__()",
    "nothing": "pass",
}


@pytest.mark.parametrize("source", VOUCHING)
@pytest.mark.parametrize("other", list(MAY_CHANGE.values()), ids=list(MAY_CHANGE))
def test_a_call_handed_self_in_another_method_leaves_the_field_unknown(tmp_path, source, other):
    assert _cross(tmp_path / "cross", source, other) == [CAPTURE_ROW]
    assert _same(tmp_path / "same", source, other) == []


@pytest.mark.parametrize("source", VOUCHING)
@pytest.mark.parametrize("other", list(READ_ONLY.values()), ids=list(READ_ONLY))
def test_a_call_that_only_reads_self_keeps_the_class_vouching(tmp_path, source, other):
    assert _cross(tmp_path, source, other) == []


@pytest.mark.parametrize("source", VOUCHING)
def test_a_qat_capture_of_a_field_a_call_handed_self_may_switch_is_quiet(tmp_path, source):
    """QL202's side: the eval-mode field the class vouched for is no longer known to be so."""
    assert _same(tmp_path / "train", source, "set_train(self)", "QL202") == []
    assert _same(tmp_path / "unknown", source, "external.register(self)", "QL202") == []
    assert _same(tmp_path / "read", source, "only_reads(self)", "QL202") == [_same_row(source)]


# `self.model = model`: the field is what the construction passed, in its mode.
def test_a_stored_field_a_call_handed_self_may_switch_is_not_the_constructions(tmp_path):
    train = "Exporter(Net())"
    assert _same(tmp_path / "evals", "stored", "set_eval(self)", make=train) == []
    assert _same(tmp_path / "unknown", "stored", "external.register(self)", make=train) == []
    assert _same(tmp_path / "qat", "stored", "set_train(self)", "QL202") == []


@pytest.mark.parametrize("other", list(READ_ONLY.values()), ids=list(READ_ONLY))
def test_a_stored_field_beside_readers_is_still_the_constructions(tmp_path, other):
    row = _same_row("stored")
    assert _same(tmp_path / "ptq", "stored", other, make="Exporter(Net())") == [row]
    assert _same(tmp_path / "qat", "stored", other, "QL202") == [row]


# Calls of `__init__` handing `self` on, before and after the field is set.
BEFORE_STORE = {
    "nn.Module's initializer": "nn.Module.__init__(self)",
    "a call keeping `self`": "keeps(self)",
    "a call the project does not define": "external.register(self)",
}


@pytest.mark.parametrize("source", VOUCHING)
@pytest.mark.parametrize("init", list(BEFORE_STORE.values()), ids=list(BEFORE_STORE))
def test_a_call_in_init_before_the_field_is_set_changes_none(tmp_path, source, init):
    assert _cross(tmp_path, source, "pass", init) == []


@pytest.mark.parametrize("source", VOUCHING)
def test_a_call_in_init_after_the_field_is_set_may_change_it(tmp_path, source):
    text, made = SOURCES[source]
    after = text.replace("        INIT\n", "") + "        set_train(self)\n"
    assert _cross(tmp_path, (after, made), "pass") == [CAPTURE_ROW]


def test_a_call_between_the_build_and_its_eval_changes_none(tmp_path):
    """`self.model = Net(); set_train(self); self.model.eval()`: the eval comes last."""
    text, made = SOURCES["evaled"]
    between = text.replace("        INIT\n", "").replace(
        "        self.model.eval()\n", "        set_train(self)\n        self.model.eval()\n"
    )
    assert _cross(tmp_path, (between, made), "pass") == []


# A module class switching itself (`Module.train` reaches every submodule) or a part of the field.
SWITCHING = {
    "`self.train()`": "self.train()",
    "`self.eval()`": "self.eval()",
    "`self.train(flag)`": "self.train(external.FLAG)",
    "a part of the field": "self.model.bn.train()",
    "an item of a part": "self.model.layers[0].train()",
}


@pytest.mark.parametrize("source", VOUCHING)
@pytest.mark.parametrize("other", list(SWITCHING.values()), ids=list(SWITCHING))
def test_another_method_switching_the_module_or_a_part_leaves_the_field_unknown(tmp_path, source, other):
    assert _cross(tmp_path / "cross", source, other) == [CAPTURE_ROW]
    assert _same(tmp_path / "same", source, other, "QL202") == []


@pytest.mark.parametrize("source", VOUCHING)
def test_a_module_switched_in_init_before_the_field_is_set_keeps_it(tmp_path, source):
    assert _cross(tmp_path, source, "pass", "self.train()") == []


@pytest.mark.parametrize("source", VOUCHING)
def test_a_class_of_its_own_train_method_is_no_module_switch(tmp_path, source):
    """`self.train()` runs the class's own `train`, which touches no field here."""
    text, made = SOURCES[source]
    own = (text + "\n    def train(self, mode=True):\n        self.steps = 0\n        return self\n", made)
    assert _cross(tmp_path, own, "self.train()") == []
