"""QL201: a project class wrapping the modules it is given is in their modes (`given_modes`).

`def export_it(model, x): return torch.export.export(W(model, 3), (x,))`, `W` storing
`self.model = model` beside a buffer: the helper's parameter counted as a module "built in
train mode" at `W(...)`, whatever its callers passed (voyager-compiler's
`TorchExportableModuleWithStaticCache`, test_codegen.py:609). The construction now takes the
parameter's mode, which each caller binds: quiet for an evaled model, loud naming batch norm
for a train-mode one, "in whatever mode the caller left it" without callers. A wrapper with a
Dropout of its own, or whose `__init__` switches modes, is in train mode whatever it is given
(`W(Net().eval())` was judged eval).
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint
from tests.test_mode_free_helper_arguments import NET

HEAD = (
    """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
from elsewhere import Cache


"""
    + NET
    + """

class W(nn.Module):
    def __init__(self, model, n):
        super().__init__()
        self.model = model
        self.register_buffer("cache", torch.zeros(n))

    def forward(self, x):
        return self.model(x) + self.cache


class Cached(nn.Module):
    def __init__(self, model, n):
        super().__init__()
        self.model = model
        self.cache = Cache(n)

    def forward(self, x):
        return self.model(x)


class Dropped(nn.Module):
    def __init__(self, model, n=3):
        super().__init__()
        self.model = model
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.model(x))


class Trained(nn.Module):
    def __init__(self, model, n=3):
        super().__init__()
        self.model = model
        self.train()

    def forward(self, x):
        return self.model(x)


class Switched(nn.Module):
    def __init__(self, model, n=3):
        super().__init__()
        self.model = model.train()

    def forward(self, x):
        return self.model(x)


def export_it(model, x):
    return torch.export.export({wrapper}(model, 3), (x,))


def run(q, x):
"""
)


def ql201(body: str, wrapper: str = "W") -> list[str]:
    src = HEAD.replace("{wrapper}", wrapper) + textwrap.indent(textwrap.dedent(body), "    ")
    return [d.message for d in lint(src, select=("QL201",)) if d.code == "QL201"]


HELPER = "prepare_pt2e(export_it(model, x).module(), q)\n"


def test_a_wrapper_of_the_helpers_parameter_takes_the_mode_its_callers_pass():
    for wrapper in ("W", "Cached"):  # `Cache` of a package not read: nothing found, as for a local
        for body in ("model = Net().eval()\n", "model = Net()\nmodel.eval()\n"):
            assert ql201(body + HELPER, wrapper) == [], (wrapper, body)


def test_a_train_mode_model_passed_to_the_wrapping_helper_is_reported_naming_its_part():
    (message,) = ql201("model = Net()\n" + HELPER)
    assert "captured for PTQ in train mode" in message
    assert "in `Net`, the mode changes BatchNorm1d" in message


def test_a_wrapping_helper_without_callers_is_reported_as_a_parameter():
    src = HEAD.replace("{wrapper}", "W") + "    pass\n\n\ndef cap(model, x, q):\n    " + HELPER
    (message,) = [d.message for d in lint(src, select=("QL201",)) if d.code == "QL201"]
    assert "in whatever mode the caller left it" in message


def test_a_wrapper_with_its_own_dropout_or_switch_is_in_train_mode_whatever_it_is_given():
    for wrapper, part in (("Dropped", "Dropout"), ("Trained", "BatchNorm1d"), ("Switched", "BatchNorm1d")):
        (message,) = ql201("model = Net().eval()\n" + HELPER, wrapper)
        assert "captured for PTQ in train mode" in message, wrapper
        assert wrapper != "Dropped" or "in `Dropped`, the mode changes Dropout" in message
        for body in (
            f"prepare_pt2e(torch.export.export({wrapper}(Net().eval()), (x,)).module(), q)\n",
            f"n = Net().eval()\nprepare_pt2e(torch.export.export({wrapper}(n), (x,)).module(), q)\n",
        ):
            (message,) = ql201(body, wrapper)
            assert f"in `{wrapper}`, the mode changes" in message and part in message, (wrapper, body)


def test_a_mode_free_wrapper_of_a_local_evaled_model_stays_quiet():
    for wrapper in ("W", "Cached"):
        for body in (
            f"prepare_pt2e(torch.export.export({wrapper}(Net().eval(), 3), (x,)).module(), q)\n",
            f"n = Net().eval()\nprepare_pt2e(torch.export.export({wrapper}(n, 3), (x,)).module(), q)\n",
        ):
            assert ql201(body, wrapper) == [], (wrapper, body)


PAIRS = """

