"""QL202's order test: the prepared QAT graph is moved before anything can train it.

`move_exported_model_to_train` on the QAT graph of an eval-mode capture restores training
batch norm and dropout (checked on torch 2.13 and torchao 0.18), and `move_exported_model_to_eval`
or `convert_pt2e` means it is only rebuilt to be converted or evaluated. A move excuses the
capture only where it comes first: a step of training before it (`train_loop(prepared)`,
`prepared(x).sum().backward()`) runs the graph in the capture's mode, and a move after the loop,
in one branch of two or in an `else` only leaves some path training the eval-mode graph.

One reading, asked by both of QL202's readings of a move: in the capturing function (the walk
saw a move reach the capture's graph: `capture.retrained`, `late_move`) and in the
callers of a helper returning the graph (`returned_qat_graphs`). Both give a body, the name
bound to the graph and the statement binding it (`moved_first`):

- the uses that a path from the binding reaches (later in its block, or in blocks around it;
  not an `if`'s other arm; a loop's next pass is not followed back above the binding) must each
  be covered by a move, or be neutral (`neutral_graph_uses`: weight loads, device moves as
  statements, parameter lists, the graph's `.graph`, `convert_pt2e(copy.deepcopy(model))`, a
  function of the module that makes only such uses of what it is handed), or the move's own
  argument;
- a move covers the uses after it in its own block and the blocks those hold: a move at the
  top of a loop body covers that pass's training; an `if` whose two arms both move, and a
  `with` whose body moves, cover what follows them.

A rebinding of the name before any move (other than `model = model.to(dev)`, or the move's
own `model = move_exported_model_to_train(model)`), or a function written inside the body
that names it, cannot be read: None.

A move may be done by a function the graph is handed to (`train_mode(prepared)`, `def
train_mode(gm): move_exported_model_to_train(gm)`; a method of the class or a function of
another module: `moving_callees`), which the walk does not follow the graph into: it counts
when that function passes the same order test on its parameter, from its start, and moves it
on every path (`moving_helper`); bound back to the name (`prepared = train_mode(prepared)`),
when it returns its parameter.

The name may be an attribute of a method's instance, `self.prepared`: the graph held on the
instance (`stored_graph_moves` asks the order test of each method of the class).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_apis import api_kind, argument
from qlint.analysis.flow.model_flow import Capture, FunctionFlow, capture_holder
from qlint.analysis.flow.statement_paths import LOOPS, cover_reaches, leaves_through, runs_after, statement_chains
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.tree_walk import SCOPES, own_nodes, parents, statement_around
from qlint.rules.base import FileContext
from qlint.rules.moving_callees import MAX_DEPTH, handed, may_hand, self_handed, spells
from qlint.rules.neutral_graph_uses import handed_to_neutral, neutral_use, self_returned

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_BODIES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)
_COVERS = frozenset({"move", "convert"})  # the APIs whose call on the graph is a cover
_HARMLESS = frozenset({"move", "convert", "allow_train_eval"})  # and those handed it harmlessly


def late_move(ctx: FileContext, cap: Capture, flows: list[FunctionFlow]) -> ast.expr | None:
    """Whether the moves the walk saw reach the capture's graph (`cap.retrained`) come, in the
    function holding the capture, before every use that could train it: the first use some
    path reaches before them, or None when they come first. Shapes the order test cannot read
    keep the moves' excuse (None)."""
    holder = capture_holder(flows, cap)
    body = holder.node if holder is not None else None
    if not isinstance(body, _BODIES):
        return None
    up = parents(body)
    names = {_moved_name(move, up) for move in cap.retrained}
    name = names.pop() if len(names) == 1 else None
    if name is None or ("." in name and name.partition(".")[0] != self_name(body)):
        return None  # moves of another attribute, of another name each, or outside this body's own code
    moves = frozenset(id(m) for m in cap.retrained)
    for sink in cap.flows("qat"):
        binding = statement_around(sink.node, up)
        if binding is None or (isinstance(up.get(id(sink.node)), ast.Call) and id(up[id(sink.node)]) in moves):
            continue  # in a helper (the graph comes back from a call), or moved where it is made
        if not _binds(binding, name, sink.node):
            continue  # bound to another name first: not read
        found = moved_first(ctx, body, name, binding, moves)
        if isinstance(found, (ast.Name, ast.Attribute)):
            return found
    return None


