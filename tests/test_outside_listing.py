"""`wrapper_names._outside_listing`, asked of nearly every import the helper gates read, is
one set lookup of a dotted name's parts: it must answer as the reading it replaced, a search
of the name for each skipped directory a dotted name can pass through, then of its parts among
all the skipped ones (`build.x` may name a module the listing never read; `builder.x` does not)."""

from __future__ import annotations

import itertools

import pytest

from qlint.analysis.graphs import wrapper_names
from qlint.analysis.skipped_dirs import SKIP_DIRS


def _full_reading(full: str) -> bool:
    passable = [d for d in SKIP_DIRS if d.isidentifier()]
    return any(d in full for d in passable) and any(part in SKIP_DIRS for part in full.split("."))


NAMES = [
    "torch.fx",
    "torchao.quantization.pt2e.utils",
    "build",
    "build.helpers",
    "pkg.build.helpers",
    "pkg.builder.helpers",
    "rebuild.x",
    "dist.x",
    "distutils.core",
    "venv.lib.x",
    "virtualenv.x",
    "node_modules.x",
    "pkg.__pycache__.mod",
    "x..build",
    ".venv.x",
    "git.x",
    "",
]


@pytest.mark.parametrize("full", NAMES)
def test_outside_listing_answers_as_the_full_reading(full):
    assert wrapper_names._outside_listing(full) is _full_reading(full)


def test_outside_listing_over_every_joining_of_skipped_and_other_parts():
    parts = [*sorted(SKIP_DIRS), "pkg", "build_utils", "distx", "", "mod"]
    for n in (1, 2, 3):
        for chosen in itertools.product(parts, repeat=n):
            full = ".".join(chosen)
            assert wrapper_names._outside_listing(full) is _full_reading(full), full


def test_the_index_still_lets_a_name_through_a_skipped_directory():
    index = wrapper_names.WrapperIndex("/root", frozenset({"helper"}), frozenset(), "d", sink_modules=frozenset())
    assert index.may_lead_to_function("pkg.checks.helper")
    assert index.may_lead_to_function("build.lib.other")  # read by no listing: may be anything
    assert not index.may_lead_to_function("builder.lib.other")
    assert index.may_lead_to_module("dist.checks")
    assert not index.may_lead_to_module("pkg.checks")
