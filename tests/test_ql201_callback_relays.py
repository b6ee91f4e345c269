"""QL201: a capture helper reached through a lambda handed to a higher-order helper, from a
method called on an instance (issue 14; torchao's test_quant_api.py `XNNPackDynamicQuantizer`).

`replace_matching(model, lambda mod: capture_and_prepare(mod, x), filter)` calls the lambda
only on `model` or its submodules (`callback_relays`), which are in `model`'s mode; and
`quantizer.prepare(m)` runs `Wrapper.prepare` when `quantizer = Wrapper()` (`instance_methods`),
whose calls are all known when its instances never leave the module (`confined_instances`).
Quiet where the eval-mode model reaches the lambda that way; loud where the lambda gets
something else, the model is in train mode, the helper is not known or switches modes
itself, or the method may be called where qlint cannot see.
"""

from __future__ import annotations

import ast
import textwrap

from qlint.analysis.flow.callback_relays import Relay, relays
from tests.conftest import lint

# Net holds a dropout; replace_matching calls its callback only on the model or its submodules,
# as torchao's `_replace_with_custom_fn_if_matches_filter` does.
RELAY_MODULE = """\
import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)
        self.drop = torch.nn.Dropout(0.5)


def replace_matching(model, replacement_fn, filter_fn, fqn=""):
    if filter_fn(model, fqn[:-1]):
        model = replacement_fn(model)
        return model
    for name, child in list(model.named_children()):
        new = replace_matching(child, replacement_fn, filter_fn, f"{fqn}{name}.")
        if new is not child:
            setattr(model, name, new)
    return model

"""
HEAD = (
    RELAY_MODULE
    + """
def capture_and_prepare(model, x):
    m = export(model, (x,)).module()
    return prepare_pt2e(m, Quantizer())
"""
)
CAPTURE = HEAD.splitlines().index("    m = export(model, (x,)).module()") + 1

WRAPPER = """

class Wrapper:
    def prepare(self, model):
        replace_matching(
            model,
            lambda mod: capture_and_prepare(mod, torch.randn(1, 2)),
            lambda mod, fqn: isinstance(mod, torch.nn.Linear),
        )
        return model
"""

TEST = """

def test_dynamic_quant():
    quantizer = Wrapper()
    m = Net(){mode}
    m = quantizer.prepare(m)
"""


def rows(src: str, tmp_path, overlay: dict[str, str] | None = None) -> list[int]:
    root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
    (root / ".git").mkdir(parents=True)
    for name, text in (overlay or {}).items():
        (root / name).write_text(text)
    path = str(root / "test_quant.py")
    return [d.range.start.row for d in lint(HEAD + textwrap.dedent(src), path=path, select=("QL201",))]


def test_the_lambda_gets_the_eval_mode_model_through_the_instance_method(tmp_path):
    assert rows(WRAPPER + TEST.format(mode=".eval()"), tmp_path) == []
    # Called on the construction at once.
    once = WRAPPER + "\n\ndef test_once():\n    Wrapper().prepare(Net().eval())\n"
    assert rows(once, tmp_path) == []


def test_a_train_mode_model_handed_in_is_reported(tmp_path):
    assert rows(WRAPPER + TEST.format(mode=""), tmp_path) == [CAPTURE]
    both = WRAPPER + TEST.format(mode=".eval()") + "\n\ndef test_train():\n    Wrapper().prepare(Net())\n"
    assert rows(both, tmp_path) == [CAPTURE]


def test_the_lambda_is_bound_to_the_parameter_the_helper_relays(tmp_path):
    helper = """

    def apply_to(model, other, fn):
        return fn(other)


    def test_other():
        apply_to(Net(){first}, Net(){second}, lambda mod: capture_and_prepare(mod, torch.randn(1, 2)))
    """
    assert rows(helper.format(first="", second=".eval()"), tmp_path) == []
    assert rows(helper.format(first=".eval()", second=""), tmp_path) == [CAPTURE]


def test_a_helper_calling_the_callback_on_something_else_is_no_relay(tmp_path):
    for call in ("replacement_fn(type(model)())", "replacement_fn(rebuild(model))"):
        helper = HEAD.replace("model = replacement_fn(model)", f"model = {call}")
        src = WRAPPER + TEST.format(mode=".eval()")
        lines = [d.range.start.row for d in lint(helper + textwrap.dedent(src), select=("QL201",))]
        assert lines == [CAPTURE], call


