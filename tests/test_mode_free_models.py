"""QL201/QL202: a capture whose model cannot depend on its mode is not reported.

When every class the captured model can be resolves (local, nested, project classes,
listed torch.nn modules, inline `nn.Sequential`) and none holds batch norm, dropout or
code reading `.training`, the graph is the same in train and eval mode. Anything not
resolved in full (a module from elsewhere, a callable in a variable, `setattr`, an unlisted
torch.nn class or base) keeps the report.
"""

from __future__ import annotations

import textwrap

from tests.test_model_sources import check, ql201_message

CAPTURE = "        prepare_pt2e(export(model, (x,)).module(), quantizer)\n"


def _in_test(classes: str, build: str = "Net()") -> str:
    body = textwrap.indent(textwrap.dedent(classes).strip("\n"), "    ")
    capture = "    prepare_pt2e(export(model, (x,)).module(), quantizer)\n"
    return f"def test_quantize(quantizer, x):\n{body}\n    model = {build}\n{capture}"


# -- quiet: resolved in full, nothing mode-dependent ---------------------------------------------
def test_local_linear_relu_model_is_quiet():
    src = _in_test(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 3)
                self.act = nn.ReLU()

            def init(self):
                for m in self.modules():
                    if isinstance(m, (nn.Linear, nn.BatchNorm1d)):
                        nn.init.zeros_(m.bias)

            def forward(self, x):
                y = torch.flatten(self.act(self.lin(x)), 1)
                return F.relu(y.view(-1))
        """
    )
    src = "import torch.nn.functional as F\n" + src
    assert check(src) == []
    # The same model with a dropout layer is reported, naming it.
    assert ql201_message(src.replace("nn.ReLU()", "nn.Dropout(0.5)")).endswith("; in `Net`, the mode changes Dropout")


def test_nested_class_with_a_conv_only_is_quiet():
    src = (
        """
        class Outer:
            class _Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 3, 3)

        def quantize(quantizer, x):
            model = Outer._Net()
    """
        + CAPTURE
    )
    assert check(src) == []
    message = ql201_message(src.replace("self.conv = nn.Conv2d(3, 3, 3)", "self.conv = nn.RReLU()"))
    assert message.endswith("; in `Outer._Net`, the mode changes RReLU")


def test_inline_sequential_and_torch_nn_leaf_are_quiet():
    assert check(_in_test("", "nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))")) == []
    assert check(_in_test("", "torch.nn.Linear(3, 3)")) == []
    assert check(_in_test("", "nn.InstanceNorm2d(3)")) == []
    message = ql201_message(_in_test("", "nn.InstanceNorm2d(3, track_running_stats=True)"))
    assert message.endswith("; in `nn.InstanceNorm2d`, the mode changes InstanceNorm2d")


def test_layers_built_by_a_function_of_the_module():
    src = (
        """
        def make_layers(sizes):
            return nn.Sequential(*[nn.Linear(a, b) for a, b in zip(sizes, sizes[1:])])

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = make_layers([3, 4, 5])

        def quantize(quantizer, x):
            model = Net()
    """
        + CAPTURE
    )
    assert check(src) == []
    message = ql201_message(src.replace("nn.Linear(a, b)", "nn.BatchNorm1d(b)"))
    assert message.endswith("; in `Net`, the mode changes BatchNorm1d")


def test_a_parameter_every_caller_builds_mode_free_is_quiet():
    src = """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 3)

        def quantize(model, quantizer, x):
            return prepare_pt2e(export(model, (x,)).module(), quantizer)

        def main(quantizer, x, other):
            quantize(Net(), quantizer, x)
    """
    assert check(src) == []
    # Bound to a name first, and the helper hands its other parameters on: still that model.
    named = src.replace("quantize(Net(), quantizer, x)", "m = Net()\n            quantize(m, quantizer, x)")
    named = named.replace("return prepare_pt2e(", "prepared = prepare_pt2e(").replace(
        "quantizer)\n\n        def main", "quantizer)\n            prepared(x)\n\n        def main"
    )
    assert "prepared(x)" in named and check(named) == []
    # A part added by the helper after its capture is not in the graph: every caller is read
    # (a project of its own: under qlint's repository this was reported, its callers unknown).
    assert check(named.replace("prepared(x)", "prepared(x)\n            model.head = x")) == []
    # One added before the call may hold anything.
    assert len(check(named.replace("m = Net()", "m = Net()\n            m.head = x"))) == 1
    # A caller passing a model we cannot see: the mode may matter.
    assert len(check(src + "            quantize(other, quantizer, x)\n")) == 1


def test_a_parameter_whose_callers_pass_eval_or_mode_free_models_is_quiet():
    # Callers either switch a batch-norm model to eval or pass a bare conv: none is harmful.
    src = """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm1d(3)

        def quantize(model, quantizer, x):
            return prepare_pt2e(export(model, (x,)).module(), quantizer)

        def test_eval(quantizer, x):
            quantize(Net().eval(), quantizer, x)

        def test_conv(quantizer, x):
            m = nn.Conv2d(3, 3, 3)
            quantize(m, quantizer, x)
    """
    assert check(src) == []
    # The train-mode caller's model holds dropout: reported, naming that caller and the part.
    (d,) = check(src.replace("nn.Conv2d(3, 3, 3)", "nn.Sequential(nn.Conv2d(3, 3, 3), nn.Dropout())"))
    assert d.code == "QL201" and "the call at line 19 passes it built at line 18" in d.message
    assert d.message.endswith("; in `nn.Sequential`, the mode changes Dropout")
    # The batch-norm model passed without `.eval()`: reported.
    assert len(check(src.replace("Net().eval()", "Net()"))) == 1


def test_weights_set_through_tensor_data_by_a_helper_from_elsewhere_are_quiet():
    # `.data` takes tensors only: the unseen helper cannot put a module in the model.
    src = "from tests_utils import random_tensor\n" + _in_test(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 3)
                self.lin.weight.data = random_tensor(self.lin.weight.shape, -1, 1)
        """
    )
    assert check(src) == []
    message = ql201_message(
        src.replace("self.lin = nn.Linear(3, 3)", "self.lin = nn.Sequential(nn.Linear(3, 3), nn.Dropout())")
    )
    assert message.endswith("; in `Net`, the mode changes Dropout")
    # Stored anywhere else, or handed the model itself, the helper's result may be a module.
    assert len(check(src.replace("self.lin.weight.data =", "self.head ="))) == 1
    assert len(check(src.replace("random_tensor(self.lin", "random_tensor(self, self.lin"))) == 1


