"""QL201: a method that captures its parameter, reached through a registry a class decorator
fills (issue 14; Samsung TICO's `@register_quantizer(PT2EConfig)` and `prepare(model, config)`).

The public entry looks a quantizer class up by the type of the config it is handed
(`REGISTRY.get(type(config))`, in a lookup helper of the registry's module) and calls its
`prepare(model)`. Which class runs is the registry's entry for the caller's config class: a
caller that passes another config never reaches the capture, a caller that passes the config
of the capturing class (or one whose class is not known) does, and what it passes decides.
A registry something else writes, or that another module names, or whose decorator is used
otherwise, keeps every caller of the entry a caller of the capture.
"""

from __future__ import annotations

from pathlib import Path

from qlint.analysis.names.project import ProjectIndex
from tests.conftest import check_file, package_repository, rows_of
from tests.snippets import CONV_BN_MODULE as MODELS

REGISTRY = """\
from typing import Dict, Optional, Type

_REGISTRY: Dict[type, type] = {}


def register_quantizer(config_cls):
    def wrapper(quantizer_cls):
        _REGISTRY[config_cls] = quantizer_cls
        return quantizer_cls

    return wrapper


def _lookup(cfg) -> Optional[type]:
    return _REGISTRY.get(type(cfg))


def get_quantizer(cfg):
    qcls = _lookup(cfg)
    if qcls is not None:
        return qcls(cfg)
    raise RuntimeError(f"no quantizer for {type(cfg).__name__}")
"""

CONFIGS = """\
class PT2EConfig:
    pass


class GPTQConfig:
    def __init__(self, show_progress=True):
        self.show_progress = show_progress
"""

PT2E = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from pkg.configs import PT2EConfig
from pkg.registry import register_quantizer


@register_quantizer(PT2EConfig)
class PT2EQuantizer:
    def __init__(self, config):
        self.config = config

    def prepare(self, model, args=None, kwargs=None):
        model = torch.export.export(model, args=args, kwargs=kwargs).module()
        return prepare_pt2e(model, object())
"""
CAPTURE_ROW = next(i for i, line in enumerate(PT2E.splitlines(), 1) if "torch.export.export(model" in line)

GPTQ = """\
from pkg.configs import GPTQConfig
from pkg.registry import register_quantizer


@register_quantizer(GPTQConfig)
class GPTQQuantizer:
    def __init__(self, config):
        self.config = config

    def prepare(self, model, args=None, kwargs=None):
        return model
"""

API = """\
import copy

from pkg.registry import get_quantizer


def prepare(model, quant_config, args=None, kwargs=None, inplace=True):
    quantizer = get_quantizer(quant_config)
    model = model if inplace else copy.deepcopy(model)
    model = quantizer.prepare(model, args, kwargs)
    return model
"""


HEAD = """\
import torch

from pkg.api import prepare
from pkg.configs import GPTQConfig, PT2EConfig
from pkg.models import ConvBn

"""

# Every caller that may select the PT2E quantizer passes an eval-mode model; a train-mode
# model goes only with the GPTQ config, which selects the other class.
EVAL_FOR_PT2E = """
def test_pt2e():
    m = ConvBn().eval()
    prepare(m, PT2EConfig(), args=(torch.randn(1, 3, 8, 8),), inplace=False)


def test_gptq():
    m = ConvBn()
    prepare(m, GPTQConfig(show_progress=False))


def test_gptq_bound():
    cfg = GPTQConfig()
    prepare(ConvBn(), cfg)
"""


def _rows(tmp_path: Path, callers: str, **more: str) -> list[int]:
    """The QL201 rows of `pkg/pt2e.py` in a package whose `callers` use the public entry."""
    modules = dict(registry=REGISTRY, configs=CONFIGS, pt2e=PT2E, gptq=GPTQ, api=API, models=MODELS)
    modules.update(callers=HEAD + callers, **more)
    root = package_repository(tmp_path / "repo", **modules)
    return rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics)


def test_callers_passing_another_config_do_not_reach_the_capture(tmp_path):
    assert _rows(tmp_path, EVAL_FOR_PT2E) == []


def test_a_train_mode_model_with_the_matching_config_is_reported(tmp_path):
    callers = (
        EVAL_FOR_PT2E
        + """

def test_pt2e_train():
    prepare(ConvBn(), PT2EConfig(), args=(torch.randn(1, 3, 8, 8),))
