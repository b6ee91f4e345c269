"""QL201: the model a registry-selected class hands back, read by the key the caller passes
(issue 14; Samsung TICO's GPTQ tests: `prepare(q_m, GPTQConfig())` then `prepare(q_m,
PT2EConfig())` through the same public entry).

The entry dispatches on the config's class; what its first dispatch returns is the model the
GPTQ quantizer's `@torch.no_grad()` method was given, in the mode it came in. That holds only
when the registry is closed, the key selects one class, and that class's method returns its
parameter unswitched under nothing but a mode-neutral decorator resolved by import.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import check_file, package_repository, rows_of
from tests.test_ql201_decorator_registry import API, CAPTURE_ROW, CONFIGS, MODELS, PT2E, REGISTRY

GPTQ = """\
import torch

from pkg.configs import GPTQConfig
from pkg.registry import register_quantizer


@register_quantizer(GPTQConfig)
class GPTQQuantizer:
    def __init__(self, config):
        self.config = config

    @torch.no_grad()
    def prepare(self, model, args=None, kwargs=None):
        model.forward = lambda *a, **k: None
        return model
"""

CALLERS = """\
import torch

from pkg.api import prepare
from pkg.configs import GPTQConfig, PT2EConfig
from pkg.models import ConvBn


def test_gptq_then_pt2e():
    q_m = ConvBn()
    q_m.eval()
    q_m = prepare(q_m, GPTQConfig(show_progress=False))
    q_m = prepare(q_m, PT2EConfig(), args=(torch.randn(1, 3, 8, 8),), inplace=False)
"""


def _rows(tmp_path: Path, gptq: str = GPTQ, callers: str = CALLERS, **more: str) -> list[int]:
    modules = dict(registry=REGISTRY, configs=CONFIGS, pt2e=PT2E, gptq=gptq, api=API, models=MODELS)
    modules.update(callers=callers, **more)
    root = package_repository(tmp_path / "repo", **modules)
    return rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics)


def test_an_eval_mode_model_handed_back_by_a_no_grad_method_is_quiet(tmp_path):
    assert _rows(tmp_path) == []


def test_the_method_inherited_from_another_module_is_read(tmp_path):
    # FPI-GPTQ: a subclass in its own module, under its own key, running the base's prepare.
    configs = CONFIGS + "\n\nclass FPIGPTQConfig(GPTQConfig):\n    pass\n"
    fpi = """\
from pkg.configs import FPIGPTQConfig
from pkg.gptq import GPTQQuantizer
from pkg.registry import register_quantizer


@register_quantizer(FPIGPTQConfig)
class FPIGPTQQuantizer(GPTQQuantizer):
    pass
"""
    callers = CALLERS.replace("GPTQConfig, PT2EConfig", "FPIGPTQConfig, PT2EConfig").replace(
        "GPTQConfig(show_progress=False)", "FPIGPTQConfig()"
    )
    modules = dict(registry=REGISTRY, configs=configs, pt2e=PT2E, gptq=GPTQ, api=API, models=MODELS, fpi=fpi)
    root = package_repository(tmp_path / "repo", callers=callers, **modules)
    assert rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics) == []


def test_a_method_that_trains_its_argument_is_reported(tmp_path):
    gptq = GPTQ.replace("        return model\n", "        model.train()\n        return model\n")
    assert gptq != GPTQ
    assert _rows(tmp_path, gptq) == [CAPTURE_ROW]


def test_a_method_that_returns_a_fresh_model_is_reported(tmp_path):
    gptq = GPTQ.replace("        return model\n", "        return ConvBn()\n").replace(
        "from pkg.registry", "from pkg.models import ConvBn\nfrom pkg.registry"
    )
    assert gptq != GPTQ
    assert _rows(tmp_path, gptq) == [CAPTURE_ROW]


def test_a_train_mode_model_handed_back_is_reported(tmp_path):
    callers = CALLERS.replace("    q_m.eval()\n", "")
    assert callers != CALLERS
    assert _rows(tmp_path, callers=callers) == [CAPTURE_ROW]


def test_an_open_registry_is_reported(tmp_path):
    other = "from pkg import registry\n\nregistry._REGISTRY.clear()\n"
    assert _rows(tmp_path, other=other) == [CAPTURE_ROW]


def test_a_second_class_under_the_same_key_is_reported(tmp_path):
    # Two classes registered under the GPTQ config: the one imported last wins, and it trains.
    other = """\
from pkg.configs import GPTQConfig
from pkg.registry import register_quantizer


@register_quantizer(GPTQConfig)
class Trainer:
    def __init__(self, config):
        self.config = config

    def prepare(self, model, args=None, kwargs=None):
        return model.train()
