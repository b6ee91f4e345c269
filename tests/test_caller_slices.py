"""A caller's body is walked only where it can affect what its calls of the helper pass
(`caller_slices`): what follows the call is not read, nor what names nothing related; every
look-alike that can reach the passed values stays in the walk, and what the slice cannot read
exactly keeps the body whole."""

from __future__ import annotations

import ast
import textwrap

from qlint.analysis.flow import model_interp
from qlint.analysis.flow.caller_slices import dropped
from tests.test_ql201_project_callers import HEAD, IMPORT, _check, _repo


def _kept(source: str, helper: str = "helper") -> list[str] | None:
    """The first function of `source`'s statements the walk reads for its calls of `helper`
    (each as its first line, in walk order), or None for the whole body."""
    func = ast.parse(textwrap.dedent(source)).body[0]
    refs = [
        n.func
        for n in ast.walk(func)
        if isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", None)) == helper
    ]
    ids = dropped(func, refs)
    if ids is None:
        return None
    return [ast.unparse(s).splitlines()[0] for s in _own(func) if id(s) not in ids]


def _own(node: ast.AST) -> list[ast.stmt]:
    """The statements of a function's own code, breadth first (not those of nested functions)."""
    out, pending = [], [node]
    while pending:
        children = [c for n in pending for c in ast.iter_child_nodes(n)]
        out += [c for c in children if isinstance(c, ast.stmt)]
        pending = [c for c in children if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return out


def test_what_follows_the_call_or_names_nothing_related_is_not_read():
    kept = _kept("""
        def main(args):
            log = open("run.log")
            model = Net()
            helper(model, args.q)
            adb = Device(args.host)
            adb.push(model)
        """)
    assert kept == ["model = Net()", "helper(model, args.q)"]


def test_names_the_argument_is_built_from_are_followed_transitively():
    kept = _kept("""
        def main(cfg):
            size = cfg.size
            other = 3
            net = Net(size)
            model = wrap(net)
            helper(model)
        """)
    assert kept == ["size = cfg.size", "net = Net(size)", "model = wrap(net)", "helper(model)"]


def test_an_alias_or_a_holder_of_the_model_is_kept():
    kept = _kept("""
        def main():
            print("start")
            model = Net()
            alias = model
            alias.train()
            box = Box()
            box.m = model
            box.train_all()
            helper(model)
        """)
    assert "alias.train()" in kept and "box.train_all()" in kept and "box = Box()" in kept
    assert 'print("start")' not in kept


def test_a_loop_around_the_call_is_read_whole_where_related():
    # The second pass reaches the call with what the end of the first left.
    kept = _kept("""
        def main(models):
            for m in models:
                helper(m)
                m.train()
                print("done")
            m.eval()
        """)
    assert kept == ["for m in models:", "helper(m)", "m.train()"]


def test_a_closure_over_the_model_and_its_calls_are_kept():
    kept = _kept("""
        def main():
            model = Net()
            def go():
                model.train()
            def other():
                pass
            go()
            other()
            helper(model)
        """)
    assert kept == ["model = Net()", "def go():", "go()", "helper(model)"]


def test_paths_ended_before_the_call_are_kept_with_their_tests():
    kept = _kept("""
        def main(cfg, flag):
            model = Net(cfg.size)
            ready = check(flag)
            if ready:
                return
            note = 1
            helper(model)
        """)
    assert kept == ["model = Net(cfg.size)", "ready = check(flag)", "if ready:", "helper(model)", "return"]


def test_the_receiver_of_a_method_of_the_same_class_is_not_followed():
    kept = _kept(
        """
        def test_it(self):
            self.setup_device()
            module = Net()
            module = self.get_qdq_module(module)
            self.check(module)
        """,
        "get_qdq_module",
    )
    assert kept == ["module = Net()", "module = self.get_qdq_module(module)"]
    # ... unless the call passes what `self` holds.
    kept = _kept(
        """
        def test_it(self):
            self.setup_device()
            self.get_qdq_module(self.module)
        """,
        "get_qdq_module",
    )
    assert kept is None


def test_what_reaches_values_without_naming_them_keeps_the_body_whole():
    for body in (
        "global model\n    model.train()\n    helper(model)",
        "exec(code)\n    helper(model)",
        "scope = locals()\n    helper(model)",
        "hooks.append(lambda: helper(model))\n    other()",
        "def later():\n        helper(model)\n    other()",
        "while helper(model):\n        other()",
    ):
        assert _kept(f"def main(model, code, hooks):\n    x = 1\n    {body}\n") is None, body
    # What runs only after the call (outside a loop around it) cannot reach what it passed.
    after = "def main(code):\n    x = 1\n    model = Net()\n    helper(model)\n    exec(code)\n"
    assert _kept(after) == ["model = Net()", "helper(model)"]
    # Nothing to cut: the whole body.
    assert _kept("def main(model):\n    model.eval()\n    helper(model)\n") is None


def test_a_call_handing_on_a_parameter_as_it_is_keeps_the_body_whole():
    # Its callers are asked what it passes, and their walks read the body whole as their helper.
    for head, call in (
        ("def check(self, mod, inputs, is_qat=False):", "helper(mod, inputs, is_qat)"),
        ("def check(model):", "helper(model)"),
        ("def check(cfg, *models):", "helper(*models)"),
        ("def check(cfg, *, flag):", "helper(Net(cfg), flag=flag)"),
        ("def check(cfg, **options):", "helper(Net(cfg), options)"),
    ):
        assert _kept(f"{head}\n    log = open('run.log')\n    {call}\n    log.close()\n") is None, head


def test_a_call_handing_on_what_a_parameter_holds_is_sliced():
    # An attribute, an item or a call of a parameter, `self`, or a local named like no parameter.
    for head, call in (
        ("def main(args):", "helper(model, args.q)"),
        ("def main(cfgs):", "helper(model, cfgs[0])"),
        ("def main(make):", "helper(make(model))"),
        ("def test_it(self):", "helper(model, self)"),
        ("def main(cfg):", "helper(model)"),
    ):
        source = f"{head}\n    log = open('run.log')\n    model = Net()\n    {call}\n    log.close()\n"
        assert _kept(source) == ["model = Net()", call], head


# -- the verdicts, read from the slice ------------------------------------------------------

BN_NET = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)
"""


def _walked(monkeypatch, root, name: str) -> tuple[list, set[int]]:
    """The check's findings and the rows of `scripts/<name>.py` its walks read."""
    rows: set[int] = set()
    real = model_interp.Interpreter.stmt

    def stmt(self, s, env):
        if self.owner.scope.path.endswith(f"{name}.py"):
            rows.add(s.lineno)
        return real(self, s, env)

    monkeypatch.setattr(model_interp.Interpreter, "stmt", stmt)
    return _check(root).diagnostics, rows


