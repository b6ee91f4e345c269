"""QL201: which calls of a method are all of its callers (issue 14, items 2 and 7).

A method that captures its parameter is judged from its callers. When another module only
spells its name where it cannot be the method (another class's own `self._wrap_model`, the
two copies of one trainer module in IPEX's examples), its calls in its own class are all its
callers, as when no other module names it. Where the project's other modules cannot be
searched (no repository or `pyproject.toml` around the file), a private method is called by
its class through `self`, and those calls are read; a public one, or a dunder a protocol
calls, is API for callers nobody can see, and is judged as if they were unknown.
"""

from __future__ import annotations

from tests.conftest import check_file, rows_of, write_package
from tests.snippets import NET_BN2D

TRAINER = (
    NET_BN2D
    + """

class Trainer:
    def __init__(self, model, x):
        self.model = model
        self.x = x

    def load(self, path):
        self.model = torch.load(path)

    def NAME(self, model, training=True):
        if not training:
            captured = export(model, (self.x,)).module()
            return prepare_pt2e(captured, None)
        return model

    def evaluate(self):
        return self.NAME(MODEL, training=False)
"""
)
CAPTURE_ROW = TRAINER.splitlines().index("            captured = export(model, (self.x,)).module()") + 1
# Another trainer module with a class of the same name whose own method has the same name.
OTHER = """\
from pkg.trainer import Net


class Trainer:
    def NAME(self, model, training=True):
        return model

    def evaluate(self):
        return self.NAME(Net(), training=False)
"""


def _tree(tmp_path, name="_wrap_model", model="self.model", repository=True, **others: str):
    root = tmp_path / "tree"
    root.mkdir(parents=True)
    if repository:
        (root / ".git").mkdir()
    trainer = TRAINER.replace("NAME", name).replace("MODEL", model)
    write_package(root, "pkg", trainer=trainer, **{m: text.replace("NAME", name) for m, text in others.items()})
    return root


def _rows(root) -> list[int]:
    return rows_of(check_file(root / "pkg" / "trainer.py", ("QL201",)).diagnostics)


def test_another_class_of_the_same_method_name_is_no_caller(tmp_path):
    # `self.model`, which `load` may replace, is a model the analysis cannot classify, passed
    # by the method's only callers: as quiet as with no other module naming the method.
    assert _rows(_tree(tmp_path / "alone")) == []
    assert _rows(_tree(tmp_path / "copy", other=OTHER)) == []
    # The look-alike that is wrong: the caller here passes a train-mode batch-norm model.
    assert _rows(_tree(tmp_path / "train", model="Net()", other=OTHER)) == [CAPTURE_ROW]


def test_a_call_of_the_method_elsewhere_is_still_read(tmp_path):
    caller = "from pkg.trainer import Net, Trainer\n\n\ndef main(x):\n"
    caller += "    Trainer(None, x).NAME(Net(), training=False)\n"
    assert _rows(_tree(tmp_path, model="Net().eval()", other=OTHER, run=caller)) == [CAPTURE_ROW]
    eval_caller = caller.replace("NAME(Net()", "NAME(Net().eval()")
    assert _rows(_tree(tmp_path / "e", model="Net().eval()", other=OTHER, run=eval_caller)) == []


def test_a_private_method_outside_a_project_is_called_by_its_class(tmp_path):
    assert _rows(_tree(tmp_path / "attr", repository=False, other=OTHER)) == []
    assert _rows(_tree(tmp_path / "eval", model="Net().eval()", repository=False)) == []
    # Its own class passing a train-mode model is the finding.
    assert _rows(_tree(tmp_path / "train", model="Net()", repository=False)) == [CAPTURE_ROW]


def test_a_public_method_outside_a_project_has_unknown_callers(tmp_path):
    # Anyone may call `trainer.wrap_model(m, training=False)`: an eval-mode caller here does
    # not vouch for callers nobody can see, as for a module-level function.
    assert _rows(_tree(tmp_path / "public", name="wrap_model", model="Net().eval()", repository=False)) == [CAPTURE_ROW]
    # Nor for a dunder, which a protocol calls (`trainer(m)` for `__call__`).
    assert _rows(_tree(tmp_path / "dunder", name="__call__", model="Net().eval()", repository=False)) == [CAPTURE_ROW]
    # In a repository, no other module naming it: its calls here are all of them.
    assert _rows(_tree(tmp_path / "repo", name="wrap_model", model="Net().eval()")) == []