"""
    assert _rows(tmp_path, other=other) == [CAPTURE_ROW]


def test_an_unknown_decorator_is_reported(tmp_path):
    # Spelled like torch's, resolved to the project's own: it may do anything to the model.
    gptq = GPTQ.replace("import torch\n", "from pkg.contexts import no_grad\n").replace(
        "@torch.no_grad()", "@no_grad()"
    )
    contexts = "def no_grad():\n    def wrap(f):\n        return f\n\n    return wrap\n"
    assert _rows(tmp_path, gptq, contexts=contexts) == [CAPTURE_ROW]


def test_a_decorator_with_arguments_is_reported(tmp_path):
    # `torch.inference_mode(mode)`: not known to leave the gradient context alone, nor needed here.
    gptq = GPTQ.replace("@torch.no_grad()", "@torch.inference_mode(False)")
    assert _rows(tmp_path, gptq) == [CAPTURE_ROW]


QUANTIZER = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from pkg.models import ConvBn


class Quantizer:
    DECORATOR
    def prepare(self, model, args):
        model = torch.export.export(model, args).module()
        return prepare_pt2e(model, object())


def test_quantize():
    Quantizer().prepare(ConvBn().eval(), (torch.randn(1, 3, 8, 8),))
"""
QUANTIZER_ROW = next(i for i, line in enumerate(QUANTIZER.splitlines(), 1) if "torch.export.export(model" in line)


def _method_rows(tmp_path: Path, decorator: str, caller_eval: bool = True) -> list[int]:
    text = QUANTIZER.replace("DECORATOR", decorator)
    if not caller_eval:
        text = text.replace("ConvBn().eval()", "ConvBn()")
    root = package_repository(tmp_path / "repo", models=MODELS, quantizer=text)
    return rows_of(check_file(root / "pkg" / "quantizer.py", ("QL201",)).diagnostics)


def test_a_no_grad_method_called_on_an_instance_is_read(tmp_path):
    # Its only caller hands it an eval-mode model.
    assert _method_rows(tmp_path, "@torch.no_grad()") == []
    assert _method_rows(tmp_path / "inference", "@torch.inference_mode()") == []


def test_a_no_grad_method_given_a_train_mode_model_is_reported(tmp_path):
    assert _method_rows(tmp_path, "@torch.no_grad()", caller_eval=False) == [QUANTIZER_ROW]


def test_a_method_under_another_decorator_is_not_read(tmp_path):
    # A project decorator named like torch's: it may wrap the method in anything, so the call
    # is left unread and the method's capture is judged as if its callers were unknown.
    contexts = "def no_grad():\n    def wrap(f):\n        return f\n\n    return wrap\n"
    text = QUANTIZER.replace("DECORATOR", "@no_grad()").replace(
        "import torch\n", "import torch\n\nfrom pkg.contexts import no_grad\n"
    )
    root = package_repository(tmp_path / "repo", models=MODELS, quantizer=text, contexts=contexts)
    row = next(i for i, line in enumerate(text.splitlines(), 1) if "torch.export.export(model" in line)
    assert rows_of(check_file(root / "pkg" / "quantizer.py", ("QL201",)).diagnostics) == [row]


def test_a_no_grad_method_the_registry_dispatches_to_is_read(tmp_path):
    # The capturing class's own method under `@torch.no_grad()`: its callers are the entry's.
    pt2e = PT2E.replace("    def prepare(self", "    @torch.no_grad()\n    def prepare(self")
    assert pt2e != PT2E
    modules = dict(registry=REGISTRY, configs=CONFIGS, pt2e=pt2e, gptq=GPTQ, api=API, models=MODELS)
    root = package_repository(tmp_path / "quiet", callers=CALLERS, **modules)
    assert rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics) == []
    train = CALLERS.replace("    q_m.eval()\n", "")
    root = package_repository(tmp_path / "loud", callers=train, **modules)
    assert rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics) == [CAPTURE_ROW + 1]


DOUBLE = """\
from pkg.configs import KEY
from pkg.registry import register_quantizer


class _Fake:
    def __init__(self, config):
        self.config = config

    def prepare(self, model, args=None, kwargs=None):
        return model.train()


def test_registry():
    register_quantizer(KEY)(_Fake)
"""


def test_a_test_double_registered_by_hand_under_its_own_key_is_quiet(tmp_path):
    configs = CONFIGS + "\n\nclass FakeConfig:\n    pass\n"
    other = DOUBLE.replace("KEY", "FakeConfig")
    modules = dict(registry=REGISTRY, configs=configs, pt2e=PT2E, gptq=GPTQ, api=API, models=MODELS)
    root = package_repository(tmp_path / "repo", callers=CALLERS, other=other, **modules)
    assert rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics) == []


def test_a_test_double_registered_by_hand_under_the_key_is_reported(tmp_path):
    # It may replace the GPTQ quantizer when that test runs first: its prepare trains the model.
    assert _rows(tmp_path, other=DOUBLE.replace("KEY", "GPTQConfig")) == [CAPTURE_ROW]
