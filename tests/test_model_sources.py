"""QL201/QL202: where the model comes from (issue 14, items 1-4 and 8).

Classes defined inside the function that builds them, classes recognised by resolving them
(`Outer._Net()`, a private class of another module), models held in `self.<attr>`,
factories, and the message naming what makes the mode matter. Each construct has a minimal
example that is found and quiet look-alikes that are right.
"""

from __future__ import annotations

import textwrap

from tests.conftest import alone, lint, write_package

HEAD = """\
import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e
"""


def check(src: str, select=("QL201", "QL202"), **kw):
    kw.setdefault("path", alone())
    return lint(HEAD + textwrap.dedent(src), select=select, **kw)


def ql201_message(src: str) -> str:
    """The message of the one finding `check` gives `src`, which must be QL201's."""
    (d,) = check(src)
    assert d.code == "QL201", d
    return d.message


# A model class whose `__init__` runs one line (`{line}`) and whose forward calls `self.b`.
INIT_NET = """
class Net(nn.Module):
    def __init__(self, c=None):
        super().__init__()
        {line}

    def forward(self, x):
        return self.b(x)
"""


def beside_blocks(tmp_path, blocks: str, imports: str, net: str, capture: str):
    """QL201's findings in a module `quant.py` of a package whose `blocks.py` holds `blocks`:
    `imports`, then `net` with its `{line}` filled in, then `capture`; a function of the line."""
    path = str(write_package(tmp_path, "proj", blocks=blocks) / "quant.py")
    return lambda line: lint(HEAD + imports + net.format(line=line) + capture, path=path, select=("QL201",))


def rows(diagnostics) -> list[tuple[int, str]]:
    return [(d.range.start.row, d.code) for d in diagnostics]


# -- 1. a model class defined inside the function (or test) that builds it --------------------
LOCAL_NET = """
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3)
            self.bn = nn.BatchNorm2d(3)
"""


def test_class_defined_in_the_test_is_a_construction():
    (d,) = check(
        "def test_quantize(quantizer, x):"
        + textwrap.indent(textwrap.dedent(LOCAL_NET), "    ")
        + """
            model = Net()
            prepare_pt2e(export(model, (x,)).module(), quantizer)
        """.replace("\n        ", "\n")
    )
    assert (d.code, d.range.start.row) == ("QL201", 13)
    assert "in train mode (built at line 12, and modules start in train mode)" in d.message
    assert d.message.endswith("; in `Net`, the mode changes BatchNorm2d")


def test_local_class_put_in_eval_mode_is_quiet():
    src = "def test_quantize(quantizer, x):" + textwrap.indent(textwrap.dedent(LOCAL_NET), "    ")
    assert check(src + "    model = Net().eval()\n    prepare_pt2e(export(model, (x,)).module(), quantizer)\n") == []
    assert (
        check(src + "    model = Net()\n    model.eval()\n    prepare_pt2e(export(model, (x,)).module(), quantizer)\n")
        == []
    )


def test_local_class_whose_init_sets_eval_mode_is_quiet():
    assert (
        check(
            """
            def test_quantize(quantizer, x):
                class Net(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.bn = nn.BatchNorm2d(3)
                        self.eval()
                prepare_pt2e(export(Net(), (x,)).module(), quantizer)
            """
        )
        == []
    )


def test_local_class_rebound_by_assignment_is_not_followed():
    # `Net = wrap(Net)`: the name no longer names the class written above.
    assert (
        check(
            """
            def test_quantize(quantizer, x, wrap):
                class net(nn.Module):
                    pass
                net = wrap(net)
                prepare_pt2e(export(net(), (x,)).module(), quantizer)
            """
        )
        == []
    )