def _script(body: str) -> str:
    # What the helper is handed besides the model is built here: a parameter handed on as it
    # is keeps the body whole (its callers are asked what it passes).
    head = "\n\ndef main(host):\n    quantizer = build_quantizer()\n    x = torch.randn(1, 3, 8, 8)\n"
    return IMPORT + BN_NET + head + textwrap.indent(textwrap.dedent(body), "    ")


def _row(source: str, text: str) -> int:
    return next(i for i, line in enumerate((HEAD + source).splitlines(), 1) if text in line)


def test_an_eval_caller_is_vouched_for_without_reading_what_follows_its_call(tmp_path, monkeypatch):
    caller = _script("""
        model = Net().eval()
        quantize_module(model, quantizer, x)
        device = connect(host)
        device.run(model)
        """)
    diagnostics, rows = _walked(monkeypatch, _repo(tmp_path, a=caller), "a")
    assert diagnostics == []
    assert _row(caller, "quantize_module(model") in rows
    assert _row(caller, "device = connect") not in rows and _row(caller, "device.run") not in rows


def test_a_train_mode_model_in_the_slice_keeps_the_finding(tmp_path, monkeypatch):
    # Switched through an alias before the call; and in a loop, after the call.
    aliased = _script("""
        model = Net().eval()
        other = model
        other.train()
        quantize_module(model, quantizer, x)
        """)
    looped = _script("""
        model = Net().eval()
        for step in range(2):
            quantize_module(model, quantizer, x)
            model.train()
        """)
    for name, caller in (("aliased", aliased), ("looped", looped)):
        diagnostics, rows = _walked(monkeypatch, _repo(tmp_path / name, a=caller), "a")
        assert len(diagnostics) == 1, name
        assert _row(caller, ".train()") in rows, name


def test_a_call_in_a_comprehension_is_read_in_the_loop_it_stands_for(tmp_path):
    # The walk reads the comprehension as a loop of statements it makes (`comprehension_loops`):
    # those are never passed over.
    caller = _script("""
        print("start")
        models = [Net().eval(), Net().eval()]
        outs = [quantize_module(m, quantizer, x) for m in models]
        """)
    assert _check(_repo(tmp_path, a=caller)).diagnostics == []
    assert _kept(caller[caller.index("def main") :], "quantize_module") == [
        "quantizer = build_quantizer()",
        "x = torch.randn(1, 3, 8, 8)",
        "models = [Net().eval(), Net().eval()]",
        "outs = [quantize_module(m, quantizer, x) for m in models]",
    ]
