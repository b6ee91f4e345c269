"""The names a project's insertion wrappers (and QL101's sink helpers) can be imported under, as
a batch run's index holds them (`WrapperIndex`, made by `wrapper_index`): what the import
triggers' gates ask of each import a file makes (`helper_gate`), and the dependency a file
answered from the index records.
"""

from __future__ import annotations

import functools

from qlint.analysis import wrapper_record
from qlint.analysis.skipped_dirs import SKIP_DIRS
from qlint.value_classes import value_class

_SKIPPED = tuple(d for d in SKIP_DIRS if d.isidentifier())  # the ones a dotted name can pass through
_SKIPPED_PARTS = frozenset(_SKIPPED)


@value_class(frozen=True)
class WrapperIndex:
    root: str
    functions: frozenset[str]  # names a wrapper function can be imported under
    classes: frozenset[str]  # names a class with a wrapper method (own or inherited) can be imported under
    digest: str
    # The same for helpers forwarding to QL101's default sinks (`sink_index`); `sinks` asks them.
    sink_functions: frozenset[str] = frozenset()
    sink_classes: frozenset[str] = frozenset()
    # The stems of the modules defining those (`sink_index.helper_module_stems`), on `sinks` too.
    sink_modules: frozenset[str] = frozenset()

    @functools.cached_property
    def sinks(self) -> WrapperIndex:
        """The index as QL101's helper search asks it (same root, dependency and digest)."""
        return WrapperIndex(
            self.root, self.sink_functions, self.sink_classes, self.digest, sink_modules=self.sink_modules
        )

    @property
    def dependency(self) -> str:
        known = _DEPENDENCIES.get(self.root)
        if known is None:
            known = _DEPENDENCIES[self.root] = wrapper_record.dependency(self.root)
        return known

    def may_lead_to_function(self, full: str) -> bool:
        """Whether the import of `full` (a dotted name) may name a wrapper function."""
        return full.rpartition(".")[2] in self.functions or _outside_listing(full)

    def may_lead_to_class(self, full: str) -> bool:
        return full.rpartition(".")[2] in self.classes or _outside_listing(full)

    def may_lead_to_helper(self, full: str) -> bool:
        """`may_lead_to_function(full) or may_lead_to_class(full)`, with one lookup: asked of
        every import of most files QL102's import trigger reads (`helper_gate`)."""
        return full.rpartition(".")[2] in self.function_or_class_names or _outside_listing(full)

    def may_lead_to_module(self, full: str) -> bool:
        """Whether the import of `full` may name a module defining a helper (QL101's, on the
        `sinks` view: `sink_index.helper_module_stems`)."""
        return full.rpartition(".")[2] in self.sink_modules or _outside_listing(full)

    @functools.cached_property
    def function_or_class_names(self) -> frozenset[str]:
        return self.functions | self.classes

    @functools.cached_property
    def attribute_names(self) -> frozenset[str]:
        """The names a dotted call's last part must be for `may_lead_to_function` to hold of
        it, unless a part before it names a directory the listing skips: those directories'
        names with the functions'."""
        return self.functions | frozenset(_SKIPPED)

    @functools.cached_property
    def attribute_or_class_names(self) -> frozenset[str]:
        """`attribute_names` and the classes' names: what a dotted name must end in, or pass,
        for any of the helper search's ways to a helper (`helper_gate`)."""
        return self.attribute_names | self.classes


_DEPENDENCIES: dict[str, str] = {}


@functools.lru_cache(maxsize=8192)  # asked of every import of every file the trigger reads
def _outside_listing(full: str) -> bool:
    """A dotted name through a directory the listing skips (`build.x`) may name a module
    the index never read. Its parts looked up in one set: asked of nearly every import the
    gates read (ao: ~18,000), five substring searches through a generator each cost ~0.2%
    of a cold run; a part (no dot in it) can only be one of the skipped names a dotted name
    can pass through."""
    return not _SKIPPED_PARTS.isdisjoint(full.split("."))
