"""Loops over a list of dict literals whose keys are constants, and the items read from each
row by a constant key (issue 14, item 7).

ExecuTorch's Qualcomm tests write their cases as rows keyed by imported string constants:

    test_comb = [
        {QCOM_MODULE: [Acos()], QCOM_SAMPLE_INPUTS: [(x,)]},
        {QCOM_MODULE: [AcosMultiNode()], QCOM_SAMPLE_INPUTS: [(x, y)]},
    ]
    for comb in test_comb:
        for module in comb[QCOM_MODULE]:
            module = self.get_qdq_module(module, sample_input)

or hand `case[QCOM_MODULE]` to the helper directly. `comb[QCOM_MODULE]` is, in some row, the
value written under the key equal to `QCOM_MODULE` (`"module"` in utils/constants.py): a model
in its mode when read, or the models of a list literal that a loop over it binds in turn.

What is followed is strict, so that the rows hold what was written into them on every path:

- the rows are a list or tuple literal of dict literals (no `**spread`), looped over as written
  or through `enumerate(...)`, or a name bound once to such a literal whose every load is such
  a loop's iterable;
- the values read are models built where the rows write them (`Acos()`, `[Acos(), Asin()]`)
  or constants: no other name holds them;
- every key of every row, and the key read, is a constant: a literal, or a module-level name
  bound once to a literal, in this module or imported from a module of the project (a key that
  cannot be known may equal the one read);
- the loop's target is a plain name bound by that loop alone, and each of its loads reads an
  item by such a key, as the iterable of a loop or as an argument of a call, or is
  `row.get(key, <constant>)` where every row holds a constant under the key (a flag: no model
  leaves the row through it), or formats the item in an f-string, or calls it where every row
  holding the key writes a lambda there, or hands it to a call inside a list or tuple literal
  where every row holds there a literal of constants and tensors from torch's factories (the
  activation-fusion test: `tc["unfused_check"](ops)`, `f"{tc['unfused_msg']}"`,
  `[tc[QCOM_SAMPLE_INPUTS]]`), or hands to a call an attribute of the item that every row
  holding the key passes its construction as a constant, which the class stores as it came
  (`skip_mutable_buffer=test[QCOM_MODULE].skip_mutable_buffer`: a flag, no part of a model):
  no store, no other attribute or method is reached through the row itself. A row without
  the key raises `KeyError` there and passes no model on.

A value read so is one per loop and key (a mode switch by a call on it holds for the rest of
the iteration), with the modes of the rows' models when the loop binds the row.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import CONSTRUCTED, Obj
from qlint.analysis.flow.row_reads import only_looped, read_by_key
from qlint.analysis.flow.stored_fields import passed_for, stored_fields

_ABSENT = object()
# torch's functions that build a new tensor from numbers, shapes and dtypes: never a module.
_TENSOR_FACTORIES = frozenset(
    {"randn", "rand", "randint", "tensor", "zeros", "ones", "full", "arange", "empty", "eye", "linspace"}
)


class KeyedRows:
    """The rows one function's walk binds to loop targets, and the items read from them."""

    def __init__(self, func: ast.AST, owner, local: dict, literals: dict[int, list]):
        # `owner` is the `ModelFlow` driving the walk (its module's scope and the project).
        self.func = func
        self.owner = owner
        self.local = local  # the function's own bindings: a key named by one is not followed
        self.literals = literals  # id(literal) -> its elements (`loop_items.Containers`)
        self.rows: dict[Obj, tuple[ast.For | ast.AsyncFor, list[ast.Dict]]] = {}
        self.read: dict[Obj, set[Obj]] = {}  # a row -> the values read from it so far
        self.taken: dict[Obj, list[ast.Dict]] = {}  # a value read, or a loop item of one -> its rows
        self.spoiled: set[int] = set()  # rows whose models changed mode through what was read

    def bind(self, s: ast.For | ast.AsyncFor, row: Obj | None, dicts: list[ast.Dict], env: Env) -> None:
        """The loop `s` bound its target to `row`, one of `dicts`: what was read from the
        previous row is forgotten (each row holds models of its own)."""
        if row is None:
            return
        for value in self.read.pop(row, ()):
            env.modes.pop(value, None)
        self.rows[row] = (s, dicts)

    def dicts(self, s: ast.For | ast.AsyncFor, container: ast.expr, literal: ast.expr | None) -> list[ast.Dict] | None:
        """The dict literals a loop over `container` (the rows written as `literal`) binds its
        target to, when everything the module docstring asks holds."""
        if not isinstance(literal, (ast.List, ast.Tuple)) or not literal.elts:
            return None
        if not all(isinstance(d, ast.Dict) and None not in d.keys and id(d) in self.literals for d in literal.elts):
            return None
        target = s.target
        if isinstance(s.iter, ast.Call):  # `enumerate(rows)`: (index, row)
            if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
                return None
            target = target.elts[1]
        if not isinstance(target, ast.Name) or (
            isinstance(container, ast.Name) and not only_looped(self.func, container.id)
        ):
            return None
        if any(self.key(k) is _ABSENT for d in literal.elts for k in d.keys):
            return None
        read = read_by_key(self.func, target.id)
        if read is None:
            return None
        if not all(self.key(k) is not _ABSENT for k in (*read[0], *read[2], *read[3], *(k for k, _ in read[4]))):
            return None
        if not all(self._constant_everywhere(k, default, literal.elts) for k, default in read[1]):
            return None
        if not all(self._lambda_everywhere(k, literal.elts) for k in read[2]):
            return None
        if not all(self._tensors_everywhere(k, literal.elts) for k in read[3]):
            return None
        if not all(self._constant_field_everywhere(k, attr, literal.elts) for k, attr in read[4]):
            return None
        return list(literal.elts)

    def _held(self, key: ast.expr, dicts: list[ast.Dict]) -> list[ast.expr]:
        wanted = self.key(key)
        return [v for d in dicts for k, v in zip(d.keys, d.values, strict=True) if self.key(k) == wanted]

    def _constant_field_everywhere(self, key: ast.expr, attr: str, dicts: list[ast.Dict]) -> bool:
        """`row[key].attr` is, in every row holding the key, a constant the construction written
        there passed to a project class that stores it as it came (`stored_fields`: no method
        reassigns it): a flag (`IndexCopy(copy_dim=1, skip_mutable_buffer=False)`), never a
        module, so whatever the call it is handed to does reaches no model."""
        wanted = self.key(key)
        found = False
        for d in dicts:
            held = {self.key(k): i for i, k in enumerate(d.keys)}.get(wanted)
            if held is None:
                continue  # `KeyError`: nothing is read from that row
            node, element = d.values[held], self.literals[id(d)][held]
            if not (isinstance(node, ast.Call) and isinstance(element, Obj) and element.origins):
                return False
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                return False
            for origin in element.origins:
                cls = origin.built.cls if origin.kind == CONSTRUCTED and origin.built is not None else None
                spec = stored_fields(cls.node).get(attr) if cls is not None and cls.node is not None else None
                passed = passed_for(spec, node.args, [(k.arg, k.value) for k in node.keywords]) if spec else None
                if not isinstance(passed, ast.Constant):
                    return False
            found = True
        return found

    def _tensors_everywhere(self, key: ast.expr, dicts: list[ast.Dict]) -> bool:
        """`[row[key]]` handed to a call holds, in every row, a tuple or list literal of
        constants and tensors built by torch's factories (`(torch.randn(1, 32, 6, 2),)`, the
        sample inputs of ExecuTorch's tests): no model, so what the call does to the list it
        is handed reaches no model of the rows."""
        held = self._held(key, dicts)
        return bool(held) and all(
            isinstance(v, (ast.Tuple, ast.List)) and all(self._tensor(e) for e in v.elts) for v in held
        )

    def _tensor(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return True
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            return False
        owner = node.func.value
        return (
            isinstance(owner, ast.Name)
            and owner.id not in self.local
            and self.owner.scope.imports.get(owner.id) == "torch"
            and node.func.attr in _TENSOR_FACTORIES
        )

    def _lambda_everywhere(self, key: ast.expr, dicts: list[ast.Dict]) -> bool:
        """`row[key](...)` calls, in every row that holds the key, a lambda the row writes
        there (`"unfused_check": lambda ops: ...` of ExecuTorch's activation-fusion test): the
        call takes no model out of the row, as a call of any function the walk does not read."""
        held = self._held(key, dicts)
        return bool(held) and all(isinstance(v, ast.Lambda) for v in held)

    def _constant_everywhere(self, key: ast.expr, default: ast.expr | None, dicts: list[ast.Dict]) -> bool:
        """`row.get(key, default)` gives a constant, in every row: no model leaves the row
        through it (`comb.get("assert_output_equal", True)`)."""
        wanted = self.key(key)
        if wanted is _ABSENT or not (default is None or isinstance(default, ast.Constant)):
            return False
        for d in dicts:
            held = {self.key(k): v for k, v in zip(d.keys, d.values, strict=True)}.get(wanted)
            if held is not None and not isinstance(held, ast.Constant):
                return False
        return True

    def elements(self, e: ast.Subscript, env: Env) -> tuple[list[ast.Dict], list[tuple[ast.expr, object]]] | None:
        """(the rows, [(value node, its element)] for each row holding the key) that
        `row[key]` may be, for a row bound by a followed loop; None for any other subscript."""
        row = env.vars.get(e.value.id) if isinstance(e.value, ast.Name) else None
        found = self.rows.get(row) if row is not None else None
        wanted = self.key(e.slice) if found is not None else _ABSENT
        if wanted is _ABSENT or any(id(d) in self.spoiled for d in found[1]):
            return None
        out = []
        for d in found[1]:
            # Python's dict: the last of equal keys holds the value.
            held = {self.key(k): i for i, k in enumerate(d.keys)}.get(wanted)
            if held is not None:  # a row without it raises `KeyError`: no model passes on
                out.append((d.values[held], self.literals[id(d)][held]))
        return found[1], out

    def value(self, e: ast.Subscript, env: Env) -> Obj | None:
        """One value for `row[key]` in the loop that bound the row: the models the rows hold
        under that key, in their modes when first read in this iteration; None when one of
        them is not a model the walk has a value for."""
        found = self.elements(e, env)
        if found is None:
            return None
        dicts, elements = found
        if not all(_fresh(node, element) for node, element in elements):
            return None
        objs = [element for _, element in elements if element is not None]  # a constant: no model
        if not objs:
            return None
        row = env.vars[e.value.id]
        origins = frozenset().union(*(o.origins for o in objs))
        captures = frozenset().union(*(o.captures for o in objs))
        # One value per key, however spelled (`case[MODULE]`, `case["module"]`).
        value = Obj(self.rows[row][0], f"{row.key}[{self.key(e.slice)!r}]", origins, captures)
        if value not in env.modes:
            env.modes[value] = frozenset().union(*(env.facts(o) for o in objs))
        self.read.setdefault(row, set()).add(value)
        self.taken[value] = dicts
        return value

    def listed(self, e: ast.Subscript, env: Env) -> tuple[list[ast.Dict], list] | None:
        """(the rows, the elements of the list or tuple literals) `row[key]` may be, for a loop
        over it; None when one of them is no such literal."""
        found = self.elements(e, env)
        if found is None:
            return None
        dicts, elements = found
        if not all(isinstance(v, (ast.List, ast.Tuple)) and id(v) in self.literals for v, _ in elements):
            return None
        items = [(n, item) for v, _ in elements for n, item in zip(v.elts, self.literals[id(v)], strict=True)]
        if not all(_fresh(node, item) for node, item in items):
            return None
        return dicts, [item for _, item in items]

    def looped(self, item: Obj, dicts: list[ast.Dict]) -> None:
        """`item` was bound by a loop over a list the rows `dicts` hold."""
        self.taken[item] = dicts

    def switched(self, obj: Obj) -> None:
        """The mode of `obj` changed: if it was read from rows, they no longer hold models in
        the modes they were written in."""
        for d in self.taken.get(obj, ()):
            self.spoiled.add(id(d))

    def key(self, node: ast.expr):
        """The constant `node` is (a literal, or a module-level name bound once to one here or in
        the project module it is imported from), or `_ABSENT`."""
        if isinstance(node, ast.Constant):
            return _hashable(node.value)
        if not isinstance(node, ast.Name) or node.id in self.local:
            return _ABSENT
        scope = self.owner.scope
        if node.id in scope.imports:
            module, _, name = scope.imports[node.id].rpartition(".")
            scope = self.owner.project.module_scope(module, scope.path) if module else None
            if scope is None:
                return _ABSENT
        else:
            name = node.id
        return _module_constant(scope, name)


def _fresh(node: ast.expr, element) -> bool:
    """A constant (no model), or a model built where the row writes it (`Acos()`,
    `Net().eval()`): no other name holds it, so what is done to it through another (a mode
    switch, a part given) cannot be missed here."""
    if isinstance(node, ast.Constant):
        return element is None
    return (
        isinstance(node, ast.Call)
        and isinstance(element, Obj)
        and bool(element.origins)
        and all(o.kind == CONSTRUCTED for o in element.origins)
    )


def _module_constant(scope, name: str):
    """`name = <literal>`, once, at the top of the module `scope`, bound no other way."""
    bound = scope.assigns.get(name)
    if not bound or len(bound) != 1 or not isinstance(bound[0], ast.Constant):
        return _ABSENT
    if name in scope.imports or name in scope.functions or name in scope.classes:
        return _ABSENT
    return _hashable(bound[0].value)


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return _ABSENT
    return (type(value) is bool, value)  # `True` and `1` are one key to a dict, kept apart here


__all__ = ["KeyedRows"]
