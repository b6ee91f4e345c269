"""Mode facts of a module's classes, as a summary fact: QL201/QL202 ask them of every class
of another module the model is built from, without reading that module's tree.

Per top-level class: whether its `__init__` switches the instance to eval mode
(`self.eval()`), or to the mode of one of its parameters (`self.train(model.training)`),
or evals every part it stores and holds nothing else (`evaled_parts`), which decides the
mode a construction starts in; and what its module says of its bases (`nn_bases.local_bases`:
a `torch.nn` module, or the bases it imports), which `nn_classes` follows across modules. What the class holds
(its mode-dependent submodules) is read from its body only when a message names it.
"""

from __future__ import annotations

import ast
from typing import Any

from qlint.analysis.flow.evaled_parts import init_evals_parts
from qlint.analysis.flow.model_apis import init_mirrored_param, init_sets_eval
from qlint.analysis.flow.nn_bases import local_bases
from qlint.analysis.flow.resolved_classes import ModelClass

_VERSION = 6  # 6: the bases (`nn_bases.local_bases`)


class ClassModes:  # a SummaryFact
    key = f"class-modes/{_VERSION}"

    def compute(self, tree: ast.Module, scope, text: str) -> Any:
        return {
            name: [
                init_sets_eval(cls.node),
                init_mirrored_param(cls.node) or "",
                init_evals_parts(cls.node),
                _plain_bases(local_bases(scope, cls)),
            ]
            for name, cls in scope.classes.items()
        }

    def load(self, path: str, summary, value: Any) -> dict[str, tuple[bool, str, bool, bool | tuple[str, ...]]]:
        if not isinstance(value, dict):
            raise TypeError("not a class-modes fact")
        out = {}
        for name, facts in value.items():
            sets_eval, mirrored, evals_parts, bases = facts
            if not isinstance(name, str) or type(sets_eval) is not bool or not isinstance(mirrored, str):
                raise TypeError("bad class-modes entry")
            if type(evals_parts) is not bool:
                raise TypeError("bad class-modes entry")
            if bases is not True and not (isinstance(bases, list) and all(isinstance(b, str) for b in bases)):
                raise TypeError("bad class-modes bases")
            out[name] = (sets_eval, mirrored, evals_parts, bases if bases is True else tuple(bases))
        return out


CLASS_MODES = ClassModes()


def sets_eval(cls: ModelClass) -> bool:
    """Instances of `cls` start in eval mode (`self.eval()` in its `__init__`)."""
    facts = _summarised(cls)
    return facts[0] if facts is not None else init_sets_eval(cls.node)


def mirrored_param(cls: ModelClass) -> str | None:
    """The `__init__` parameter whose mode instances of `cls` take (`init_mirrored_param`)."""
    facts = _summarised(cls)
    return (facts[1] or None) if facts is not None else init_mirrored_param(cls.node)


def evals_parts(cls: ModelClass) -> bool:
    """Fresh instances of `cls` hold only parts its `__init__` evaled (`init_evals_parts`)."""
    facts = _summarised(cls)
    return facts[2] if facts is not None else init_evals_parts(cls.node)


def summarised_bases(cls: ModelClass) -> bool | tuple[str, ...] | None:
    """`nn_bases.local_bases` of a class of another module known by name (`ModelClass.summarised`),
    from its module's summary: its body is not parsed for it (None: the summary does not know it)."""
    facts = _summarised(cls)
    return facts[3] if facts is not None else None


def _plain_bases(bases: bool | tuple[str, ...]) -> bool | list[str]:
    return bases if bases is True else list(bases)


def _summarised(cls: ModelClass) -> tuple[bool, str, bool, bool | tuple[str, ...]] | None:
    if not cls.summarised:
        return None
    fact_at = getattr(cls.project, "fact_at", None)
    facts = fact_at(cls.scope.path, CLASS_MODES) if fact_at is not None else None
    return facts.get(cls.name) if facts is not None else None