# -- 3. class calls recognised by resolving the class -----------------------------------------
def test_nested_and_private_classes_are_constructions():
    found = check(
        """
        class Outer:
            class _Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.drop = nn.Dropout(0.1)

        class _conv_single(nn.Module):
            def forward(self, x):
                return torch.nn.functional.dropout(x, 0.5, self.training)

        def quantize(quantizer, x):
            a = Outer._Net()
            prepare_pt2e(export(a, (x,)).module(), quantizer)
            b = _conv_single()
            prepare_pt2e(export(b, (x,)).module(), quantizer)
            c = Outer._Net()
            c.eval()
            prepare_qat_pt2e(export(c, (x,)).module(), quantizer)
            d = Outer._Net().eval()
            prepare_pt2e(export(d, (x,)).module(), quantizer)
        """
    )
    assert rows(found) == [(18, "QL201"), (20, "QL201"), (23, "QL202")]
    assert found[0].message.endswith("; in `Outer._Net`, the mode changes Dropout")
    assert found[1].message.endswith("; in `_conv_single`, the mode changes code reading `self.training`")
    assert found[2].message.endswith("; in `Outer._Net`, the mode changes Dropout")


def test_private_class_of_another_module_is_resolved(tmp_path):
    pkg = write_package(
        tmp_path,
        "proj",
        models=(
            "from torch import nn\n\n"
            "class _ConvSingle(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.conv = nn.Conv2d(3, 3, 3)\n"
            "        self.bn = nn.BatchNorm2d(3)\n\n"
            "def _build():\n"
            "    return _ConvSingle().eval()\n"
        ),
    )
    src = HEAD + "from proj.models import _ConvSingle, _build\n\n"
    path = str(pkg / "quant.py")
    found = lint(
        src + "def quantize(quantizer, x):\n    prepare_pt2e(export(_ConvSingle(), (x,)).module(), quantizer)\n",
        path=path,
        select=("QL201",),
    )
    assert rows(found) == [(8, "QL201")]
    assert found[0].message.endswith("; in `_ConvSingle`, the mode changes BatchNorm2d")
    # A function of the project that builds the model in eval mode is no class.
    quiet = "def quantize(quantizer, x):\n    prepare_pt2e(export(_build(), (x,)).module(), quantizer)\n"
    assert lint(src + quiet, path=path, select=("QL201",)) == []


def test_attribute_set_from_a_project_function_is_not_a_construction():
    # `Builder` looks like a class by its name but is a function: its result's mode is unknown.
    assert (
        check(
            """
            def Builder():
                return torch.load("model.pt")

            class Quantizer:
                def __init__(self):
                    self.model = Builder()

                def run(self, quantizer, x):
                    prepare_pt2e(export(self.model, (x,)).module(), quantizer)
            """
        )
        == []
    )


# -- 8. the message names what makes the mode matter ------------------------------------------
def test_message_follows_submodules_and_bases_of_project_classes():
    (d,) = check(
        """
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm1d(3)

        class Base(nn.Module):
            def __init__(self):
                super().__init__()
                self.drop = nn.Dropout(0.2)

        class Net(Base):
            def __init__(self):
                super().__init__()
                self.block = Block()
                self.attn = nn.MultiheadAttention(8, 2)
                self.enc = nn.TransformerEncoderLayer(8, 2, dropout=0.0)

        def quantize(quantizer, x):
            prepare_pt2e(export(Net(), (x,)).module(), quantizer)
        """
    )
    assert d.message.endswith("; in `Net`, the mode changes BatchNorm1d and Dropout")


def test_a_model_with_no_mode_dependent_part_is_not_reported():
    # Every part resolves and none reads the mode: train or eval, the graph is the same
    # (more cases in test_mode_free_models.py).
    src = """
        class Net(nn.Module):
            def __init__(self, size):
                super().__init__()
                if size < 1:
                    raise ValueError(size)
                self.lin = nn.Linear(size, size)
                self.rnn = nn.LSTM(size, size, dropout=0)

        def quantize(quantizer, x):
            prepare_pt2e(export(Net(3), (x,)).module(), quantizer)
        """
    assert check(src) == []
    (d,) = check(src.replace("dropout=0", "dropout=0.2"))
    assert d.message.endswith("; in `Net`, the mode changes LSTM (dropout)")


