"""What a class's own module says of its bases: whether they derive from `torch.nn` module
classes, and which bases it takes from other modules (QL201/QL202: the gate on reading a
factory or an alternate constructor, `nn_classes`).

Read from the module's text alone, no lookup: a base written `nn.Module` (any `torch.nn`
class but a parameter or a buffer), or a class of the module whose own bases do, makes the
class a module; a base imported by name (`from pkg.bases import BaseNet`) is given by the
dotted name the import binds, for `nn_classes` to look up in its own module. A base the module
rebinds (`BaseNet = wrap(BaseNet)`), a call, a subscript or a name bound nowhere is neither.
"""

from __future__ import annotations

from qlint.analysis.names.resolver import dotted_parts

_TORCH_NN = "torch.nn."
_NOT_MODULES = frozenset({"Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"})
_DEPTH = 4


def module_class(scope, cls) -> bool:
    """`cls` (a class scope of `scope`, the module's) derives from `torch.nn` module classes, as
    its module's own text says: through its bases written there (`nn.Module`, a class of the
    module that does), no lookup. A config, an enum, a graph pass or a tensor subclass holds no
    mode to follow, and knowing what such a class's `cls(...)` built made the calls on it
    followed (ExecuTorch: `from_dict`, `from_recipe`, `from_json` of configs and stages read)."""
    return local_bases(scope, cls) is True


def local_bases(scope, cls, depth: int = 0) -> bool | tuple[str, ...]:
    """True when `cls` derives from `torch.nn` module classes through its module's own text
    (`module_class`); else the dotted names of the bases it takes from imports, through the
    classes of its module it derives from (what `nn_classes` looks up), in order, once each."""
    imported: list[str] = []
    for base in cls.bases:
        parts = dotted_parts(base)
        if not parts or depth > _DEPTH:
            continue
        full = scope.imports.get(parts[0])
        if full is not None:
            name = ".".join((full, *parts[1:]))
            if name.startswith(_TORCH_NN):
                if name.rpartition(".")[2] not in _NOT_MODULES:
                    return True
            elif name not in imported and parts[0] not in scope.assigns:
                imported.append(name)  # (a base the module rebinds is whatever that value is)
        elif len(parts) == 1 and parts[0] in scope.classes and parts[0] not in scope.assigns:
            found = local_bases(scope, scope.classes[parts[0]], depth + 1)
            if found is True:
                return True
            imported.extend(n for n in found if n not in imported)
    return tuple(imported)


__all__ = ["local_bases", "module_class"]