"""
    )
    assert _rows(tmp_path, callers) == [CAPTURE_ROW]


def test_a_train_mode_model_with_a_config_of_unknown_class_is_reported(tmp_path):
    callers = (
        EVAL_FOR_PT2E
        + """

def run(config):
    prepare(ConvBn(), config)
"""
    )
    assert _rows(tmp_path, callers) == [CAPTURE_ROW]


def test_a_registry_written_by_something_else_keeps_every_caller(tmp_path):
    registry = (
        REGISTRY
        + """

def add(config_cls, quantizer_cls):
    _REGISTRY[config_cls] = quantizer_cls
"""
    )
    root = package_repository(
        tmp_path / "repo",
        registry=registry,
        configs=CONFIGS,
        pt2e=PT2E,
        gptq=GPTQ,
        api=API,
        models=MODELS,
        callers=HEAD + EVAL_FOR_PT2E,
    )
    assert rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics) == [CAPTURE_ROW]


def test_a_registry_another_module_names_keeps_every_caller(tmp_path):
    other = """\
from pkg import registry

registry._REGISTRY.clear()
"""
    assert _rows(tmp_path, EVAL_FOR_PT2E, other=other) == [CAPTURE_ROW]


def test_a_decorator_called_outside_a_class_statement_keeps_every_caller(tmp_path):
    # `register_quantizer(GPTQConfig)(PT2EQuantizer)`: the capturing class is the GPTQ
    # config's entry too, and the train-mode model reaches it.
    other = """\
from pkg.configs import GPTQConfig
from pkg.pt2e import PT2EQuantizer
from pkg.registry import register_quantizer

register_quantizer(GPTQConfig)(PT2EQuantizer)
"""
    assert _rows(tmp_path, EVAL_FOR_PT2E, other=other) == [CAPTURE_ROW]


def test_a_subclass_registered_elsewhere_keeps_every_caller(tmp_path):
    # Its instances run the capturing method for the GPTQ config.
    gptq = """\
from pkg.configs import GPTQConfig
from pkg.pt2e import PT2EQuantizer
from pkg.registry import register_quantizer


@register_quantizer(GPTQConfig)
class GPTQQuantizer(PT2EQuantizer):
    pass
"""
    modules = dict(registry=REGISTRY, configs=CONFIGS, pt2e=PT2E, gptq=gptq, api=API, models=MODELS)
    root = package_repository(tmp_path / "repo", callers=HEAD + EVAL_FOR_PT2E, **modules)
    assert rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics) == [CAPTURE_ROW]


def test_a_subscript_lookup_in_the_entry_is_followed(tmp_path):
    # `_REGISTRY[type(cfg)](cfg)` written in the registry's own factory, no lookup helper.
    registry = REGISTRY.replace(
        "    qcls = _lookup(cfg)\n    if qcls is not None:\n        return qcls(cfg)\n",
        "    if type(cfg) in _REGISTRY:\n        return _REGISTRY[type(cfg)](cfg)\n",
    )
    assert registry != REGISTRY
    modules = dict(registry=registry, configs=CONFIGS, pt2e=PT2E, gptq=GPTQ, api=API, models=MODELS)
    root = package_repository(tmp_path / "repo", callers=HEAD + EVAL_FOR_PT2E, **modules)
    assert rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics) == []


def test_a_key_written_at_the_dispatch_selects_the_class(tmp_path):
    # The config is built where the quantizer is looked up and its method called.
    script = """\
from pkg.configs import PT2EConfig
from pkg.models import ConvBn
from pkg.registry import get_quantizer


def main():
    model = ConvBn().eval()
    get_quantizer(PT2EConfig()).prepare(model, (None,))
"""
    root = package_repository(
        tmp_path / "repo", registry=REGISTRY, configs=CONFIGS, pt2e=PT2E, gptq=GPTQ, models=MODELS, script=script
    )
    assert rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics) == []


def test_a_train_mode_model_with_the_key_written_at_the_dispatch_is_reported(tmp_path):
    script = """\
from pkg.configs import PT2EConfig
from pkg.models import ConvBn
from pkg.registry import get_quantizer


def main():
    get_quantizer(PT2EConfig()).prepare(ConvBn(), (None,))