def test_message_says_nothing_about_content_it_cannot_see():
    (d,) = check(
        """
        from somelib import Encoder

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = Encoder()
                self.lin = nn.Linear(3, 3)

        def quantize(quantizer, x):
            prepare_pt2e(export(Net(), (x,)).module(), quantizer)
        """
    )
    assert d.message.endswith("(built at line 15, and modules start in train mode)")


def test_message_reads_an_inline_sequential():
    (d,) = check(
        """
        def quantize(quantizer, x):
            model = nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3), nn.ReLU())
            prepare_pt2e(export(model, (x,)).module(), quantizer)
        """
    )
    assert d.message.endswith("; in `nn.Sequential`, the mode changes BatchNorm2d")


def test_message_follows_a_model_passed_in_by_the_caller():
    (d,) = check(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.drop = nn.Dropout()

        def quantize(model, quantizer, x):
            return prepare_pt2e(export(model, (x,)).module(), quantizer)

        def main(quantizer, x):
            quantize(Net(), quantizer, x)
        """
    )
    assert "the call at line 15 passes it built at line 15" in d.message
    assert d.message.endswith("; in `Net`, the mode changes Dropout")


def test_one_class_built_at_two_calls_is_named_once():
    (d,) = check(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.drop = nn.Dropout()

        def quantize(model, quantizer, x):
            return prepare_pt2e(export(model, (x,)).module(), quantizer)

        def main(quantizer, x):
            quantize(Net(), quantizer, x)
            quantize(Net(), quantizer, x)
        """
    )
    assert d.message.count("in `Net`, the mode changes Dropout") == 1


# -- 2. a model held in `self.<attr>` ---------------------------------------------------------
STORED = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)

class Quantize:
    def __init__(self, model, quantizer, x):
        self.model = model
        self.quantizer, self.x = quantizer, x

    def __enter__(self):
        return prepare_pt2e(export(self.model, (self.x,)).module(), self.quantizer)

    def __exit__(self, *exc):
        return False
"""


def test_model_stored_by_init_and_captured_in_enter_follows_the_instantiation():
    (d,) = check(STORED + "\ndef main(q, x):\n    with Quantize(Net(), q, x) as prepared:\n        prepared(x)\n")
    assert (d.code, d.range.start.row) == ("QL201", 17)
    assert "(the call at line 23 passes it built at line 23, and modules start in train mode)" in d.message
    assert d.message.endswith("; in `Net`, the mode changes BatchNorm2d")


def test_model_stored_by_init_without_instantiation_is_a_parameter():
    (d,) = check(STORED)
    assert "as `self.model`, stored from parameter `model` of `__init__` at line 13" in d.message
    assert d.evidence["reasons"] == ["parameter"]


def test_model_stored_by_init_quiet_look_alikes():
    # Every instantiation passes an eval-mode model.
    assert check(STORED + "\ndef main(q, x):\n    with Quantize(Net().eval(), q, x) as p:\n        p(x)\n") == []
    # `__init__` puts it in eval mode, or hands it to something that may.
    evals = STORED.replace("        self.model = model\n", "        model.eval()\n        self.model = model\n")
    assert check(evals) == []
    handed = STORED.replace("        self.model = model\n", "        self.model = model\n        fuse(model)\n")
    assert check(handed) == []
    # Another method sets its mode, or passes it on where we cannot see what happens.
    evaluated = STORED + "\n    def calibrate(self):\n        self.model.eval()\n"
    assert check(evaluated) == []
    exit_ = "    def __exit__(self, *exc):\n"
    handed_on = STORED.replace(exit_, exit_ + "        prep(self.model)\n")
    assert check(handed_on) == []
    # Rebound in `__init__` before it is stored: not what the caller passed.
    rebound = STORED.replace(
        "        self.model = model\n", "        model = model or default\n        self.model = model\n"
    )
    assert check(rebound) == []
    # Reassigned elsewhere.
    reassigned = STORED.replace("        return False\n", "        self.model = None\n        return False\n")
    assert check(reassigned) == []


def test_model_built_in_init_and_captured_in_a_method():
    src = """
    class Builder:
        def __init__(self):
            self.model = nn.Sequential(nn.Linear(3, 3), nn.Dropout())

        def quantize(self, quantizer, x):
            return prepare_pt2e(export(self.model, (x,)).module(), quantizer)
    """
    (d,) = check(src)
    assert "in train mode (built at line 8, and modules start in train mode)" in d.message
    assert d.message.endswith("; in `nn.Sequential`, the mode changes Dropout")
    assert check(src.replace("nn.Dropout())", "nn.Dropout()).eval()")) == []


# -- 4. factories -------------------------------------------------------------------------------
NETS = """
import pytest

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)