def test_qat_capture_in_eval_mode_of_a_mode_free_model_is_quiet():
    src = """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 3, 3)

        def quantize(quantizer, x):
            model = Net().eval()
            prepare_qat_pt2e(export(model, (x,)).module(), quantizer)
    """
    assert check(src) == []
    (d,) = check(src.replace("nn.Conv2d(3, 3, 3)", "nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3))"))
    assert d.code == "QL202" and d.message.endswith("; in `Net`, the mode changes BatchNorm2d")


# -- found: a mode-dependent part, or a part that does not resolve -------------------------------
def test_batch_norm_in_a_nested_submodule_is_named():
    src = _in_test(
        """
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 3, 3)
                self.bn = nn.BatchNorm2d(3)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([Block() for _ in range(2)])
        """
    )
    assert ql201_message(src).endswith("; in `Net`, the mode changes BatchNorm2d")


def test_dropout_in_a_base_class_is_named():
    src = _in_test(
        """
        class Base(nn.Module):
            def __init__(self):
                super().__init__()
                self.drop = nn.Dropout(0.1)

        class Net(Base):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 3)
        """
    )
    assert ql201_message(src).endswith("; in `Net`, the mode changes Dropout")
    # A torch.nn base is read like a submodule.
    based = _in_test("class Net(nn.BatchNorm2d):\n    pass\n", "Net(3)")
    assert ql201_message(based).endswith("; in `Net`, the mode changes BatchNorm2d")


LINEAR_NET = """
class Net({base}):
    def __init__(self, norm=None, cfg=()):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        {line}
"""


