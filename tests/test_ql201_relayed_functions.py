"""QL201: a named function handed to a relay helper (`relay(model, capture)`), which calls it
only on the model it is given or its submodules (`callback_relays`): the call is a call of
the function with that model (`relayed_functions`, issue 14 item 5).

Quiet when every model relayed is in eval mode, whether the function is module-level, nested
or imported from another module of the project; loud when one is not, and on the look-alikes:
a helper that stores the callback, calls it on something else, or recurses with another
module; a function also used where qlint cannot see.
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint
from tests.test_ql201_callback_relays import RELAY_MODULE

HEAD = (
    RELAY_MODULE
    + """
def is_linear(mod, fqn):
    return isinstance(mod, torch.nn.Linear)
"""
)

CAPTURE = """

def capture(mod):
    m = export(mod, (torch.randn(1, 2),)).module()
    return prepare_pt2e(m, Quantizer())
"""
CAPTURE_ROW = (HEAD + CAPTURE).splitlines().index("    m = export(mod, (torch.randn(1, 2),)).module()") + 1

RELAY = """

def test_relay():
    m = Net(){mode}
    replace_matching(m, capture, is_linear)
"""


def _repo(tmp_path):
    root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
    (root / ".git").mkdir(parents=True)
    return root


def rows(src: str, tmp_path, head: str = HEAD) -> list[int]:
    path = str(_repo(tmp_path) / "test_relay.py")
    return [d.range.start.row for d in lint(head + textwrap.dedent(src), path=path, select=("QL201",))]


def test_a_module_level_function_relayed_an_eval_model_is_quiet(tmp_path):
    assert rows(CAPTURE + RELAY.format(mode=".eval()"), tmp_path) == []
    # Passed by keyword, with the filter as a lambda.
    keyword = """


def test_kw():
    replace_matching(Net().eval(), replacement_fn=capture, filter_fn=lambda m, f: 1)
"""
    assert rows(CAPTURE + keyword, tmp_path) == []


def test_a_train_mode_model_relayed_is_reported_with_the_relay_call(tmp_path):
    src = HEAD + textwrap.dedent(CAPTURE + RELAY.format(mode=""))
    path = str(_repo(tmp_path) / "test_relay.py")
    (d,) = lint(src, path=path, select=("QL201",))
    assert d.range.start.row == CAPTURE_ROW
    relay_row = src.splitlines().index("    replace_matching(m, capture, is_linear)") + 1
    assert f"the call at line {relay_row} passes it" in d.message
    train = "\n\ndef test_train():\n    replace_matching(Net(), capture, is_linear)\n"
    both = CAPTURE + RELAY.format(mode=".eval()") + train
    assert rows(both, tmp_path) == [CAPTURE_ROW]


def test_a_nested_function_relayed(tmp_path):
    nested = """

    def capture_and_prepare(model, x):
        m = export(model, (x,)).module()
        return prepare_pt2e(m, Quantizer())


    def test_nested(x):
        def capture(mod):
            return capture_and_prepare(mod, x)

        replace_matching(Net(){mode}, capture, is_linear)
    """
    row = (HEAD + textwrap.dedent(nested)).splitlines().index("    m = export(model, (x,)).module()") + 1
    assert rows(nested.format(mode=".eval()"), tmp_path) == []
    assert rows(nested.format(mode=""), tmp_path) == [row]


HELPERS = """\
import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def capture(mod):
    m = export(mod, (torch.randn(1, 2),)).module()
    return prepare_pt2e(m, Quantizer())
"""


def test_a_function_imported_from_another_module_is_called_by_the_relay(tmp_path):
    root = _repo(tmp_path)
    (root / "capture_helpers.py").write_text(HELPERS)
    path = str(root / "capture_helpers.py")
    for mode, expected in ((".eval()", []), ("", [7])):
        (root / "test_relay.py").write_text(
            HEAD + "from capture_helpers import capture\n" + textwrap.dedent(RELAY.format(mode=mode))
        )
        found = [d.range.start.row for d in lint(HELPERS, path=path, select=("QL201",))]
        assert found == expected, mode
    # Checked from the relaying module: the capture is reported where it is written, not here.
    relaying = (root / "test_relay.py").read_text()
    assert lint(relaying, path=str(root / "test_relay.py"), select=("QL201",)) == []


def test_helpers_that_are_no_relay_keep_the_report(tmp_path):
    good = CAPTURE + RELAY.format(mode=".eval()")
    for old, new in (
        # The callback is stored: it may run later on anything.
        ("    if filter_fn(", "    HOOKS.append(replacement_fn)\n    if filter_fn("),
        # Called on something else than the module or its children.
        ("model = replacement_fn(model)", "model = replacement_fn(type(model)())"),
        # Recursion with another module than a child.
        ("replace_matching(child, replacement_fn", "replace_matching(rebuild(child), replacement_fn"),
    ):
        assert old in HEAD
        assert rows(good, tmp_path, HEAD.replace(old, new)) == [CAPTURE_ROW + new.count("\n") - old.count("\n")], new


def test_a_function_also_used_where_qlint_cannot_see_keeps_the_report(tmp_path):
    good = CAPTURE + RELAY.format(mode=".eval()")
    assert rows(good + "\n\nHOOKS = [capture]\n", tmp_path) == [CAPTURE_ROW]
    # A relay helper qlint cannot read (another package's).
    unknown = good.replace("replace_matching(m, capture", "somelib.replace_matching(m, capture")
    assert rows(unknown, tmp_path, "import somelib\n" + HEAD) == [CAPTURE_ROW + 1]


def test_other_arguments_of_the_callback_are_the_helpers_choice(tmp_path):
    # The helper calls `fn(child, flag)`: `flag` is no default the callback's branch can rely on.
    head = HEAD.replace("model = replacement_fn(model)", "model = replacement_fn(model, fqn)")
    two = """

    def capture(mod, fqn=None, is_qat=False):
        m = export(mod, (torch.randn(1, 2),)).module()
        if not is_qat:
            return prepare_pt2e(m, Quantizer())
        return m


    def test_relay():
        replace_matching(Net(), capture, is_linear)
    """
    row = (head + textwrap.dedent(two)).splitlines().index("    m = export(mod, (torch.randn(1, 2),)).module()") + 1
    assert rows(two, tmp_path, head) == [row]
    assert rows(two.replace("Net()", "Net().eval()"), tmp_path, head) == []


# -- bound methods handed to the relay (issue 14: `relay(model, self.capture)`) ---------------------
METHOD = """