class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

def build_eval():
    return Net().eval()
"""


def test_parametrize_values_are_the_parameter():
    found = check(
        NETS
        + """
@pytest.mark.parametrize("model", [Net(), build_eval()])
def test_quantize(model, quantizer, x):
    prepare_pt2e(export(model, (x,)).module(), quantizer)
"""
    )
    (d,) = found
    assert "in train mode (built at line 21, and modules start in train mode;" in d.message
    assert "parameter" not in d.message and d.message.endswith("; in `Net`, the mode changes BatchNorm2d")


def test_parametrize_values_all_in_eval_mode_are_quiet():
    src = NETS + (
        '@pytest.mark.parametrize("name, model", [("a", Net().eval()), pytest.param("b", build_eval(), id="b")])\n'
        "def test_quantize(name, model, quantizer, x):\n"
        "    prepare_pt2e(export(model, (x,)).module(), quantizer)\n"
    )
    assert check(src) == []


def test_parametrized_factories_called_in_the_test():
    src = NETS + (
        '@pytest.mark.parametrize("make", [lambda: Net(), build_eval, Plain])\n'
        "def test_quantize(make, quantizer, x):\n"
        "    model = make()\n"
        "    prepare_pt2e(export(model, (x,)).module(), quantizer)\n"
    )
    (d,) = check(src)
    assert "(built at line 20, and modules start in train mode;" in d.message
    assert "in `Net`, the mode changes BatchNorm2d" in d.message
    assert "no batch norm, dropout or `self.training` was found in `Plain`" in d.message
    quiet = src.replace("[lambda: Net(), build_eval, Plain]", "[lambda: Net().eval(), build_eval]")
    assert check(quiet) == []


def test_dict_of_factories_called_by_key_and_in_a_loop():
    table = NETS + 'MODELS = {"net": lambda: Net(), "eval": build_eval}\n'
    by_key = (
        table + "def quantize(name, q, x):\n    m = MODELS[name]()\n    prepare_pt2e(export(m, (x,)).module(), q)\n"
    )
    (d,) = check(by_key)
    assert "built at line 20" in d.message and "in `Net`, the mode changes BatchNorm2d" in d.message
    looped = table + (
        "def quantize(q, x):\n"
        "    for name, make_model in MODELS.items():\n"
        "        m = make_model()\n"
        "        prepare_pt2e(export(m, (x,)).module(), q)\n"
    )
    assert rows(check(looped)) == [(24, "QL201")]
    got = table + "def quantize(name, q, x):\n    make = MODELS.get(name)\n    m = make()\n"
    assert rows(check(got + "    prepare_pt2e(export(m, (x,)).module(), q)\n")) == [(24, "QL201")]
    # Every factory evals its model, or the model is put in eval mode after the call.
    assert check(by_key.replace("lambda: Net()", "lambda: Net().eval()")) == []
    assert check(by_key.replace("    m = MODELS[name]()\n", "    m = MODELS[name]()\n    m.eval()\n")) == []


def test_factory_tables_with_an_element_we_cannot_follow_are_unknown():
    table = NETS + 'from zoo import load\nMODELS = {"net": lambda: Net(), "zoo": load}\n'
    src = table + "def quantize(name, q, x):\n    m = MODELS[name]()\n    prepare_pt2e(export(m, (x,)).module(), q)\n"
    assert check(src) == []
    with_param = NETS + "MODELS = [lambda: Net(), lambda size: Net()]\n"
    src = with_param + "def quantize(i, q, x):\n    m = MODELS[i]()\n    prepare_pt2e(export(m, (x,)).module(), q)\n"
    assert check(src) == []


def test_indirect_parametrize_values_go_to_a_fixture():
    src = NETS + (
        '@pytest.mark.parametrize("model", [Net()], indirect=True)\n'
        "def test_quantize(model, quantizer, x):\n"
        "    model.eval()\n"
        "    prepare_pt2e(export(model, (x,)).module(), quantizer)\n"
    )
    assert check(src) == []
    # The parameter is what the fixture returns, not `Net()`: a parameter as before.
    (d,) = check(src.replace("    model.eval()\n", ""))
    assert "as parameter `model`" in d.message and "built at" not in d.message
    # Without `indirect`, the same value is the parameter and its `eval()` is what counts.
    assert check(src.replace(", indirect=True", "")) == []
    (d,) = check(src.replace(", indirect=True", "").replace("    model.eval()\n", ""))
    assert "built at line 20" in d.message


def test_content_of_what_a_wrapper_is_handed():
    found = check(
        """
        class Wrapper(nn.Module):
            def __init__(self, inner, size=3):
                super().__init__()
                self.inner = inner
                self.lin = nn.Linear(size, size)

        def quantize(model, backbone, quantizer, x):
            a = nn.DataParallel(model)
            prepare_pt2e(export(a, (x,)).module(), quantizer)
            b = Wrapper(backbone)
            prepare_pt2e(export(b, (x,)).module(), quantizer)
            c = Wrapper(nn.BatchNorm2d(3), size=4)
            prepare_pt2e(export(c, (x,)).module(), quantizer)
            d = Wrapper(None, -2)
            prepare_pt2e(export(d, (x,)).module(), quantizer)
        """
    )
    messages = [d.message for d in found]
    assert len(messages) == 3  # `d` holds a Linear only: its mode cannot matter
    # What `model` and `backbone` hold is not known: nothing is said about content. `DataParallel`
    # leaves the wrapped model's mode as it is: that is the caller's.
    assert messages[0].endswith("as parameter `model`, in whatever mode the caller left it)")
    assert messages[1].endswith("and modules start in train mode)")
    assert messages[2].endswith("; in `Wrapper`, the mode changes BatchNorm2d")


def test_class_of_a_module_in_a_directory_without_init_is_resolved(tmp_path):
    # ExecuTorch's tests import models from `backends/qualcomm/tests/`, which has no `__init__.py`.
    (tmp_path / ".git").mkdir()
    (tmp_path / "tests" / "common").mkdir(parents=True)
    (tmp_path / "tests" / "quant").mkdir(parents=True)
    models = tmp_path / "tests" / "common" / "models.py"
    net = (
        "from torch import nn\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.conv = nn.Conv2d(3, 3, 3)\n"
        "        self.bn = nn.BatchNorm2d(3)\n"
        "        self.eval()\n"
    )
    models.write_text(net)
    src = HEAD + "from tests.common.models import Net\n\n"
    src += "def test_quantize(quantizer, x):\n    prepare_pt2e(export(Net(), (x,)).module(), quantizer)\n"
    path = str(tmp_path / "tests" / "quant" / "test_q.py")
    # Its `__init__` ends in `self.eval()`: built in eval mode.
    assert lint(src, path=path, select=("QL201",)) == []
    models.write_text(net.replace("        self.eval()\n", ""))
    (d,) = lint(src, path=path, select=("QL201",))
    assert d.message.endswith("; in `Net`, the mode changes BatchNorm2d")
