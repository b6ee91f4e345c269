"""The function a call hands QAT's prepared graph to, where that function may move it: QL202's
order test (`moved_graphs`) then asks whether it moves its parameter on every path.

Three kinds are read, each only where the function that runs is the one read:

- `train_mode(gm)`: an undecorated function of the module;
- `self._to_train(gm)` in a method: the class's own undecorated method, when nothing could
  override it (no other `def` of that name in the module, no other module of the project
  whose text holds the name: a subclass there may);
- `to_train(gm)` imported from another module of the project (`from .utils import to_train`,
  through re-exports), read from the checked module only: that module becomes a dependency of
  the check (`module_scope`, `read_module`), so an edit of it reaches the check (editor, cache).

A cheap gate comes first each time: the function's text names a move (`movers`).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.method_references import owner_class
from qlint.analysis.flow.model_apis import classify_call
from qlint.analysis.flow.project_search import named_in_text
from qlint.analysis.graphs.project_texts import read_module
from qlint.analysis.names.scope import parameter_at
from qlint.analysis.tree_walk import own_nodes
from qlint.rules.base import FileContext

MAX_DEPTH = 2  # functions handed the graph, followed that deep
_MOVE_WORD = "move_exported_model_to_"  # in the text of every move a helper makes
_APART = "moving_callees.apart"  # set in the context of a module read here: its imports are not followed
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def movers(home: FileContext) -> frozenset[str]:
    """The functions of the module that may move a graph: those whose text names a move
    (`move_exported_model_to_*`, under any alias its import gives it) and, `MAX_DEPTH` deep,
    those whose text names such a function. A cheap gate before any helper is read."""
    found = home.cache.get("moving_callees.movers")
    if found is None:
        found = home.cache["moving_callees.movers"] = _mover_names(home)
    return found


def _mover_names(home: FileContext) -> frozenset[str]:
    text = home.text
    if _MOVE_WORD not in text:
        return frozenset()
    funcs = home.scope.functions.items()
    texts = {name: _text_of(home, func) for name, func in funcs if isinstance(func, ast.FunctionDef)}
    aliases = [f"{name}(" for name, full in home.scope.imports.items() if _MOVE_WORD in full and _MOVE_WORD not in name]
    movers = {name for name, words in texts.items() if _MOVE_WORD in words or any(a in words for a in aliases)}
    for _ in range(MAX_DEPTH - 1):
        movers |= {name for name, words in texts.items() if any(f"{m}(" in words for m in movers)}
    return frozenset(movers)


def _may_move(home: FileContext, words: str) -> bool:
    """A function of text `words` names a move, or a function of the module that may move."""
    if _MOVE_WORD not in home.text:
        return False
    needles = home.cache.get("moving_callees.needles")
    if needles is None:
        aliases = (name for name, full in home.scope.imports.items() if _MOVE_WORD in full)
        needles = home.cache["moving_callees.needles"] = (_MOVE_WORD, *(f"{n}(" for n in (*movers(home), *aliases)))
    return any(n in words for n in needles)


def _text_of(home: FileContext, func: ast.AST) -> str:
    text, starts = home.text, home.lines.starts
    if func.end_lineno is None:
        return ""
    end = starts[func.end_lineno] if func.end_lineno < len(starts) else len(text)
    return text[starts[func.lineno - 1] : end]


def handed(home: FileContext, body: ast.AST, call: ast.Call, name: str) -> tuple[FileContext, ast.AST, str] | None:
    """(the module, the function, its parameter) that `call`, written in `body`, hands the graph
    `name` to once (positionally or by keyword), when that function is one of the three kinds
    read and its text may move it."""
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    given = [a for a in (*call.args, *(kw.value for kw in call.keywords)) if spells(a, name)]
    if len(given) != 1:
        return None
    found = callee(home, body, call.func)
    if found is None:
        return None
    other, func, offset = found
    if func.decorator_list or func.args.vararg or func.args.kwarg:
        return None  # (a coroutine function's call runs none of its body either)
    param = parameter(func, call, given[0], offset)
    return (other, func, param) if param is not None else None


def may_hand(home: FileContext, body: ast.AST) -> bool:
    """A cheap gate, from texts: `body` (a function of the module, or the module) calls a name
    that may be a function moving what it is handed (`callee`'s three kinds)."""
    words = home.text if isinstance(body, ast.Module) else _text_of(home, body)
    if any(f"{m}(" in words for m in (*movers(home), *_method_movers(home, body))):
        return True
    own = home.scope.functions
    return any(f"{n}(" in words and _imported(home, n) for n in home.scope.imports if n not in own)


def _method_movers(home: FileContext, body: ast.AST) -> tuple[str, ...]:
    """The names of the methods of the class whose method `body` is that may move a graph."""
    cls = owner_class(home, body) if isinstance(body, _FUNCS) and _MOVE_WORD in home.text else None
    if cls is None:
        return ()
    return tuple(name for name, method in cls.methods.items() if _method_may_move(home, method))


def _method_may_move(home: FileContext, method: ast.AST) -> bool:
    """`_may_move` of a method's text, once per method and check: every method of a test suite
    asks which methods of its class may move a graph (ao's test_quantize_pt2e.py: ~280 texts
    of methods sliced and searched again for each QAT test asking)."""
    key = ("moving_callees.method_may_move", id(method))
    found = home.cache.get(key)
    if found is None or found[0] is not method:
        found = home.cache[key] = (method, _may_move(home, _text_of(home, method)))
    return found[1]


def self_handed(home: FileContext, body: ast.AST, call: ast.Call, name: str) -> tuple[FileContext, ast.AST, str] | None:
    """For a graph held on the instance (`name` is `self.prepared`): `self._to_train()`, a
    method of the class (read as `callee` reads one) that is handed nothing and moves
    `self.prepared` itself; (the module, the method, the graph as the method spells it)."""
    receiver, dot, attr = name.partition(".")
    func = call.func
    if not dot or call.args or call.keywords or not isinstance(func, ast.Attribute):
        return None
    if not (isinstance(func.value, ast.Name) and func.value.id == receiver):
        return None
    method = _own_method(home, body, receiver, func.attr)
    params = [*method.args.posonlyargs, *method.args.args] if method is not None else []
    if len(params) != 1 or method.args.vararg or method.args.kwarg or method.args.kwonlyargs:
        return None
    return home, method, f"{params[0].arg}.{attr}"


def callee(home: FileContext, body: ast.AST, func: ast.expr) -> tuple[FileContext, ast.AST, int] | None:
    """(its module, the def, 1 when `self` fills its first parameter) of a function that may
    move what it is handed, called as `func` in `body`."""
    if isinstance(func, ast.Name):
        own = home.scope.functions.get(func.id)
        if own is not None:
            found = (home, own, 0) if isinstance(own, ast.FunctionDef) and func.id in movers(home) else None
        else:
            found = _imported(home, func.id)
        # A local of that name (a parameter, an assignment) is not the module's function.
        return found if found is None or not _bound_in(home, body, func.id) else None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        method = _own_method(home, body, func.value.id, func.attr)
        return (home, method, 1) if method is not None else None
    return None


def _own_method(home: FileContext, body: ast.AST, receiver: str, name: str) -> ast.AST | None:
    """`self.<name>` in a method `body` of a top-level class: that class's own def, when no
    other could run in its place."""
    if not isinstance(body, _FUNCS) or home.cache.get(_APART):
        return None  # (another module's: what it reads would be no dependency of the check)
    params = [*body.args.posonlyargs, *body.args.args]
    cls = owner_class(home, body)
    if not params or params[0].arg != receiver or cls is None:
        return None
    method = cls.methods.get(name)
    if not isinstance(method, ast.FunctionDef) or not _method_may_move(home, method):
        return None
    key = ("moving_callees.sole", name)
    sole = home.cache.get(key)
    if sole is None:
        defs = stores = 0
        for n in ast.walk(home.tree):
            defs += isinstance(n, _FUNCS) and n.name == name
            stores += isinstance(n, ast.Attribute) and n.attr == name and type(n.ctx) is not ast.Load
        # A subclass in the module, or one in another module of the project, may override it;
        # `self.<name> = ...` hides it.
        sole = home.cache[key] = defs == 1 and not stores and not named_in_text(home, name)
    return method if sole else None


def _bound_in(home: FileContext, body: ast.AST, name: str) -> bool:
    """`name` is a parameter of the function `body` or bound in its own code (assigned,
    imported, defined); a module's own bindings are the scope's."""
    if not isinstance(body, _FUNCS):
        return False
    key = ("moving_callees.bound", id(body), name)
    found = home.cache.get(key)
    if found is None:
        found = home.cache[key] = _binds_locally(body, name)
    return found


def _binds_locally(body: ast.AST, name: str) -> bool:
    args = body.args
    if any(a.arg == name for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a):
        return True
    for node in own_nodes(body):
        if isinstance(node, ast.Name) and node.id == name and type(node.ctx) is not ast.Load:
            return True
        if isinstance(node, (*_FUNCS, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name) == name for a in node.names):
            return True
    return False


def _imported(home: FileContext, name: str) -> tuple[FileContext, ast.AST, int] | None:
    """`name` imported from another module of the project, where it is a function that may move
    what it is handed (followed through three re-exports)."""
    full = home.scope.imports.get(name)
    if not full or "." not in full or home.cache.get(_APART):
        return None
    key = ("moving_callees.imported", name)
    if key in home.cache:
        return home.cache[key]
    found = home.cache[key] = _imported_function(home, full)
    return found


def _imported_function(home: FileContext, full: str) -> tuple[FileContext, ast.AST, int] | None:
    if classify_call(full, None) is not None:
        return None  # `prepare_qat_pt2e`, `export`: an API, read as one (in torchao's own tree too)
    module, _, attr = full.rpartition(".")
    for _ in range(3):
        scope = home.project.module_scope(module, home.path)
        if scope is None:
            return None  # a library's, or no module the project holds
        if attr in scope.functions:
            break
        module, _, attr = scope.imports.get(attr, "").rpartition(".")
        if not module:
            return None
    else:
        return None
    called = {_called_name(n) for n in ast.walk(scope.functions[attr]) if isinstance(n, ast.Call)}
    aliases = {name for name, imported in scope.imports.items() if _MOVE_WORD in imported}
    if not any(_MOVE_WORD in name or name in aliases or name in scope.functions for name in called):
        return None  # calls no move, nor a function of its module (its read is recorded by `module_scope`)
    other = read_module(home, scope.path)
    if other is None:
        return None
    other.cache[_APART] = True
    func = other.scope.functions.get(attr)
    return (other, func, 0) if isinstance(func, ast.FunctionDef) and attr in movers(other) else None


def _called_name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def parameter(func: ast.AST, call: ast.Call, node: ast.AST, offset: int = 0) -> str | None:
    """The parameter of `func` that `call` hands `node` to (positionally or by keyword);
    `offset`: leading parameters the call does not fill (`self`)."""
    index = next((i for i, a in enumerate(call.args) if a is node), None)
    keyword = next((kw.arg for kw in call.keywords if kw.value is node), None) if index is None else None
    return parameter_at(func.args, offset, index, keyword)


def spells(node: ast.AST, name: str) -> bool:
    """`node` is `name`, or `self.attr` for a `name` of "self.attr"."""
    if isinstance(node, ast.Name):
        return node.id == name
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and "." in name
        and name == f"{node.value.id}.{node.attr}"
    )


__all__ = ["MAX_DEPTH", "callee", "handed", "may_hand", "movers", "parameter", "self_handed", "spells"]
