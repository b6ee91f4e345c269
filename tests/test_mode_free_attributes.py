"""QL201/QL202: a model kept in `self.<attr>` is judged mode-free as a local construction is.

`self.model = Lin()` in `__init__`, captured in another method, is quiet when `Lin` resolves in
full with nothing whose behaviour depends on the mode, and nothing else in the module can put
another model there or give it parts. A mode-dependent class, an unknown one, a second
assignment, parts added (`self.model.bn = ...`, `add_module`, `setattr`), a hand-over to a
helper, an alias, a write from outside the class, or a stored parameter whose callers are not
seen keeps the report. A part the class builds and gives it in a method (`self.model.bn =
nn.BatchNorm1d(4)`) leaves a model built there in train mode and is judged with it
(`Built.given`); any other part leaves the attribute's mode unknown, and the capture quiet,
before any content is weighed (`model_attrs`).
"""

from __future__ import annotations

from tests.test_model_sources import check

LIN = """
class Lin(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


class BN(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)


"""

BUILDER = (
    LIN
    + """
class Builder:
    def __init__(self):
        self.model = Lin()

    def quantize(self, quantizer, x):
        return prepare_pt2e(export(self.model, (x,)).module(), quantizer)
"""
)


def _one(src: str, code: str = "QL201"):
    found = check(src)
    assert [d.code for d in found] == [code], found
    return found[0]


# -- quiet: the attribute's one construction is mode-free -----------------------------------------
def test_attribute_built_in_init_from_a_mode_free_class_is_quiet():
    assert check(BUILDER) == []


def test_attribute_read_by_calls_and_mode_switches_is_quiet():
    src = BUILDER + (
        "\n    def run(self, x):\n"
        "        self.model.train()\n"
        "        n = sum(p.numel() for p in self.model.parameters())\n"
        "        if self.model is not None:\n"
        "            return self.model(x), n, copy.deepcopy(self.model)\n"
    )
    assert check("import copy\n" + src) == []


def test_attribute_stored_from_a_parameter_every_caller_builds_mode_free_is_quiet():
    src = (
        LIN
        + """
class Builder:
    def __init__(self, model):
        self.model = model

    def quantize(self, quantizer, x):
        return prepare_pt2e(export(self.model, (x,)).module(), quantizer)


def main(quantizer, x):
    Builder(Lin()).quantize(quantizer, x)
"""
    )
    assert check(src) == []
    # A caller that passes batch norm makes it a finding.
    d = _one(src.replace("Builder(Lin())", "Builder(BN())"))
    assert "BatchNorm1d" in d.message


def test_qat_capture_of_an_eval_attribute_of_a_mode_free_class_is_quiet():
    src = BUILDER.replace("self.model = Lin()", "self.model = Lin().eval()").replace("prepare_pt2e", "prepare_qat_pt2e")
    assert check(src) == []
    d = _one(src.replace("self.model = Lin().eval()", "self.model = BN().eval()"), "QL202")
    assert d.message.endswith("; in `BN`, the mode changes BatchNorm1d")


# -- reported: the construction may matter, or something else may reach the attribute ------------
def test_attribute_of_a_batch_norm_class_is_reported_naming_it():
    d = _one(BUILDER.replace("self.model = Lin()", "self.model = BN()"))
    assert d.message.endswith("; in `BN`, the mode changes BatchNorm1d")


def test_attribute_of_a_class_from_elsewhere_is_reported():
    d = _one("from models import Net\n" + BUILDER.replace("self.model = Lin()", "self.model = Net()"))
    assert "may not matter" not in d.message


def _changed(extra: str, before: str = "") -> str:
    return before + BUILDER + extra


def test_attribute_given_parts_or_replaced_is_reported():
    changes = [
        "\n    def grow(self):\n        self.model.add_module('bn', nn.BatchNorm1d(4))\n",
        "\n    def grow(self):\n        self.model.fc.register_forward_hook(print)\n",
        "\n    def grow(self):\n        setattr(self.model, 'bn', nn.BatchNorm1d(4))\n",
        "\n    def grow(self):\n        swap_in_batch_norm(self.model)\n",
        "\n    def grow(self):\n        m = self.model\n        m.bn = nn.BatchNorm1d(4)\n",
        "\n    def reset(self):\n        self.model = BN()\n",
        "\n    def reset(self):\n        setattr(self, 'model', BN())\n",
        "\n    def reset(self):\n        self.add_module('model', BN())\n",
        "\n    def get(self):\n        return self.model\n",
    ]
    for extra in changes:
        d = _one(_changed(extra))
        assert d.message.startswith("`self.model` is captured for PTQ in train mode"), extra


def test_attribute_written_from_outside_the_class_or_by_a_subclass_is_reported():
    outside = [
        "\n\ndef main(quantizer, x):\n    b = Builder()\n    b.model = BN()\n    b.quantize(quantizer, x)\n",
        "\n\ndef main(quantizer, x):\n    b = Builder()\n    b.model.bn = nn.BatchNorm1d(4)\n",
        "\n\nclass Sub(Builder):\n    def __init__(self):\n        super().__init__()\n        self.model = BN()\n",
    ]
    for extra in outside:
        found = check(_changed(extra))
        assert any(d.code == "QL201" and d.range.start.row == _row(_changed(extra)) for d in found), extra


def test_attribute_stored_from_a_parameter_with_unseen_callers_is_reported():
    src = (
        LIN
        + """
class Builder:
    def __init__(self, model):
        self.model = model

    def quantize(self, quantizer, x):
        return prepare_pt2e(export(self.model, (x,)).module(), quantizer)
"""
    )
    d = _one(src)
    assert "self.model" in d.message


def _row(src: str) -> int:
    """The row (as diagnostics count them) of the capture in `quantize`."""
    from tests.test_model_sources import HEAD

    lines = (HEAD + src).splitlines()
    return next(i for i, line in enumerate(lines, 1) if "prepare_pt2e(export(self.model" in line)


# -- parts the class builds and gives the attribute in a method ------------------------------------
def test_a_mode_dependent_part_given_in_a_method_is_reported_naming_it():
    for where in ("__init__", "grow"):
        if where == "__init__":
            src = BUILDER.replace("self.model = Lin()", "self.model = Lin()\n        self.model.bn = nn.BatchNorm1d(4)")
        else:
            src = _changed("\n    def grow(self):\n        self.model.bn = nn.BatchNorm1d(4)\n")
        d = _one(src)
        assert d.message.startswith("`self.model` is captured for PTQ in train mode"), where
        assert d.message.endswith("; in `Lin`, the mode changes BatchNorm1d"), where


def test_parts_that_leave_it_mode_free_or_its_mode_unknown_are_quiet():
    quiet = [
        # a part whose mode does not matter: still mode-free
        _changed("\n    def grow(self):\n        self.model.head = nn.Linear(4, 4)\n"),
        # a part not built there (its mode is not known), or built and put in eval mode
        _changed("\n    def grow(self, head):\n        self.model.head = make_head(head)\n"),
        _changed("\n    def grow(self):\n        self.model.bn = nn.BatchNorm1d(4).eval()\n"),
    ]
    for src in quiet:
        assert check(src) == [], src