def handed_move(ctx: FileContext, cap: Capture, flows: list[FunctionFlow]) -> bool:
    """Each QAT graph of the capture is bound to a name in the function holding it, and handed
    to a function of the module that moves its parameter (`moving_helper`: `train_mode(prepared)`
    with `def train_mode(gm): move_exported_model_to_train(gm)`) before any use a path from
    the binding reaches could train it: a move the walk does not see, as it does not follow the
    graph into the function."""
    holder = capture_holder(flows, cap)
    body = holder.node if holder is not None else None
    sinks = cap.flows("qat")
    if not isinstance(body, _BODIES) or not sinks or not may_hand(ctx, body):
        return False  # (no function it calls may move anything)
    up = parents(body)
    for sink in sinks:
        binding = statement_around(sink.node, up)
        if not isinstance(binding, ast.Assign) or len(binding.targets) != 1:
            return False
        target = binding.targets[0]
        if not isinstance(target, ast.Name) or not _binds(binding, target.id, sink.node):
            return False
        if not _hands_to_mover(ctx, body, target.id):
            return False  # no such call: the order test below would find nothing new
        if moved_first(ctx, body, target.id, binding) is not True:
            return False
    return True


def _hands_to_mover(home: FileContext, body: ast.AST, name: str) -> bool:
    """`body`'s own code hands `name` to a function that moves that parameter (`moving_callees`:
    one of the module, a method of the class, one imported from another module of the project)."""
    for node in own_nodes(body):
        if isinstance(node, ast.Call) and any(spells(a, name) for a in (*node.args, *(k.value for k in node.keywords))):
            found = handed(home, body, node, name)
            if found is not None and moving_helper(*found):
                return True
    return False


def _moved_name(move: ast.Call, up) -> str | None:
    """The name a recorded move is of: `move_exported_model_to_train(name)` (or `model=name`),
    or `name.train()` after `allow_exported_model_train_eval(name)`; None for anything else,
    and for a move outside the body's own code (in a lambda, or not in the body at all)."""
    node = up.get(id(move))
    while node is not None and not isinstance(node, SCOPES) and up.get(id(node)) is not None:
        node = up.get(id(node))
    if node is None or up.get(id(node)) is not None:
        return None  # outside the body, or in a scope the body holds
    func = move.func
    if isinstance(func, ast.Attribute) and func.attr == "train" and not move.args[1:]:
        graph = func.value
    else:
        graph = argument(move, 0, ("model",))
    return _spelling(graph)


def self_name(body: ast.AST) -> str | None:
    """The first parameter of the function `body`: a method's instance."""
    if not isinstance(body, _FUNCS):
        return None
    params = [*body.args.posonlyargs, *body.args.args]
    return params[0].arg if params else None


