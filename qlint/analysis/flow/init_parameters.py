"""Constructor parameters a model class can only use as numbers or flags, never as modules.

A construction passes values qlint may not know (`M(use_bias=flag)` with `flag` a loop
variable or a test's parameter). Such a value could be a module the class stores, which
would make the model's content unknown. It cannot be one when `__init__` only hands it to
torch.nn layers as a hyperparameter (`nn.Linear(4, 4, use_bias)`), tests it
(`if flag:`, `flag and x`, `not flag`) or stores it on the instance where the class's methods
only test it (`stored_flags`): what the model holds is then read from the class alone,
whatever the value.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_torch_nn import CONTAINERS
from qlint.analysis.flow.stored_flags import only_tested_attribute, tested_value
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import own_init, parameter_at


def only_hyperparameter(cls_node: ast.ClassDef, resolver: Resolver, position: int | None, keyword: str | None) -> bool:
    """The `__init__` parameter an argument binds (by `position` after `self`, or `keyword`)
    is read only as a torch.nn layer's argument or in a test. False when it is not known which
    parameter the argument binds (no `__init__` of its own, `*args`, `**kwargs`)."""
    init = own_init(cls_node)
    if init is None:
        return False
    params = [*init.args.posonlyargs, *init.args.args]  # `self` may be positional-only
    me = params[0].arg if params else None
    return _only_harmless_reads(init, 1, resolver, position, keyword, cls_node, me)


def unread_or_hyperparameter(
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    skip: int,
    resolver: Resolver,
    position: int | None,
    keyword: str | None,
) -> bool:
    """The same for a function of the project a class calls (`self.b = make_block(BN)`, its
    parameters after the first `skip`: 1 for a classmethod's `cls`): the parameter the argument
    binds is never read, or read only as a torch.nn layer's argument or in a test, so the
    function's result does not hold the value. False for `*args` and `**kwargs`, as above."""
    return _only_harmless_reads(func, skip, resolver, position, keyword, None, None)


def _only_harmless_reads(
    func: ast.AST,
    skip: int,
    resolver: Resolver,
    position: int | None,
    keyword: str | None,
    cls_node: ast.ClassDef | None,
    me: str | None,
) -> bool:
    name = parameter_at(func.args, skip, position, keyword)
    if name is None:
        return False
    parents = {child: node for node in ast.walk(func) for child in ast.iter_child_nodes(node)}
    reads = [n for n in ast.walk(func) if isinstance(n, ast.Name) and n.id == name]
    return all(isinstance(n.ctx, ast.Load) and _harmless_read(n, parents, resolver, cls_node, me) for n in reads)


def _harmless_read(
    name: ast.Name, parents: dict, resolver: Resolver, cls_node: ast.ClassDef | None, me: str | None
) -> bool:
    parent = parents.get(name)
    if isinstance(parent, ast.keyword):
        parent = parents.get(parent)
        return isinstance(parent, ast.Call) and _layer(parent, resolver)
    if isinstance(parent, ast.Call) and name in parent.args:
        return _layer(parent, resolver)
    if _stored_whole(parent, name, me):
        return only_tested_attribute(cls_node, resolver, parent.targets[0].attr)
    return tested_value(name, parents)


def _stored_whole(parent: ast.AST | None, name: ast.Name, me: str | None) -> bool:
    """`self.<attr> = name`: the value kept as it came, on the instance being built."""
    if me is None or not isinstance(parent, ast.Assign) or parent.value is not name or len(parent.targets) != 1:
        return False
    target = parent.targets[0]
    return isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me


def _layer(call: ast.Call, resolver: Resolver) -> bool:
    """A torch.nn class other than a container: its arguments are hyperparameters."""
    name = resolver.qualname(call.func) or ""
    last = name.rpartition(".")[2]
    return name.startswith("torch.nn.") and last[:1].isupper() and last not in CONTAINERS