class Runner:
    def capture(self, mod):
        m = export(mod, (torch.randn(1, 2),)).module()
        return prepare_pt2e(m, Quantizer())

    def run(self):
        replace_matching(Net(){mode}, self.capture, is_linear)
"""
METHOD_LINE = "        m = export(mod, (torch.randn(1, 2),)).module()"
METHOD_ROW = (HEAD + textwrap.dedent(METHOD)).splitlines().index(METHOD_LINE) + 1
INSTANCE = """

class Runner:
    def capture(self, mod):
        m = export(mod, (torch.randn(1, 2),)).module()
        return prepare_pt2e(m, Quantizer())


def test_it():
    runner = Runner()
    replace_matching(Net(){mode}, runner.capture, is_linear)
"""


def test_a_method_bound_to_self_relayed_a_train_mode_model_is_reported_with_the_relay_call(tmp_path):
    src = HEAD + textwrap.dedent(METHOD.format(mode=""))
    path = str(_repo(tmp_path) / "test_relay.py")
    (d,) = lint(src, path=path, select=("QL201",))
    assert d.range.start.row == METHOD_ROW
    relay_row = src.splitlines().index("        replace_matching(Net(), self.capture, is_linear)") + 1
    assert f"the call at line {relay_row} passes it" in d.message


def test_a_method_bound_to_self_relayed_an_eval_model_is_quiet(tmp_path):
    assert rows(METHOD.format(mode=".eval()"), tmp_path) == []
    # A static method takes the model first: no instance fills a parameter.
    static = METHOD.replace("    def capture(self, mod):", "    @staticmethod\n    def capture(mod):")
    assert rows(static.format(mode=".eval()"), tmp_path) == []


def test_a_method_of_a_local_instance_relayed(tmp_path):
    src = HEAD + textwrap.dedent(INSTANCE.format(mode=""))
    path = str(_repo(tmp_path) / "test_relay.py")
    (d,) = lint(src, path=path, select=("QL201",))
    relay_row = src.splitlines().index("    replace_matching(Net(), runner.capture, is_linear)") + 1
    assert f"the call at line {relay_row} passes it" in d.message
    assert rows(INSTANCE.format(mode=".eval()"), tmp_path) == []


def test_a_bound_method_also_used_where_qlint_cannot_see_keeps_the_report(tmp_path):
    # (A method's uses through `self` are trusted as for its written calls, `calls_read_here`.)
    good = METHOD.format(mode=".eval()")
    # Handed to a helper that is no relay (it keeps the callback).
    kept = good.replace("replace_matching(Net().eval(), self.capture, is_linear)", "keep(Net().eval(), self.capture)")
    assert rows(kept, tmp_path) == [METHOD_ROW]
    # The instance's method handed to a helper qlint cannot read.
    inst = INSTANCE.format(mode=".eval()").replace("replace_matching(", "somelib.replace_matching(")
    assert len(rows(inst, tmp_path, "import somelib\n" + HEAD)) == 1
    # An instance of a class qlint does not know: `other.capture` is no call of `Runner.capture`.
    unknown = INSTANCE.format(mode=".eval()").replace("runner = Runner()", "runner = make_runner()")
    assert len(rows(unknown, tmp_path)) == 1


def test_a_bound_method_of_another_class_with_the_same_name_is_not_the_relayed_one(tmp_path):
    # `self.capture` in a class that defines no `capture` of its own relays nothing read.
    other = (
        METHOD.format(mode=".eval()")
        + """

class Other:
    def capture(self, mod):
        return mod

    def run(self):
        replace_matching(Net(), self.capture, is_linear)
"""
    )
    assert rows(other, tmp_path) == []
