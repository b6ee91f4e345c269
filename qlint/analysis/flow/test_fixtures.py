"""pytest fixtures named by a test's parameters (issue 14, item 4): `def test_q(model, q)` gets
what the `@pytest.fixture` function `model` returns, found as pytest finds it, so the walk
binds the parameter to that result as it binds a `parametrize` value (`model_builds`).

pytest looks a name up in the test's class, then its module, then the `conftest.py` of the
test's directory and of each parent; the nearest definition wins, and a parametrization of the
same name (the test's, its class's, `pytestmark`, a `pytest_generate_tests` hook) replaces the
fixture. Only what can be read exactly is followed, anything else leaves the parameter as it
was (any mode a caller left it in):

- tests are `test*` functions of a `test_*.py` / `*_test.py` module, or `test*` methods of a
  `Test*` class written there without bases, decorators or fixtures of its own;
- a fixture is a module-level function whose only decorator is `pytest.fixture`, of function
  scope (a wider one hands every test the object earlier tests left behind), neither a
  generator nor `async`, and not renamed (`name=`: a module writing one is not read);
- a name the module binds otherwise (an imported fixture, an assignment) hides the conftests;
- a fixture's own parameters are fixtures too: bound from its module when that is a test
  module (pytest resolves them from the requesting test, which is then the same module); a
  conftest's fixture is followed only without parameters, since a test module may override
  what it requests.
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.names.resolver import Resolver
from qlint.lazy_patterns import lazy

_FIXTURE = frozenset({"pytest.fixture", "_pytest.fixtures.fixture"})
_PARAMETRIZE = frozenset({"pytest.mark.parametrize", "_pytest.mark.parametrize"})
_MARKS = ("pytest.mark.", "_pytest.mark.")
_CONFTEST = "conftest.py"
# A fixture renamed by its decorator (`@pytest.fixture(name="model")`): read from the text, so
# that no function body of the module needs reading to know no other name is renamed.
_RENAMED = lazy(r"@\s*(?:\w+\s*\.\s*)*fixture\s*\((?:[^()]|\([^()]*\))*\bname\s*=")
# Files that make a directory pytest's rootdir: no conftest above it is read.
_ROOT_FILES = ("pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


class Fixtures:
    """The fixtures visible to one test or fixture function (`site`); `owner` is the
    `ModelFlow` of its module."""

    def __init__(self, owner, own: ast.AST | None, class_scope=None):
        self.owner = owner
        self.own = own  # the fixture being walked: its own name is the next definition's, not followed
        self.class_scope = class_scope
        self.test_module = _test_module(owner.scope.path)

    def lookup(self, name: str) -> tuple[object, ast.FunctionDef] | None:
        """(the `ModelFlow` of its module, the fixture's def) that parameter `name` gets."""
        owner = self.owner
        scope = owner.scope
        held = self.class_scope
        if held is not None and (name in held.methods or name in held.assigns):
            return None  # the class's own fixture (a method), or a name it binds otherwise
        found = _in_module(owner, scope, name)
        if found is _HIDDEN:
            return None
        if found is not None:
            if found is self.own:
                return None
            if held is not None and _parameters(found):
                return None  # its parameters resolve from the class, which may override them
            return (owner, found) if self.test_module else None
        if not self.test_module:
            return None  # a conftest fixture's parameters: the requesting test decides them
        for path in _conftests(owner, scope.path):
            other = owner.project.scope_at(path)
            if other is None:
                return None
            found = _in_module(owner, other, name)
            if found is _HIDDEN:
                return None
            if found is not None:
                if _parameters(found):
                    return None
                flow = _flow_at(owner, other)
                return (flow, found) if flow is not None else None
        return None


_HIDDEN = object()  # bound by the module otherwise, or read no further


def site(owner, func: ast.AST, class_scope, resolver: Resolver) -> Fixtures | None:
    """The fixture lookup for the parameters of `func` when pytest calls it, else None."""
    if not isinstance(func, ast.FunctionDef) or func.args.vararg or func.args.kwarg:
        return None
    scope = owner.scope
    if class_scope is None:
        test = func.name.startswith("test") and _test_module(scope.path)
        if not (test or func.decorator_list) or scope.functions.get(func.name) is not func:
            return None
        if len(func.decorator_list) == 1 and _fixture(func, resolver):
            return Fixtures(owner, func)
        return Fixtures(owner, None) if test and _marks_only(func, resolver) else None
    cls = class_scope.node
    if (
        not func.name.startswith("test")
        or not cls.name.startswith("Test")
        or scope.classes.get(cls.name) is not class_scope
        or cls.decorator_list
        or any(not (isinstance(b, ast.Name) and b.id == "object") for b in cls.bases)
        or cls.keywords
        or "__init__" in class_scope.methods
        or not _test_module(scope.path)
        or not _marks_only(func, resolver)
    ):
        return None
    return Fixtures(owner, None, class_scope)


def parametrized_names(func: ast.AST, resolver: Resolver) -> set[str] | None:
    """The names the decorators of `func` parametrize (None: some cannot be read)."""
    names: set[str] = set()
    for deco in func.decorator_list:
        if not (isinstance(deco, ast.Call) and resolver.qualname(deco.func) in _PARAMETRIZE):
            continue
        first = deco.args[0] if deco.args else next((k.value for k in deco.keywords if k.arg == "argnames"), None)
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            names.update(n.strip() for n in first.value.split(","))
        elif isinstance(first, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in first.elts
        ):
            names.update(e.value for e in first.elts)
        else:
            return None
    return names


def _marks_only(func: ast.AST, resolver: Resolver) -> bool:
    """The test's decorators are pytest marks only: another (`mock.patch`) may hand it
    arguments of its own, or wrap it in anything."""
    for deco in func.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = resolver.qualname(target) or ""
        if not name.startswith(_MARKS):
            return False
    return True


def _fixture(func: ast.AST, resolver: Resolver) -> bool:
    """`func` is decorated as a fixture (however written)."""
    for deco in getattr(func, "decorator_list", ()):
        target = deco.func if isinstance(deco, ast.Call) else deco
        if resolver.qualname(target) in _FIXTURE:
            return True
    return False


def _followed_fixture(func: ast.AST, resolver: Resolver) -> bool:
    """A fixture whose result is what its body returns to each test afresh."""
    if not isinstance(func, ast.FunctionDef) or len(func.decorator_list) != 1:
        return False
    deco = func.decorator_list[0]
    if isinstance(deco, ast.Call):
        if deco.args or resolver.qualname(deco.func) not in _FIXTURE:
            return False
        for kw in deco.keywords:
            if kw.arg == "scope" and not (isinstance(kw.value, ast.Constant) and kw.value.value == "function"):
                return False
            if kw.arg in (None, "params", "name"):
                return False
    elif resolver.qualname(deco) not in _FIXTURE:
        return False
    return not _generator(func)


def _generator(func: ast.FunctionDef) -> bool:
    stack = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _parameters(func: ast.FunctionDef) -> bool:
    args = func.args
    return bool(args.posonlyargs or args.args or args.kwonlyargs)


def _in_module(owner, scope, name: str):
    """The followed fixture `name` of module `scope`; None when the module defines no fixture of
    that name; `_HIDDEN` when it binds the name otherwise, or cannot be read for it."""
    if _renames(owner, scope.path) or "pytest_generate_tests" in scope.functions or "pytestmark" in scope.assigns:
        return _HIDDEN
    if name in scope.imports or name in scope.assigns or name in scope.classes:
        return _HIDDEN
    if name not in scope.functions:
        return None
    func = scope.functions.get(name)
    resolver = Resolver(scope, owner.project, owner.optable)
    if not _fixture(func, resolver):
        return _HIDDEN  # a plain function of that name: no fixture here, but pytest may see one elsewhere
    return func if _followed_fixture(func, resolver) else _HIDDEN


def _renames(owner, path: str) -> bool:
    memo = owner.memo.fixtures
    found = memo.get(("renames", path))
    if found is None:
        text = owner.project.text(path) or ""
        found = memo["renames", path] = "fixture" in text and bool(_RENAMED.search(text))
    return found


def _conftests(owner, path: str) -> list[str]:
    """The conftest.py files pytest reads for a test at `path`, nearest first; each one looked
    for, there or not, is a dependency of the check (recorded at each lookup: the body analysed
    then depends on it)."""
    project = owner.project
    memo = owner.memo.fixtures
    directory = os.path.dirname(os.path.abspath(path))
    looked = memo.get(("conftests", directory))
    if looked is None:
        looked = memo["conftests", directory] = _looked_for(project, directory)
    for candidate, digest in looked:
        project.record_read(owner.scope.path, candidate, digest)
    return [candidate for candidate, digest in looked if digest]


def _looked_for(project, directory: str) -> list[tuple[str, str]]:
    """(conftest path, digest or "" when absent) from `directory` up to pytest's rootdir."""
    looked = []
    while True:
        candidate = os.path.join(directory, _CONFTEST)
        looked.append((candidate, project.digest(candidate) if os.path.isfile(candidate) else ""))
        parent = os.path.dirname(directory)
        if _top(directory) or parent == directory:
            return looked
        directory = parent


def _top(directory: str) -> bool:
    """pytest's rootdir: a directory with a `.git` entry or one of pytest's configuration files."""
    return any(os.path.exists(os.path.join(directory, f)) for f in (".git", *_ROOT_FILES))


def _flow_at(owner, scope):
    """The `ModelFlow` of a conftest module, held by its path in the check's memo (conftests are
    no importable module: several share the name `conftest`)."""
    key = "conftest:" + os.path.abspath(scope.path)
    modules = owner.memo.modules
    if key not in modules:
        modules[key] = type(owner)(scope, owner.project, owner.optable, owner.depth + 1, owner.memo)
    return modules[key]


def _test_module(path: str) -> bool:
    base = os.path.basename(path)
    return base.endswith(".py") and (base.startswith("test_") or base.endswith("_test.py"))


def fixture_call(func: ast.FunctionDef, path: str, arg: ast.arg) -> ast.Call:
    """The call of fixture `func` (of the module at `path`) a test's parameter `arg` stands for,
    placed on the parameter: a mode the fixture sets in another file is named there."""
    call = ast.Call(ast.Name(func.name, ast.Load()), [], [])
    for node in (call, call.func):
        ast.copy_location(node, arg)
        node.end_lineno, node.end_col_offset = arg.end_lineno, arg.end_col_offset
    call.qlint_fixture = (func.name, path)
    return call


def fixture_of(node: ast.AST | None) -> tuple[str, str] | None:
    """(name, path) of the fixture whose call `node` is (`fixture_call`), else None."""
    return getattr(node, "qlint_fixture", None)


__all__ = ["Fixtures", "fixture_call", "fixture_of", "parametrized_names", "site"]
