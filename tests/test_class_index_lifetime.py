"""The class index and its content reading (`class_contents.ClassContents`, which the index
composes) make no reference cycle: an index a check drops is freed then, not by the cyclic
collector, which is paused while files are checked (`gc_pause`)."""

from __future__ import annotations

import gc
import weakref

from qlint.analysis.flow.model_classes import ClassIndex
from qlint.analysis.names.project import ProjectIndex


def test_a_dropped_class_index_is_freed_without_the_cyclic_collector():
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        index = ClassIndex(ProjectIndex(), "m.py")
        assert index.contents.index.requester == "m.py"  # the reading reaches its index
        index.renew()  # a kept index gets a fresh reading: still no cycle
        dropped = weakref.ref(index)
        del index
        assert dropped() is None
    finally:
        if was_enabled:
            gc.enable()
