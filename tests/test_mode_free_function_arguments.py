"""QL201/QL202: a constructor argument that is a plain function, not a module.

A PyTorch issue's reproduction (Zenasj/HBTGen-artifact `issue_127516.py`) builds
`M(add_fn)` with `add_fn = lambda x, y: x.add_(y)`; `M` holds Linears and a ReLU and stores
the function to call it in `forward`. A function is no submodule (`model.eval()` does not
reach it) and a closed one reads no mode, so the model's mode cannot change the graph. A
function that may reach a module or a mode (a global module, the model's `training` flag, a
torch class it builds, a callable qlint cannot read) keeps the report.
"""

from __future__ import annotations

from tests.test_model_sources import check

MODEL = """
    class M(torch.nn.Module):
        def __init__(self, add_fn):
            super().__init__()
            self.linear1 = torch.nn.Linear(4, 4)
            self.linear2 = torch.nn.Linear(4, 4)
            self.add_fn = add_fn
            self.relu = torch.nn.ReLU()

        def forward(self, x):
            return self.relu(self.add_fn(self.linear1(x), self.linear2(x)))


    ARGUMENT
    x = torch.randn(4, 4)
    prepared = prepare_pt2e(export(mod, (x,)).module(), quantizer)
"""


def _codes(argument: str) -> list[str]:
    # The template is dedented as a whole: the argument's later lines take its indentation.
    return [d.code for d in check(MODEL.replace("ARGUMENT", argument.replace("\n", "\n    ")))]


def test_a_closed_function_handed_to_the_constructor_is_quiet():
    closed = [
        "add_fn = lambda x, y: x.add_(y)\nmod = M(add_fn)",  # the spelling
        "mod = M(lambda x, y: x + y)",
        "mod = M(torch.add)",
        "mod = M(lambda x, y: torch.nn.functional.relu(x) + y)",
        "def add(x, y):\n    return torch.add(x, y)\n\n\nmod = M(add)",
        "import operator\nmod = M(operator.add)",
    ]
    for argument in closed:
        assert _codes(argument) == [], argument


def test_a_function_that_may_reach_a_module_or_a_mode_keeps_the_report():
    open_ = [
        "drop = torch.nn.Dropout()\nmod = M(lambda x, y: drop(x) + y)",  # a global module
        "mod = M(lambda x, y: x if mod.training else y)",  # the model's flag
        "mod = M(lambda x, y: torch.nn.Dropout()(x) + y)",  # a torch class it builds
        "mod = M(lambda x, y: x.train() + y)",  # a mode switch
        "from helpers import add\nmod = M(add)",  # a callable qlint cannot read
        "mod = M(torch.nn.Dropout())",  # a module
        "mod = M(torch.nn.Dropout)",  # a class the model may build
        "def add(x, y):\n    global seen\n    seen = x\n    return x + y\n\n\nmod = M(add)",
    ]
    for argument in open_:
        assert _codes(argument) == ["QL201"], argument


def test_a_class_that_calls_the_function_in_its_constructor_keeps_the_report():
    # What the function builds becomes a part of the model: a call of a parameter in
    # `__init__` leaves the class's content unknown, whatever the function.
    src = MODEL.replace("self.add_fn = add_fn", "self.add_fn = add_fn(4)").replace(
        "ARGUMENT", "mod = M(lambda n: torch.add)"
    )
    assert [d.code for d in check(src)] == ["QL201"]


def test_a_local_binding_of_the_name_comes_before_the_modules_def():
    # The module's `add` is closed, but the function passes its own `add`, which runs a
    # module the model does not hold.
    run = """
    def add(x, y):
        return x + y


    def run(quantizer, drop):
        def add(x, y):
            return drop(x) + y

        mod = M(add)
        x = torch.randn(4, 4)
        return prepare_pt2e(export(mod, (x,)).module(), quantizer)
    """
    model = MODEL[: MODEL.index("    ARGUMENT")]
    assert [d.code for d in check(model + run)] == ["QL201"]
    # Without its own `add`, the function passes the module's closed one.
    quiet = run.replace("        def add(x, y):\n            return drop(x) + y\n\n", "")
    assert [d.code for d in check(model + quiet)] == []
