"""QL201: a method's callers in other modules, judged by the class the receiver was built
from, through its bases and through `Cls[T](...)` (issue 14, items 2 and 7).

ExecuTorch's Arm tests write `pipeline = TosaPipelineFP[input_t](...)` then `pipeline.run()`,
where a base class of the pipeline module defines `run`. Read one level (what the built class
defines itself) and never through a subscript, each such module left the callers of every
other `run` unknown (the harness's `Quantize.run`: ~250 of the 296 modules that did). A class
none of whose bases is the method's class runs no call of it (`built_classes`); a subclass of
it, a class whose bases cannot all be placed, one whose construction may hand back another
class's instance (`__new__`, a metaclass), or a subscript whose class may hand its alias's
call elsewhere (`__class_getitem__`) keep the reference a possible caller. A factory of the
caller's module returning constructions only (`_make_rnn_int_pipeline(module).run()`) builds
those classes; one that may return anything else keeps it a caller.
"""

from __future__ import annotations

import textwrap

from tests.conftest import package_repository
from tests.test_ql201_method_callers import BUILDER, CAPTURE_ROW, IMPORT, _rows

BASES = """\
from typing import Generic, TypeVar

T = TypeVar("T")


class BasePipeline(Generic[T]):
    def quantize(self, model, x):
        return model
"""

PIPELINES = """\
from typing import Generic, TypeVar

from pkg.bases import BasePipeline

T = TypeVar("T")


class Pipeline(BasePipeline, Generic[T]):
    pass


class Odd(BasePipeline):
    def __class_getitem__(cls, item):
        from pkg.builder import Builder

        return Builder
"""

# The one harmless caller of the method judged, beside the receivers under test.
EVAL_CALLER = "    return Builder(q).quantize(Net().eval(), x)\n"


def _repo(tmp_path, script: str, **more: str):
    modules = {"bases": BASES, "pipelines": PIPELINES, "script": IMPORT + textwrap.dedent(script), **more}
    return package_repository(tmp_path / "repo", builder=BUILDER, **modules)


def test_a_generic_pipeline_whose_base_defines_the_method_is_no_caller(tmp_path):
    script = "from pkg.pipelines import Pipeline\n\n\ndef main(q, x):\n"
    subscripted = script + "    pipeline = Pipeline[int](q)\n    pipeline.quantize(Net(), x)\n" + EVAL_CALLER
    assert _rows(_repo(tmp_path / "s", subscripted)) == []
    plain = script + "    Pipeline(q).quantize(Net(), x)\n" + EVAL_CALLER
    assert _rows(_repo(tmp_path / "p", plain)) == []


def test_a_subclass_of_the_method_s_class_built_through_a_subscript_stays_a_caller(tmp_path):
    sub = """
from typing import Generic, TypeVar

T = TypeVar("T")


class Sub(Builder, Generic[T]):
    pass


def main(q, x):
    Sub[int](q).quantize(Net(), x)
"""
    assert _rows(_repo(tmp_path, sub + EVAL_CALLER)) == [CAPTURE_ROW]


def test_a_class_that_hands_its_subscript_elsewhere_stays_a_caller(tmp_path):
    # `Odd[int]` is `Builder`: the train-mode model reaches the capture.
    odd = "from pkg.pipelines import Odd\n\n\ndef main(q, x):\n    Odd[int](q).quantize(Net(), x)\n"
    assert _rows(_repo(tmp_path, odd + EVAL_CALLER)) == [CAPTURE_ROW]


def test_a_base_that_cannot_be_placed_keeps_the_callers_unknown(tmp_path):
    # `Mixin` is whatever `pick()` returns: it may be `Builder`.
    unplaced = """
def pick():
    return Builder


Mixin = pick()


class Through(Mixin):
    pass


def main(q, x):
    Through(q).quantize(Net(), x)
"""
    assert _rows(_repo(tmp_path, unplaced + EVAL_CALLER)) == [CAPTURE_ROW]


def test_a_library_base_cannot_derive_from_the_project_s_class(tmp_path):
    library = """
from pkg.pipelines import Pipeline


class Wrapped(Pipeline, torch.nn.Module):
    pass


def main(q, x):
    Wrapped(q).quantize(Net(), x)
"""
    assert _rows(_repo(tmp_path, library + EVAL_CALLER)) == []


def test_a_class_whose_construction_may_hand_back_another_instance_stays_a_caller(tmp_path):
    made = """
from pkg.pipelines import Pipeline


class Made(Pipeline):
    def __new__(cls, q):
        return Builder(q)


class Meta(type):
    pass


class Typed(Pipeline, metaclass=Meta):
    pass


def main(q, x):
    Made(q).quantize(Net(), x)
"""
    assert _rows(_repo(tmp_path / "n", made + EVAL_CALLER)) == [CAPTURE_ROW]
    typed = made.replace("Made(q).quantize", "Typed(q).quantize")
    assert _rows(_repo(tmp_path / "m", typed + EVAL_CALLER)) == [CAPTURE_ROW]


def test_a_wrapper_delegating_its_attributes_stays_a_caller(tmp_path):
    wrapper = """
from pkg.pipelines import Pipeline


class Wrapper(Pipeline):
    def __init__(self, q):
        self.inner = Builder(q)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def main(q, x):
    Wrapper(q).quantize(Net(), x)
"""
    assert _rows(_repo(tmp_path, wrapper + EVAL_CALLER)) == [CAPTURE_ROW]


FACTORY = """
from pkg.pipelines import Pipeline


def make_pipeline(q, given):
    pipeline = Pipeline[int](q)
    if q is None:
        return RETURNED
    return pipeline


def main(q, x):
    make_pipeline(q, None).quantize(Net(), x)
"""


def test_a_factory_of_the_module_building_another_class_is_no_caller(tmp_path):
    assert _rows(_repo(tmp_path, FACTORY.replace("RETURNED", "None") + EVAL_CALLER)) == []
    built = FACTORY.replace("RETURNED", "Pipeline(q)")
    assert _rows(_repo(tmp_path / "b", built + EVAL_CALLER)) == []


def test_a_factory_that_may_return_anything_else_stays_a_caller(tmp_path):
    for name, returned in (("param", "given"), ("builder", "Builder(q)"), ("call", "pick(q)")):
        script = "\ndef pick(q):\n    return Builder(q)\n\n" + FACTORY.replace("RETURNED", returned)
        assert _rows(_repo(tmp_path / name, script + EVAL_CALLER)) == [CAPTURE_ROW], name


def test_a_project_package_named_like_a_standard_library_module_is_no_library(tmp_path):
    # The project's own `calendar` package binds `Base` to the method's class.
    script = "from calendar import Base\n\n\nclass Through(Base):\n    pass\n\n\ndef main(q, x):\n"
    root = _repo(tmp_path, script + "    Through(q).quantize(Net(), x)\n" + EVAL_CALLER)
    (root / "calendar").mkdir()
    (root / "calendar" / "__init__.py").write_text("from pkg.builder import Builder\n\nBase = Builder\n")
    assert _rows(root) == [CAPTURE_ROW]