def test_a_helper_that_switches_the_mode_is_no_relay(tmp_path):
    helper = HEAD.replace(
        "    if filter_fn(model, fqn[:-1]):\n", "    model.train()\n    if filter_fn(model, fqn[:-1]):\n"
    )
    src = WRAPPER + TEST.format(mode=".eval()")
    assert [d.range.start.row for d in lint(helper + textwrap.dedent(src), select=("QL201",))] == [CAPTURE + 1]


def test_an_unknown_helper_leaves_the_lambda_unread(tmp_path):
    unknown = WRAPPER.replace("replace_matching(", "somelib.replace_matching(")
    assert rows("import somelib\n" + unknown + TEST.format(mode=".eval()"), tmp_path) == [CAPTURE]


def test_method_calls_that_may_happen_elsewhere_keep_the_report(tmp_path):
    good = WRAPPER + TEST.format(mode=".eval()")
    # The instance handed to a function: that function may call `prepare` with anything.
    escaped = (
        good + "\n\ndef run(q, model):\n    return q.prepare(model)\n\n\ndef test_run():\n    run(Wrapper(), Net())\n"
    )
    assert rows(escaped, tmp_path) == [CAPTURE]
    # A subclass inherits the method, and its instance leaves the module.
    sub = "\n\nclass Other(Wrapper):\n    pass\n\n\ndef make():\n    return Other()\n"
    assert rows(good + sub, tmp_path) == [CAPTURE]
    # Another module names the class: its instances may be built there.
    assert rows(good, tmp_path, {"other.py": OTHER}) == [CAPTURE]
    # `self` handed on from a method.
    leaky = good.replace("        return model\n", "        REGISTRY.append(self)\n        return model\n", 1)
    assert rows(leaky, tmp_path) == [CAPTURE]


OTHER = "from test_quant import Net, Wrapper\n\n\ndef run():\n    Wrapper().prepare(Net())\n"


def relays_of(src: str) -> tuple[Relay, ...]:
    return relays(ast.parse(textwrap.dedent(src)).body[0])


def test_relay_summaries():
    tree = ast.parse(HEAD)
    helper = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "replace_matching")
    assert relays(helper) == (Relay(1, 0, 0), Relay(2, 0, 0))
    assert relays_of("def f(m, fn):\n    for c in m.children():\n        fn(c)\n") == (Relay(1, 0, 0),)
    assert relays_of("def f(m, fn):\n    for c in m.modules():\n        fn(1, c)\n") == (Relay(1, 0, 1),)
    # Rebound before the call on one path: not the model any more.
    assert relays_of("def f(m, fn, g, flag):\n    if flag:\n        m = g(m)\n    fn(m)\n") == (Relay(2, 0, 0),)
    # Parameters, not descendants; a callback stored, called in a comprehension, or in a lambda.
    assert relays_of("def f(m, fn):\n    for n, p in m.named_parameters():\n        fn(p)\n") == ()
    assert relays_of("def f(m, fn):\n    HOOKS.append(fn)\n    fn(m)\n") == ()
    assert relays_of("def f(m, fn):\n    return [fn(c) for c in m.children()]\n") == ()
    assert relays_of("def f(m, fn):\n    return run(lambda: fn(m))\n") == ()
    # A recursive call that hands on something else as the model.
    assert relays_of("def f(m, fn):\n    fn(m)\n    f(copy(m), fn)\n") == ()
    # A decorated helper may not be what runs.
    assert relays_of("@wraps\ndef f(m, fn):\n    fn(m)\n") == ()
    # Bound in a `with` or an `except`: unknown there.
    assert relays_of("def f(m, fn):\n    with g() as m:\n        fn(m)\n") == ()
    assert relays_of("def f(m, fn):\n    try:\n        m = g()\n    except E:\n        fn(m)\n") == ()


def test_a_capture_inside_the_relayed_lambda_gets_the_model_mode_and_no_fix(tmp_path):
    inline = """

    def test_inline(x, q):
        replace_matching(
            Net(){mode},
            lambda mod: prepare_pt2e(export(mod, (x,)).module(), q),
            lambda mod, fqn: isinstance(mod, torch.nn.Linear),
        )
    """
    capture = (HEAD + textwrap.dedent(inline)).splitlines().index(
        "        lambda mod: prepare_pt2e(export(mod, (x,)).module(), q),"
    ) + 1
    assert rows(inline.format(mode=".eval()"), tmp_path) == []
    root = tmp_path / "inline"
    (root / ".git").mkdir(parents=True)
    (d,) = lint(HEAD + textwrap.dedent(inline.format(mode="")), path=str(root / "test_inline.py"), select=("QL201",))
    assert d.range.start.row == capture
    assert d.fix is None  # `mod` is no name of the statement the fix would edit
