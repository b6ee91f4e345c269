"""Calls and values that put no module of unknown content into a model: constants, arithmetic
with numbers, torch's dtypes, torch functions (tensors, never a module), the standard library's
containers and numbers. Reading what a model holds (`class_contents`, `stored_models`) and
what a construction is handed (`built_models.Built`) take them as no part of its content.
"""

from __future__ import annotations

import ast
import builtins


def constant_literal(node: ast.expr) -> bool:
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(constant_literal(e) for e in node.elts)
    return isinstance(node, ast.Constant) or (isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant))


def number_arithmetic(node: ast.expr) -> bool:
    """`x - 0.2`: arithmetic with a number is a number or a tensor, never a module (a module
    has no arithmetic with numbers; `Sequential + Sequential` has no number in it)."""
    return isinstance(node, ast.BinOp) and (
        constant_literal(node.left)
        or constant_literal(node.right)
        or number_arithmetic(node.left)
        or number_arithmetic(node.right)
    )


# Calls that return the module they are handed, a copy of it or a wrapper running it: what it
# holds is what the argument holds, though the call itself builds nothing (`harmless_call`).
HANDS_BACK = frozenset({"copy.copy", "copy.deepcopy", "torch.compile"})
# Calls that build no module: numbers, tensors, containers of the standard library.
SAFE_ROOTS = frozenset({"math", "copy", "functools", "itertools", "operator", "collections", "warnings", "logging"})
SAFE_ROOTS |= {"typing", "numpy", "random", "os", "re", "dataclasses", "enum", "abc"}
# SciPy imports no torch: its functions return arrays and numbers, never a torch module
# (ExecuTorch's llama attention builds its R3 rotation from `scipy.linalg.hadamard`).
SAFE_ROOTS |= {"scipy"}
_TORCH_CLASSES = frozenset({"torch.Size", "torch.Tensor", "torch.Generator", "torch.dtype"})
# torch's dtypes, handed to a model's constructor (`TriuConstant(1, constant_dtype=torch.bool)`).
# fmt: off
DTYPES = frozenset(f"torch.{t}" for t in (
    "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "short", "int32", "int", "int64", "long",
    "float16", "half", "bfloat16", "float32", "float", "float64", "double", "complex64", "cfloat", "complex128",
    "cdouble", "qint8", "quint8", "qint32", "float8_e4m3fn", "float8_e5m2",
))
# fmt: on


def harmless_call(call: ast.Call, name: str, parts: list[str] | None) -> bool:
    """A call that does not put a module of unknown content into the model.

    Method calls (`x.view()`, `super().__init__()`, `self.conv(x)`) are harmless: the module's
    own methods are read with its class. A callable held in a variable (`block(...)`,
    `norm_layer(c)`), a loader, or a function or class from elsewhere may build anything."""
    if parts is None:
        return isinstance(call.func, ast.Attribute)
    if parts[-1] in ("map", "partial") and call.args and not isinstance(call.args[0], ast.Lambda):
        return False  # the callable it is handed is called later, unseen
    if not name:
        return len(parts) > 1 or (parts[0] in BUILTINS and parts[0] not in ("eval", "exec"))
    if name in _JSON_LOADS:
        # Plain JSON values (dicts, lists, strings, numbers), unless a hook builds objects.
        return not any(kw.arg is None or kw.arg in _JSON_HOOKS for kw in call.keywords)
    if name.startswith("torch.ops."):
        return True  # an operator (`torch.ops.aten.pow.Scalar(...)`): tensors, never a module
    if name.startswith("torch."):
        last = name.rpartition(".")[2]
        return (name in _TORCH_CLASSES or not last[:1].isupper()) and "load" not in last and ".hub." not in name
    root = name.split(".")[0]
    return root in SAFE_ROOTS or (root in BUILTINS and "." not in name)


BUILTINS = frozenset(dir(builtins))
_JSON_LOADS = frozenset({"json.load", "json.loads"})
_JSON_HOOKS = frozenset({"cls", "object_hook", "object_pairs_hook", "parse_float", "parse_int", "parse_constant"})
ENUMS = frozenset(f"enum.{c}" for c in ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"))


def torch_function(name: str) -> bool:
    """A function of torch (not a class, a loader or a hub entry), as `harmless_call` has a direct
    call of one."""
    last = name.rpartition(".")[2]
    return name.startswith("torch.") and last[:1].islower() and "load" not in last and ".hub." not in name
