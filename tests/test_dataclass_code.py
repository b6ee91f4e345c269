"""qlint.dataclass_code: qlint's dataclass methods compiled once and kept; the classes built
from kept code are the classes `dataclasses` builds from its text."""

from __future__ import annotations

import dataclasses
import sys
import types

import pytest

from qlint import dataclass_code


@pytest.fixture
def cache_in(tmp_path, monkeypatch):
    """The cache kept in tmp_path (writing allowed); the package's own afterwards."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    dataclass_code.uninstall()
    dataclass_code.install(str(tmp_path))
    yield tmp_path
    dataclass_code.uninstall()
    dataclass_code.install()


def _module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    sys.modules[name] = module
    return module


def _define(module: types.ModuleType, frozen: bool = True):
    source = (
        "from dataclasses import dataclass, field\n"
        f"@dataclass(frozen={frozen}, order=True)\n"
        "class Point:\n"
        "    x: int\n"
        "    y: 'list[int]' = field(default_factory=list)\n"
    )
    exec(compile(source, module.__name__, "exec", dont_inherit=True), module.__dict__)
    return module.Point


def _behaviour(cls) -> tuple:
    a, b = cls(1, [2]), cls(1, [2])
    return (
        a == b,
        a < cls(2),
        repr(a),
        cls(1).y,
        cls.__init__.__annotations__,
        [f.name for f in dataclasses.fields(cls)],
        dataclasses.replace(a, x=5).x,
    )


def test_kept_code_builds_the_same_class_in_a_new_process_state(cache_in):
    module = _module("qlint._kept_code_probe")
    try:
        first = _define(module)
        assert len(dataclass_code._codes) >= 5  # __init__, __repr__, __eq__, order, frozen
        dataclass_code.save()
        assert any(cache_in.iterdir())
        # A new start: nothing compiled in memory, the kept file read back.
        dataclass_code.uninstall()
        dataclass_code.install(str(cache_in))
        kept = dict(dataclass_code._codes)
        assert kept
        compiled = []
        real = compile
        dataclass_code.compile = lambda *a, **k: compiled.append(a[0]) or real(*a, **k)
        try:
            second = _define(module)
        finally:
            del dataclass_code.compile
        assert compiled == []  # every method came from the kept code
        assert _behaviour(first) == _behaviour(second)
        with pytest.raises(dataclasses.FrozenInstanceError):
            second(1).x = 2
        assert hash(second(1, ())) == hash(first(1, ()))
    finally:
        del sys.modules["qlint._kept_code_probe"]


def test_same_class_as_without_the_cache(cache_in):
    # `from __future__ import annotations` in dataclass_code must not leak into the code
    # it compiles: the generated `__init__` keeps the annotations `dataclasses` gives it.
    module = _module("qlint._kept_code_same")
    try:
        cached = _define(module, frozen=False)
        dataclass_code.uninstall()
        plain = _define(module, frozen=False)
        assert _behaviour(cached) == _behaviour(plain)
    finally:
        del sys.modules["qlint._kept_code_same"]


def test_other_packages_classes_are_not_kept(cache_in):
    module = _module("someone_else")
    try:
        _define(module)
        assert dataclass_code._codes == {}
        dataclass_code.save()
        assert list(cache_in.iterdir()) == []
    finally:
        del sys.modules["someone_else"]


def test_nothing_written_when_bytecode_is_not_written(cache_in, monkeypatch):
    module = _module("qlint._kept_code_nowrite")
    try:
        _define(module)
        monkeypatch.setattr(sys, "dont_write_bytecode", True)
        dataclass_code.save()
        assert list(cache_in.iterdir()) == []
    finally:
        del sys.modules["qlint._kept_code_nowrite"]


@pytest.mark.parametrize("content", [b"", b"garbage", None])
def test_a_file_that_does_not_load_is_ignored(cache_in, content):
    import marshal

    path = cache_in / dataclass_code._FILE
    # None: a file from another interpreter (another stamp).
    foreign = marshal.dumps(("other python", {"x": compile("1", "", "eval")}))
    path.write_bytes(content if content is not None else foreign)
    dataclass_code.uninstall()
    dataclass_code.install(str(cache_in))
    assert dataclass_code._codes == {}
    module = _module("qlint._kept_code_bad")
    try:
        assert _define(module)(3).x == 3
    finally:
        del sys.modules["qlint._kept_code_bad"]