def test_parts_that_do_not_resolve_keep_the_report_without_a_content_note():
    unresolved = [
        "self.layers = make_layers(cfg)",  # a function from elsewhere
        "self.norm = norm(3)",  # a callable held in a parameter
        "setattr(self, 'extra', norm)",  # an attribute set with a value not built here
        "self.rest = nn.ModuleList(map(norm, cfg))",  # a module list of unresolved things
        "self.pool = nn.FractionalMaxPool2d(3, output_size=2)",  # a torch.nn class not in the table
    ]
    for line in unresolved:
        classes = "from somelib import make_layers\n" + LINEAR_NET.format(base="nn.Module", line=line)
        assert ql201_message(_in_test(classes)).endswith("modules start in train mode)"), line
    # A torch.nn class handed over to be built later is read as built with unknown arguments.
    classes = LINEAR_NET.format(base="nn.Module", line="self.make = functools.partial(nn.BatchNorm2d, eps=0.1)")
    assert ql201_message(_in_test("import functools\n" + classes)).endswith("; in `Net`, the mode changes BatchNorm2d")
    # Dropout passed by position, not as a constant: it may be non-zero.
    classes = LINEAR_NET.format(base="nn.Module", line="self.mha = nn.MultiheadAttention(4, 2, cfg)")
    assert ql201_message(_in_test(classes)).endswith("; in `Net`, the mode changes MultiheadAttention (dropout)")
    assert check(_in_test(classes.replace("(4, 2, cfg)", "(4, 2, 0.0)"))) == []
    # A base class from elsewhere, or its own `train()`, is not resolved in full either.
    foreign = "from somelib import Base\n" + LINEAR_NET.format(base="Base", line="pass")
    assert ql201_message(_in_test(foreign)).endswith("modules start in train mode)")
    own_train = LINEAR_NET.format(base="nn.Module", line="pass") + "\n    def train(self, mode=True):\n        pass\n"
    assert ql201_message(_in_test(own_train)).endswith("modules start in train mode)")
    # Reading another module's `.training` is mode-dependent code we do not follow.
    other = LINEAR_NET.format(base="nn.Module", line="self.flag = self.lin.training")
    assert ql201_message(_in_test(other)).endswith("modules start in train mode)")


def test_dropout_built_with_p_zero_is_mode_free():
    # At p=0 each dropout class is the identity in train mode too (torch 2.13, eager and exported).
    for line in ["self.drop = nn.Dropout(0.0)", "self.drop = nn.Dropout(p=0)", "self.drop = nn.Dropout2d(0)"]:
        assert check(_in_test(LINEAR_NET.format(base="nn.Module", line=line))) == [], line
    # The default p is 0.5; a p not written as a constant may be anything.
    for line in ["self.drop = nn.Dropout()", "self.drop = nn.Dropout(0.1)", "self.drop = nn.AlphaDropout(p=cfg)"]:
        classes = LINEAR_NET.format(base="nn.Module", line=line)
        assert ql201_message(_in_test(classes)).endswith("Dropout"), line


def test_a_model_given_parts_after_it_is_built_is_reported():
    src = _in_test(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 3)
        """
    )
    assert check(src) == []
    changed = ["model.head = head(x)", "model[0] = head(x)", "setattr(model, 'head', head(x))", "model.apply(head)"]
    for line in changed:
        text = src.replace("    prepare_pt2e(", f"    {line}\n    prepare_pt2e(")
        assert ql201_message(text).endswith("modules start in train mode)"), line
    # Handed to a call that may give it parts: a helper of the module is read, others are not.
    helper = "\ndef swap(model, head):\n    setattr(model, 'lin', head)\n"
    swapped = src.replace("    prepare_pt2e(", "    swap(model, x)\n    prepare_pt2e(") + helper
    assert ql201_message(swapped).endswith("modules start in train mode)")
    assert ql201_message(src.replace("    prepare_pt2e(", "    swap_layers(model)\n    prepare_pt2e(")).endswith(
        "mode)"
    )
    reads = "\ndef swap(model, head):\n    print(model.lin, head)\n"
    assert check(src.replace("    prepare_pt2e(", "    swap(model, x)\n    prepare_pt2e(") + reads) == []
    # The same name given parts in another function is another object.
    other = "\ndef other(model, head):\n    model.head = head\n"
    assert check(src + other) == []
    # Switching its mode or moving it adds nothing.
    assert check(src.replace("    prepare_pt2e(", "    model.to('cpu')\n    model.train()\n    prepare_pt2e(")) == []


def test_a_constant_set_on_a_model_gives_it_no_part():
    """`model.model_name = "vit"` (dgcnz/edge) sets a string; a value that may be a module
    still counts as a part given."""
    src = _in_test(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 3)
        """
    )
    for line in ['model.model_name = "vit"', "model.scale = 2.0", 'model.tag = f"net{x}"', "model.head = None"]:
        assert check(src.replace("    prepare_pt2e(", f"    {line}\n    prepare_pt2e(")) == [], line
    for line in ["model.head = nn.Dropout(0.5)", "model.head = NAME", 'model["head"] = "vit"']:
        text = src.replace("    prepare_pt2e(", f"    {line}\n    prepare_pt2e(")
        assert [d.code for d in check(text)] == ["QL201"], line