class Holder(nn.Module):
    def __init__(self, body, head):
        super().__init__()
        self.body = body
        self.head = head

    def forward(self, x):
        return self.head(self.body(x))


class DroppedHolder(Holder):
    def __init__(self, body, head):
        super().__init__(body, head)
        self.drop = nn.Dropout(0.1)


class TrainedHolder(nn.Module):
    def __init__(self, body, head):
        super().__init__()
        self.body = body.train()
        self.head = head

    def forward(self, x):
        return self.head(self.body(x))


def run_pairs(q, x):
"""
CAPTURE = "prepare_pt2e(torch.export.export(model, (x,)).module(), q)\n"


def pairs(body: str) -> list[str]:
    src = HEAD.replace("{wrapper}", "W") + "    pass\n" + PAIRS + textwrap.indent(body + CAPTURE, "    ")
    return [d.message for d in lint(src, select=("QL201",)) if d.code == "QL201"]


def test_a_project_container_of_evaled_modules_beside_mode_free_ones_is_quiet():
    # Read as `nn.Sequential(net.eval(), head)` is: it stores what it is given, as it came.
    for body in (
        "model = Holder(Net().eval(), nn.Linear(3, 3))\n",
        "net = Net()\nmodel = Holder(net.eval(), nn.Linear(3, 3))\n",
        "n = Net().eval()\nmodel = Holder(n, nn.Linear(3, 3))\n",
    ):
        assert pairs(body) == [], body


def test_a_project_container_with_a_train_mode_part_a_part_of_its_own_or_a_switch_is_reported():
    for body in (
        "model = Holder(Net().eval(), Net())\n",
        "model = DroppedHolder(Net().eval(), nn.Linear(3, 3))\n",
        "model = TrainedHolder(Net().eval(), nn.Linear(3, 3))\n",
        "n = Net().eval()\nmodel = Holder(n, nn.Linear(3, 3))\nn.train()\n",
        "model = Holder(Net().eval(), nn.Linear(3, 3))\nmodel.train()\n",
        "n = Net().eval()\nmodel = Holder(n, nn.Linear(3, 3))\nfinetune(n)\n",
    ):
        assert len(pairs(body)) == 1, body


def test_a_parameter_the_class_keeps_but_never_runs_is_no_module_it_wraps():
    # `self.cfg = cfg` beside layers of a package not read: a config, so the construction
    # starts in train mode at its line, whatever the call passes (not "as parameter `cfg`").
    src = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
from hub import make_layers


class LLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.layers = make_layers(cfg)

    def forward(self, x):
        return self.layers(x)


def build(cfg):
    return LLM(cfg)


def run(q, x, load_cfg):
    model = build(ARG)
    prepare_pt2e(torch.export.export(model, (x,)).module(), q)
"""
    for arg in ("{'dim': 3}", "load_cfg()", "3"):
        (d,) = [d for d in lint(src.replace("ARG", arg), select=("QL201",)) if d.code == "QL201"]
        assert "built at line 18, and modules start in train mode" in d.message, arg


INSTALLED_PART = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
from fakeinstalled.blocks import Block


class Lin(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)


class WB(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.block = Block()

    def forward(self, x):
        return self.block(self.model(x))


def run(q, x):
    first = WB(Lin().eval())
    prepare_pt2e(torch.export.export(first, (x,)).module(), q)
    second = WB(Lin())
    prepare_pt2e(torch.export.export(second, (x,)).module(), q)
"""


def test_an_installed_part_is_read_for_a_capture_after_a_wrapper_was_asked_without_it(tmp_path, monkeypatch):
    # `keeps_given_modes` reads the wrapper's own content without installed packages' sources
    # (memory); that answer must not stand in for the capture's full read of the same class.
    from qlint.analysis.flow import installed_classes

    site = tmp_path / "site-packages"
    (site / "fakeinstalled").mkdir(parents=True)
    (site / "fakeinstalled" / "__init__.py").touch()
    (site / "fakeinstalled" / "blocks.py").write_text(
        "import torch\n\n\nclass Block(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.drop = torch.nn.Dropout(0.1)\n"
    )
    monkeypatch.setattr(installed_classes, "site_dirs", lambda: (str(site),))
    found = [d for d in lint(INSTALLED_PART, select=("QL201",)) if d.code == "QL201"]
    assert [d.range.start.row for d in found] == [27], [d.message for d in found]
    assert "Dropout" in found[0].message, found[0].message
