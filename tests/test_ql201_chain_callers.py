"""QL201: the callers of every function on the way up from a capture helper (issue 14, item 7).

The helper's callers in its own module are followed up through their own parameters
(`caller_facts`), but a function on that chain may also be called from another module, or
used where qlint cannot see (a callback, a list): its callers are then not all in the
module's flows. Such a function counts as having unknown callers, and the verdict reads its
callers in the project (`project_callers`): quiet when they all pass eval-mode models, loud
when one passes a train-mode model with batch norm or cannot be read.
"""

from __future__ import annotations

from tests.test_ql201_project_callers import _check, _repo

MIDDLE = """

def middle(model, quantizer, x):
    return quantize_module(model, quantizer, x)


def local_user(quantizer, x):
    middle(load_model().eval(), quantizer, x)
"""
BN_NET = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)

"""


def _chain(tmp_path, extra: str = MIDDLE, **scripts: str):
    root = _repo(tmp_path, **scripts)
    helper = root / "pkg" / "utils" / "export_utils.py"
    helper.write_text(helper.read_text() + extra)
    return root


def _caller(name: str, call: str) -> str:
    return f"from pkg.utils.export_utils import {name}\n{BN_NET}\ndef main(q, x):\n    {call}\n"


def test_the_helper_called_here_with_eval_and_elsewhere_in_train_mode_is_reported(tmp_path):
    train = _caller("quantize_module", "quantize_module(Net(), q, x)")
    assert len(_check(_chain(tmp_path, a=train)).diagnostics) == 1
    evaluated = _caller("quantize_module", "quantize_module(Net().eval(), q, x)")
    assert _check(_chain(tmp_path / "e", a=evaluated)).diagnostics == []


def test_a_function_in_the_middle_called_from_another_module(tmp_path):
    assert _check(_chain(tmp_path)).diagnostics == []  # only the eval-mode caller here
    train = _caller("middle", "middle(Net(), q, x)")
    (d,) = _check(_chain(tmp_path / "t", a=train)).diagnostics
    assert "as parameter `model`" in d.message
    evaluated = _caller("middle", "middle(Net().eval(), q, x)")
    assert _check(_chain(tmp_path / "e", a=evaluated)).diagnostics == []
    # Through a star import (`__all__` exports it), with a model qlint cannot classify.
    star = "from pkg.utils.export_utils import *  # noqa: F403\n\ndef main(q, x):\n    middle(load(), q, x)\n"
    assert len(_check(_chain(tmp_path / "s", MIDDLE + '\n__all__ = ["middle"]\n', a=star)).diagnostics) == 1


def test_a_function_in_the_middle_used_as_a_value_has_unknown_callers(tmp_path):
    for use in ("HOOKS = [middle]", "register(middle)"):
        root = _chain(tmp_path / use[:5], MIDDLE + f"\n\n{use}\n")
        assert len(_check(root).diagnostics) == 1, use


def test_a_nested_function_in_the_middle(tmp_path):
    nested = """

def outer(quantizer, x, run):
    def cap(model):
        return quantize_module(model, quantizer, x)

    cap(load_model().eval())
{use}
"""
    assert _check(_chain(tmp_path, nested.format(use=""))).diagnostics == []
    # Handed on: whoever calls it passes what qlint cannot see.
    assert len(_check(_chain(tmp_path / "r", nested.format(use="    run(cap)"))).diagnostics) == 1


def test_names_elsewhere_that_cannot_be_the_helper_are_no_callers(tmp_path):
    others = {
        # A local variable of the same name.
        "a": "def main(m):\n    quantize_module = m.eval()\n    return quantize_module\n",
        # A function of its own of the same name, nested in a test.
        "b": "def test():\n    def quantize_module(m):\n        return m\n\n    quantize_module(1)\n",
        # Imported inside the function from another package.
        "c": "def main(m, q, x):\n    from otherpkg import quantize_module\n\n    quantize_module(m, q, x)\n",
        # A method of an object that the helper's signature could not take.
        "d": "def main(compiled):\n    return compiled.quantize_module()\n",
    }
    train = _caller("quantize_module", "quantize_module(Net().eval(), q, x)")
    assert _check(_chain(tmp_path, e=train, **others)).diagnostics == []
    # The same method called with arguments the helper could take: it may be the helper.
    maybe = "def main(obj, m, q, x):\n    return obj.quantize_module(m, q, x)\n"
    assert len(_check(_chain(tmp_path / "m", e=train, d=maybe)).diagnostics) == 1


def test_a_mode_free_model_here_does_not_vouch_for_callers_elsewhere(tmp_path):
    mode_free = """

class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)


def local_user(quantizer, x):
    quantize_module(Small(), quantizer, x)
"""
    assert _check(_chain(tmp_path, mode_free)).diagnostics == []
    train = _caller("quantize_module", "quantize_module(Net(), q, x)")
    assert len(_check(_chain(tmp_path / "t", mode_free, a=train)).diagnostics) == 1


def test_nested_functions_of_the_same_name_in_other_functions_are_other_functions(tmp_path):
    twins = """

def first(quantizer, x):
    def cap(model):
        return quantize_module(model, quantizer, x)

    cap(load_model().eval())


def second(quantizer, x):
    def cap(model):
        return quantize_module(model, quantizer, x)

    cap(load_model().eval())
"""
    assert _check(_chain(tmp_path, twins)).diagnostics == []
    assert (
        len(_check(_chain(tmp_path / "t", twins.replace("load_model().eval()", "nn.Dropout(0.5)", 1))).diagnostics) == 1
    )


def test_outside_any_project_the_modules_own_calls_are_trusted(tmp_path):
    # No repository, no `pyproject.toml`: no other module can be searched for callers.
    from tests.conftest import lint
    from tests.test_ql201_project_callers import HELPER

    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "other.py").write_text("from script import middle\n\nmiddle(load_model(), q, x)\n")
    assert lint(HELPER + MIDDLE, path=str(loose / "script.py"), select=("QL201",)) == []


def test_a_module_no_other_module_names_is_not_searched_for_callers(tmp_path, monkeypatch):
    from qlint.analysis.flow import call_sites

    asked = []
    for searched in ("each_project_call", "used_elsewhere"):
        real = getattr(call_sites, searched)
        monkeypatch.setattr(call_sites, searched, lambda *a, real=real: asked.append(a[1].name) or real(*a))
    root = _chain(tmp_path)
    (root / "scripts" / "note.py").write_text("middle = 1\n")  # the name, but not the module's
    assert _check(root).diagnostics == []
    assert asked == []
    # Named (imported) somewhere: its callers are searched.
    (root / "scripts" / "user.py").write_text("from pkg.utils import export_utils\n")
    assert _check(root).diagnostics == []
    assert asked
