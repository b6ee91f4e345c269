"""Which errors an `except` clause catches, read from its names."""

from __future__ import annotations

import ast


def catches(handler: ast.ExceptHandler, names: frozenset[str]) -> bool:
    """Does `handler` catch an error named in `names` (`except ImportError:`, `except
    (OSError, builtins.ImportError):`, a bare `except:`)? Names are compared by their last part."""
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any((t.id if isinstance(t, ast.Name) else getattr(t, "attr", None)) in names for t in types)
