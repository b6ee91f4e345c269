"""QL201 through a decorator-filled registry that a test of the registry also fills by hand
(issue 14; Samsung TICO's `test_quantizer_registry.py`, `registry_registrations`).

`register_quantizer(config_cls)(quantizer_cls)` registers a class under a key its class
statement does not show. When what it registers is only ever a class the registering module
defines (a test double), the capturing class keeps the keys its decorator shows, and a caller
passing another config still does not reach the capture. When it may be the capturing class
(named there, handed in by a function others call, a call's result) the registry is open and
every caller of the entry is a caller of the capture.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import check_file, package_repository, rows_of
from tests.test_ql201_decorator_registry import (
    API,
    CAPTURE_ROW,
    CONFIGS,
    EVAL_FOR_PT2E,
    GPTQ,
    HEAD,
    MODELS,
    PT2E,
    REGISTRY,
)

# The shape of TICO's registry test: a helper builds a fake module that registers the class
# it is handed, and the only call hands it a double defined here; the decorator also marks
# doubles in the tests.
FAKE_MODULE_TEST = """\
import sys
import types

from pkg.registry import get_quantizer, register_quantizer


class _LazyConfig:
    name = "fakealgo"


class _ExactConfig:
    pass


class _DummyQuantizer:
    def __init__(self, config):
        self.config = config

    def prepare(self, model, args=None, kwargs=None):
        return model


class _AnotherDummyQuantizer(_DummyQuantizer):
    pass


def _install_fake_quantizer_module(module_name, config_cls, quantizer_cls):
    mod = types.ModuleType(module_name)
    mod.register_quantizer = register_quantizer
    mod.config_cls = config_cls
    mod.quantizer_cls = quantizer_cls

    def _auto_register():
        mod.register_quantizer(mod.config_cls)(mod.quantizer_cls)

    mod._auto_register = _auto_register
    mod._auto_register()
    sys.modules[module_name] = mod
    return mod


def test_lazy():
    _install_fake_quantizer_module("pkg.fakealgo", config_cls=_LazyConfig, quantizer_cls=_AnotherDummyQuantizer)
    assert isinstance(get_quantizer(_LazyConfig()), _AnotherDummyQuantizer)


def test_exact():
    @register_quantizer(_ExactConfig)
    class _ExactQuant(_DummyQuantizer):
        pass

    register_quantizer(_ExactConfig)(_DummyQuantizer)
    assert get_quantizer(_ExactConfig()) is not None
"""


def _rows(tmp_path: Path, **more: str) -> list[int]:
    modules = dict(registry=REGISTRY, configs=CONFIGS, pt2e=PT2E, gptq=GPTQ, api=API, models=MODELS)
    root = package_repository(tmp_path / "repo", callers=HEAD + EVAL_FOR_PT2E, **modules, **more)
    return rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics)


def test_test_doubles_registered_by_hand_keep_the_registry_closed(tmp_path):
    assert _rows(tmp_path, test_registry=FAKE_MODULE_TEST) == []


def test_the_capturing_class_handed_to_the_same_helper_opens_the_registry(tmp_path):
    # The helper now registers the PT2E quantizer under the GPTQ config: the train-mode model
    # passed with that config reaches the capture.
    imports = "from pkg.configs import GPTQConfig\nfrom pkg.pt2e import PT2EQuantizer\nfrom pkg.registry import"
    swap = '\n\ndef test_swap():\n    _install_fake_quantizer_module("x", GPTQConfig, PT2EQuantizer)\n'
    test = FAKE_MODULE_TEST.replace("from pkg.registry import", imports) + swap
    assert _rows(tmp_path, test_registry=test) == [CAPTURE_ROW]


def test_a_class_taken_from_a_lookup_opens_the_registry(tmp_path):
    # Not named, yet the capturing class: `type()` of what the PT2E config selects.
    test = """\
from pkg.configs import GPTQConfig, PT2EConfig
from pkg.registry import get_quantizer, register_quantizer


def test_alias():
    cls = type(get_quantizer(PT2EConfig()))
    register_quantizer(GPTQConfig)(cls)
"""
    assert _rows(tmp_path, test_registry=test) == [CAPTURE_ROW]


def test_a_registering_helper_another_module_calls_opens_the_registry(tmp_path):
    # The calls in its own module hand it doubles; the one elsewhere is not read.
    helper = FAKE_MODULE_TEST
    other = """\
from pkg.configs import GPTQConfig
from pkg.pt2e import PT2EQuantizer
from pkg.test_registry import _install_fake_quantizer_module

_install_fake_quantizer_module("y", GPTQConfig, PT2EQuantizer)
"""
    assert _rows(tmp_path, test_registry=helper, other=other) == [CAPTURE_ROW]


def test_a_library_function_registering_what_it_is_handed_keeps_the_registry_open(tmp_path):
    # A public registration API: no call in its module says what its callers hand it.
    plugins = """\
from pkg.registry import register_quantizer


def add_quantizer(config_cls, quantizer_cls):
    register_quantizer(config_cls)(quantizer_cls)
"""
    assert _rows(tmp_path, plugins=plugins) == [CAPTURE_ROW]


def test_a_class_bound_by_a_loop_keeps_the_registry_open(tmp_path):
    test = """\
from pkg.configs import GPTQConfig
from pkg.registry import register_quantizer


class _Double:
    pass


def test_many(classes=(_Double,)):
    for cls in classes:
        register_quantizer(GPTQConfig)(cls)
"""
    assert _rows(tmp_path, test_registry=test) == [CAPTURE_ROW]


def test_the_decorator_kept_under_another_name_keeps_the_registry_open(tmp_path):
    test = """\
import types

from pkg.configs import GPTQConfig
from pkg.registry import register_quantizer


class _Double:
    pass


def test_renamed():
    mod = types.SimpleNamespace()
    mod.register = register_quantizer
    mod.register(GPTQConfig)(_Double)
"""
    assert _rows(tmp_path, test_registry=test) == [CAPTURE_ROW]