def _spelling(node: ast.AST) -> str | None:
    """`name`, or `self.attr` for an attribute of a name (the graph held on `self`)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


def _binds(stmt: ast.stmt, name: str, value: ast.AST) -> bool:
    """`name = <...value...>` (or `self.attr = ...`): one target, the name."""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return False
    return spells(stmt.targets[0], name) and any(n is value for n in ast.walk(stmt.value))


def moved_first(
    home: FileContext,
    body: ast.AST,
    name: str,
    binding: ast.stmt | None,
    recorded=frozenset(),
    depth: int = 0,
    *,
    unused=None,
    also=None,
):
    """The graph `binding` binds to `name` in `body` is moved (or converted) before any use a
    path from `binding` reaches could train it: True when so and some move was found, the
    first use that comes before them otherwise, None when it cannot be read (a rebinding of the
    name first, a function in `body` naming it), `unused` when nothing moves it and no use
    could train it.
    `name` may be `self.attr`: a graph held on the instance. `recorded`: ids of the calls the walk saw move the graph
    (an alias of the move function, `.train()` after the allow), besides the ones named here.
    A `binding` of None: the parameter `name` of the function `body`, from its start.
    `also(node, up)`: other nodes that are uses only a move before them excuses (a call of
    another method, which may train a graph held on `self`); `body` itself among them is its
    end, and a `return` its own."""
    up = parents(body)
    chains, blocks = statement_chains(body)
    start = chains.get(id(binding)) if binding is not None else ((id(body.body), -1, False),)
    if start is None:
        return None
    moves = _Moves(home, body, name, up, recorded, depth)
    covers = [
        chains[id(s)]
        for s in ast.walk(body)
        if id(s) in chains and runs_after(start, chains[id(s)]) and moves.moving(s)
    ]
    uses = []
    for node in own_nodes(body):
        if isinstance(node, SCOPES):
            if any(spells(n, name) for n in ast.walk(node)):
                return None
        elif spells(node, name) or (also is not None and also(node, up)):
            stmt = node if isinstance(node, ast.Return) else statement_around(node, up)
            chain = chains.get(id(stmt))
            if stmt is not binding and chain is not None and runs_after(start, chain):
                store = isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del))
                uses.append(((stmt.lineno, stmt.col_offset, store, node.lineno, node.col_offset), chain, store, node))
    if also is not None and also(body, up):  # its end: past its last statement
        uses.append(((float("inf"),), ((id(body.body), len(body.body), False),), False, body))
    if not uses and not covers:
        return unused
    # Statement by statement, what a statement reads before what it binds.
    for _, chain, store, node in sorted(uses, key=lambda u: u[0]):
        if any(cover_reaches(c, chain) or leaves_through(c, start, chain, blocks) for c in covers):
            continue
        if not spells(node, name):
            return node  # a use only a move excuses
        parent = up.get(id(node))
        if store:
            if isinstance(parent, ast.Assign) and (
                moves.call(parent.value, bound=True) or self_returned(parent.value, name)
            ):
                continue  # `model = move_exported_model_to_train(model)`, `model = model.to(dev)`
            return None  # another value from here on
        if isinstance(parent, ast.Call) and parent.func is not node and moves.call(parent, _HARMLESS):
            continue
        if isinstance(parent, (ast.keyword, ast.Attribute)) and moves.call(up.get(id(parent)), _HARMLESS):
            continue  # `move_exported_model_to_train(model=model)`, `model.train()` after the allow
        if isinstance(parent, ast.Attribute) and self_returned(up.get(id(parent)), name):
            around = up.get(id(up.get(id(parent))))
            if isinstance(around, ast.Assign) and len(around.targets) == 1 and spells(around.targets[0], name):
                continue  # `model = model.to(dev)`: the same graph
        if neutral_use(node, up) or handed_to_neutral(home, node, up, 1):
            continue
        return node
    return True if covers else unused


class _Moves:
    """What moves (or converts) the graph `name` in `body`: the APIs, a call the walk recorded,
    and a function of the module it is handed to that moves that parameter on every path
    before anything could train it (`moving_helper`)."""

    def __init__(self, home: FileContext, body: ast.AST, name: str, up, recorded, depth: int):
        self.home, self.body, self.name, self.up, self.recorded, self.depth = home, body, name, up, recorded, depth
        self.resolver = None

    def call(self, call: ast.AST, kinds=_COVERS, bound: bool = False) -> bool:
        """`call` moves `name`: `move_exported_model_to_*(name)` (or `model=name`), or
        `convert_pt2e(name)`, or a call the walk recorded, or `helper(name)` whose function
        moves its parameter (and returns it, when the result is `bound` to `name`)."""
        if not isinstance(call, ast.Call):
            return False
        if id(call) in self.recorded:
            return _moved_name(call, self.up) == self.name
        graph = argument(call, 0, ("model",))
        if spells(graph, self.name):
            self.resolver = self.resolver or _resolver(self.home, self.body)
            kind = api_kind(call, self.resolver.qualname)
            if kind is not None:
                return kind in kinds
        if self.depth >= MAX_DEPTH:
            return False
        found = handed(self.home, self.body, call, self.name) or self_handed(self.home, self.body, call, self.name)
        if found is None:
            return False
        home, func, param = found
        return moving_helper(home, func, param, self.depth + 1) and (not bound or _returns(func, param))

    def moving(self, stmt: ast.stmt, loops: bool = True) -> bool:
        """A statement of its own moving the graph, or one whose every way through does."""
        if isinstance(stmt, (ast.Expr, ast.Assign)):
            bound = isinstance(stmt, ast.Assign) and any(spells(t, self.name) for t in stmt.targets)
            return self.call(stmt.value, bound=bound)
        if isinstance(stmt, ast.If):
            return (
                bool(stmt.orelse)
                and any(self.moving(s, loops) for s in stmt.body)
                and any(self.moving(s, loops) for s in stmt.orelse)
            )
        if isinstance(stmt, (ast.With, ast.AsyncWith)) or (loops and isinstance(stmt, LOOPS)):
            # A loop moving in its body moves on the pass that trains, and is taken to run.
            return any(self.moving(s, loops) for s in stmt.body)
        return False


def moving_helper(home: FileContext, func: ast.AST, param: str, depth: int = 1) -> bool:
    """The function `func` moves (or converts) its parameter `param` on every path, before
    anything in it could train it (`moved_first` from its start): a statement of its own body
    does, or an `if` whose two arms both do, or a `with` (not a loop, which may not run),
    and no `return` or `yield` comes before it. `def train_mode(gm):
    move_exported_model_to_train(gm)`; not one that moves it on one branch, moves another
    argument, or a copy."""
    key = ("moved_graphs.helper", id(func), param, depth)  # deeper, fewer helpers are followed
    found = home.cache.get(key)
    if found is None:
        found = home.cache[key] = _moving_helper(home, func, param, depth)
    return found


def _moving_helper(home: FileContext, func: ast.AST, param: str, depth: int) -> bool:
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(func)):
        return False  # a generator: the call runs none of its body
    if moved_first(home, func, param, None, depth=depth) is not True:
        return False
    moves = _Moves(home, func, param, parents(func), frozenset(), depth)
    for stmt in func.body:
        if moves.moving(stmt, loops=False):
            return True
        if any(isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)) for n in _own_walk(stmt)):
            return False  # a path that leaves before the move
    return False


def _own_walk(stmt: ast.stmt):
    """The nodes of `stmt` outside the functions and classes it holds."""
    stack = [stmt]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(n for n in ast.iter_child_nodes(node) if not isinstance(n, SCOPES))


def _returns(func: ast.AST, param: str) -> bool:
    """Every way out of `func` returns its parameter `param`, as it was handed in."""
    if not func.body or not isinstance(func.body[-1], ast.Return):
        return False
    returns = [n for s in func.body for n in _own_walk(s) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom))]
    return all(isinstance(r, ast.Return) and spells(r.value, param) for r in returns)


def _resolver(home: FileContext, body: ast.AST) -> Resolver:
    """How names resolve in `body`: its own imports (`from torchao... import
    move_exported_model_to_train` in the function) and bindings first."""
    found = next((b for b in bodies(home.tree, home.scope, home.cache) if b.node is body), None)
    if found is None:
        return Resolver(home.scope, home.project, home.optable)
    return Resolver(home.scope, home.project, home.optable, found.local, found.class_scope)


__all__ = [
    "handed_move",
    "late_move",
    "moved_first",
    "moving_helper",
    "self_name",
]