"""
    root = package_repository(
        tmp_path / "repo", registry=REGISTRY, configs=CONFIGS, pt2e=PT2E, gptq=GPTQ, models=MODELS, script=script
    )
    assert rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics) == [CAPTURE_ROW]


def test_a_registry_bound_to_a_filled_literal_keeps_every_caller(tmp_path):
    # Classes written into the literal are registered under keys no decorator shows.
    registry = REGISTRY.replace("_REGISTRY: Dict[type, type] = {}", "_REGISTRY: Dict[type, type] = {int: object}")
    assert registry != REGISTRY
    modules = dict(registry=registry, configs=CONFIGS, pt2e=PT2E, gptq=GPTQ, api=API, models=MODELS)
    root = package_repository(tmp_path / "repo", callers=HEAD + EVAL_FOR_PT2E, **modules)
    assert rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics) == [CAPTURE_ROW]


WRAPPER = """\
from pkg.api import prepare


def quantize_for(model, config):
    return prepare(model, config, args=(None,), inplace=False)
"""

WRAPPER_CALLERS = """\
from pkg.configs import GPTQConfig, PT2EConfig
from pkg.models import ConvBn
from pkg.wrapper import quantize_for


def main():
    quantize_for(ConvBn(), GPTQConfig())
    quantize_for(ConvBn().eval(), PT2EConfig())
"""


def test_a_config_handed_on_by_a_wrapper_selects_at_the_wrappers_callers(tmp_path):
    modules = dict(registry=REGISTRY, configs=CONFIGS, pt2e=PT2E, gptq=GPTQ, api=API, models=MODELS)
    root = package_repository(tmp_path / "repo", wrapper=WRAPPER, script=WRAPPER_CALLERS, **modules)
    assert rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics) == []


def test_a_train_mode_model_with_the_matching_config_through_a_wrapper_is_reported(tmp_path):
    modules = dict(registry=REGISTRY, configs=CONFIGS, pt2e=PT2E, gptq=GPTQ, api=API, models=MODELS)
    script = WRAPPER_CALLERS + "    quantize_for(ConvBn(), PT2EConfig())\n"
    root = package_repository(tmp_path / "repo", wrapper=WRAPPER, script=script, **modules)
    assert rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics) == [CAPTURE_ROW]


KEYED_SCRIPT = """\
from pkg.configs import GPTQConfig, PT2EConfig
from pkg.models import ConvBn
from pkg.registry import get_quantizer


def main():
    get_quantizer(PT2EConfig()).prepare(ConvBn().eval(), (None,))
    get_quantizer(GPTQConfig()).prepare(ConvBn(), (None,))
"""


def test_a_key_of_another_class_written_at_the_dispatch_does_not_reach_the_capture(tmp_path):
    modules = dict(registry=REGISTRY, configs=CONFIGS, pt2e=PT2E, gptq=GPTQ, models=MODELS)
    root = package_repository(tmp_path / "repo", script=KEYED_SCRIPT, **modules)
    assert rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics) == []


def test_a_key_of_another_class_in_an_open_registry_may_reach_the_capture(tmp_path):
    other = "from pkg import registry\n\nregistry._REGISTRY.clear()\n"
    modules = dict(registry=REGISTRY, configs=CONFIGS, pt2e=PT2E, gptq=GPTQ, models=MODELS, other=other)
    root = package_repository(tmp_path / "repo", script=KEYED_SCRIPT, **modules)
    assert rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics) == [CAPTURE_ROW]


def test_the_verdict_does_not_depend_on_the_files_checked_before(tmp_path):
    # The entry's flow analysed by a plain check (no module's callers read) holds no call of
    # the registered class; the caller search must not take it for its own.
    modules = dict(registry=REGISTRY, configs=CONFIGS, pt2e=PT2E, gptq=GPTQ, api=API, models=MODELS)
    root = package_repository(tmp_path / "repo", callers=HEAD + EVAL_FOR_PT2E, **modules)
    project = ProjectIndex()
    for name in ("api", "registry", "callers"):
        check_file(root / "pkg" / f"{name}.py", ("QL",), project)
    assert rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",), project).diagnostics) == []
    train = HEAD + EVAL_FOR_PT2E + "\n\ndef test_pt2e_train():\n    prepare(ConvBn(), PT2EConfig())\n"
    (root / "pkg" / "callers.py").write_text(train)
    project = ProjectIndex()
    assert rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",), project).diagnostics) == [CAPTURE_ROW]
    for name in ("api", "registry", "callers"):
        check_file(root / "pkg" / f"{name}.py", ("QL",), project)
    assert rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",), project).diagnostics) == [CAPTURE_ROW]