def test_parts_given_to_a_model_bound_with_an_annotation_are_seen():
    """`net: Net = Net()` at module level, given a dropout, then handed to a helper that
    captures it: the annotated binding is the construction's as `net = Net()` is."""
    src = """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 3)

        def export_and_quantize(model, example):
            return prepare_pt2e(export(model, example).module(), None)

        net: Net = Net()
        net.head = nn.Dropout(0.5)
        export_and_quantize(net, (torch.randn(1, 3),))
    """
    assert [d.code for d in check(src)] == ["QL201"]
    assert check(src.replace("net.head = nn.Dropout(0.5)", 'net.model_name = "net"')) == []


FLAG_NET = """
    class Net(nn.Module):
        def __init__(self, use_bias, permute=False, extra=None):
            super().__init__()
            self.lin = nn.Linear(4, 4, use_bias)
            self.out = nn.Linear(4, 4, bias=use_bias)
            self.permute = permute
            self.extra = None
            if extra is not None and not permute:
                self.extra = extra

        def forward(self, x):
            if self.permute:
                x = x.permute(0, 2, 1)
            x = self.out(self.lin(x))
            return x if self.extra is None else self.extra(x)
"""


def test_a_value_the_class_only_gives_layers_or_tests_is_not_a_module():
    # `use_bias` from a loop: unknown, but `__init__` hands it only to torch.nn layers.
    looped = _in_test(FLAG_NET, "Net(use_bias=flag)")
    looped = looped.replace("    model =", "    for flag in flags():\n        model =")
    looped = looped.replace("\n    prepare_pt2e(", "\n        prepare_pt2e(")
    assert check(looped) == []
    assert check(_in_test(FLAG_NET, "Net(x.flag)")) == []  # by position
    assert check(_in_test(FLAG_NET, "Net(x.flag, permute=True)")) == []
    # `permute` is stored, but the methods only test `self.permute`: a module handed in there
    # would never run (zentorch's `Model(m, n, mul_arg_pos, add_arg_pos)` compared in forward).
    assert check(_in_test(FLAG_NET, "Net(x.flag, x.other)")) == []
    # A parameter `__init__` never reads holds nothing.
    unused = FLAG_NET.replace("extra=None):", "extra=None, spare=None):")
    assert check(_in_test(unused, "Net(x.flag, spare=x.head)")) == []


def test_a_positional_only_self_binds_the_same_parameters():
    # `def __init__(self, /, use_bias, ...)`: a keyword still binds `use_bias` (only `self` is
    # positional-only), and `self.permute = permute` still stores on the instance.
    only = FLAG_NET.replace("def __init__(self, use_bias,", "def __init__(self, /, use_bias,")
    assert only != FLAG_NET
    assert check(_in_test(only, "Net(use_bias=x.flag)")) == []
    assert check(_in_test(only, "Net(x.flag, permute=x.other)")) == []
    assert ql201_message(_in_test(only, "Net(True, extra=x.head)")).endswith("modules start in train mode)")


def test_a_value_the_class_may_keep_as_a_module_keeps_the_report():
    # `extra` is stored and called by `forward`: it may be a module (a dropout) handed in.
    assert ql201_message(_in_test(FLAG_NET, "Net(True, extra=x.head)")).endswith("modules start in train mode)")
    assert ql201_message(_in_test(FLAG_NET, "Net(True, False, x.head)")).endswith("modules start in train mode)")
    # Positions after `*args`, keywords through `**kwargs` or not named by `__init__`: unknown.
    assert ql201_message(_in_test(FLAG_NET, "Net(*x.args, True)")).endswith("modules start in train mode)")
    assert ql201_message(_in_test(FLAG_NET, "Net(True, **x.kw)")).endswith("modules start in train mode)")
    assert ql201_message(_in_test(FLAG_NET, "Net(True, other=x.flag)")).endswith("modules start in train mode)")
    # Kept through `or` (`self.head = flag or default`), passed to a container, or to a callable
    # that is not a torch.nn layer: may be a module.
    kept = [
        "self.head = use_bias or nn.Identity()",
        "self.seq = nn.Sequential(use_bias)",
        "self.head = build(use_bias)",
        "self.extra = use_bias",  # stored whole where `forward` calls it
    ]
    for line in kept:
        classes = "from somelib import build\n" + textwrap.dedent(FLAG_NET.replace("self.permute = permute", line))
        assert ql201_message(_in_test(classes, "Net(x.flag)")).endswith("modules start in train mode)"), line
    # The same flags with a batch norm: still reported, naming it.
    bn = FLAG_NET.replace("self.out = nn.Linear(4, 4, bias=use_bias)", "self.out = nn.BatchNorm1d(4, affine=use_bias)")
    assert ql201_message(_in_test(bn, "Net(x.flag)")).endswith("; in `Net`, the mode changes BatchNorm1d")
