"""QL401 torch-ao-pt2e-import: PT2E API imported from where torch 2.13 no longer has it.

torch 2.13 ships neither `torch.ao.quantization.quantize_pt2e`, `.pt2e` nor `.quantizer`
(nor the pre-release `_quantize_pt2e`/`_pt2e`), and `torch.ao.quantization` no longer
re-exports `move_exported_model_to_eval` and friends: the code moved to
`torchao.quantization.pt2e`, the XNNPACK quantizer to ExecuTorch. The destinations come
from `qlint/data/pt2e_moves.json`, generated from what torchao and executorch export.

Three spellings are covered, alias-aware: `from <old> import a, b as c` (also
parenthesized, and mixed with eager names torch still ships), `import <old> [as m]` with
its uses, and attribute chains such as `torch.ao.quantization.quantize_pt2e.prepare_pt2e`
reached through `import torch`. Compatibility shims stay quiet: an old import in one
branch of a `try`/`except ImportError` or `if`/`else` whose other branch binds the same
names, and imports under a torch-version check.
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from collections import deque
from collections.abc import Iterator

from qlint import evidence
from qlint.analysis.edits import import_edits as ie
from qlint.analysis.edits.pt2e_moves import (
    OBSERVER_CONSUMERS,
    OLD_PACKAGE,
    SUCCESSOR_PACKAGES,
    Move,
    Moves,
    load_moves,
    names_a_moved_api,
    worst,
)
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.tree_walk import parents as tree_parents
from qlint.analysis.version_gates import ModuleConstants
from qlint.diagnostic import Applicability, Diagnostic, Edit, Fix
from qlint.evidence.moved_imports import MovedImportEvidence
from qlint.rules.base import FileContext, FixAvailability, Rule
from qlint.value_classes import value_class

_APPLICABILITY = {"safe": Applicability.SAFE, "unsafe": Applicability.UNSAFE}
_TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))


@value_class
class _Plan:
    """One name of a from-import: where it goes (`move is None`: it stays)."""

    alias: ast.alias
    move: Move | None
    fix: str = "display"

    @property
    def local(self) -> str:
        return self.alias.asname or self.alias.name

    def target(self) -> tuple[str, str]:
        """(module to import from, name to import) for a fixable move."""
        if self.move.is_module:
            parent, _, last = self.move.module.rpartition(".")
            return parent, last
        return self.move.module, self.move.name


@value_class
class _Twins:
    """The file's imports of torch.ao observers that torchao ships its own copies of.

    torchao's prepare_pt2e does not insert torch.ao observers (a `with_args` constructor
    raises, a bare class yields no quantize/dequantize nodes), so a fix that moves a file's
    quantizer API to torchao moves these along, and is unsafe: they may serve eager code too.
    """

    statements: dict[ast.ImportFrom, list[tuple[ast.alias, str, str]]]

    def applies(self, moved: list[Move]) -> bool:
        return bool(self.statements) and any(m.module and m.module.startswith(OBSERVER_CONSUMERS) for m in moved)

    def edits(self, ctx: FileContext, skip: ast.stmt | None = None) -> list[Edit] | None:
        out: list[Edit] = []
        for stmt, items in self.statements.items():
            if stmt is not skip:
                edits = ie.regroup_from_import(ctx, stmt, items)
                if edits is None:
                    return None
                out.extend(edits)
        return out

    def note(self) -> str:
        names = ", ".join(
            dict.fromkeys(f"`{a.asname or a.name}`" for items in self.statements.values() for a, _, _ in items)
        )
        return (
            f"; the file also uses torch.ao observers ({names}), which torchao's prepare_pt2e does not insert: "
            "import them from `torchao.quantization.pt2e` too"
        )


class TorchAoPt2eImport(Rule):
    code = "QL401"
    name = "torch-ao-pt2e-import"
    summary = "PT2E API imported from `torch.ao.quantization`, which torch 2.13 no longer ships"
    runtime_check = "qlint.runtime.checks.imports"
    evidence_type = MovedImportEvidence
    triggers = ("ao.quantization", "torch.ao", "import ao")
    text_trigger = "qlint.analysis.edits.pt2e_moves:names_a_moved_api"
    fix_availability = FixAvailability.SOMETIMES

    def triggered_by(self, text: str) -> bool:
        # torch's own tree mentions torch.ao in ~200 files; 7 of them name anything that moved.
        return names_a_moved_api(text)

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        moves = load_moves()
        parents = _Parents(ctx)
        owned_heads: set[str] = set()  # names bound by a reported import: their uses go with it
        plain: list[tuple[str, ...]] = []  # `import <old>` without `as`: owns chains by prefix
        twins = _twins(ctx, moves, parents)
        for stmt in _import_statements(ctx):
            if isinstance(stmt, ast.ImportFrom):
                diag = self._from_import(ctx, moves, stmt, parents, owned_heads, twins)
            elif isinstance(stmt, ast.Import):
                yield from self._import(ctx, moves, stmt, parents, owned_heads, plain, twins)
                continue
            else:
                continue
            if diag is not None:
                yield diag
        yield from self._attribute_uses(ctx, moves, parents, owned_heads, plain, twins)

    # -- from <module> import ... --------------------------------------------------------
    def _from_import(self, ctx, moves, stmt: ast.ImportFrom, parents, owned: set, twins: _Twins) -> Diagnostic | None:
        base = ie.import_base(ctx, stmt)
        if base is None or not (base == OLD_PACKAGE or moves.removed_module(base)):
            return None
        plans = [_Plan(a, moves.find(f"{base}.{a.name}") if a.name != "*" else moves.find(base)) for a in stmt.names]
        moved = [p for p in plans if p.move is not None]
        owned.update(p.local for p in moved)  # their uses are reported with the import, or deliberate
        if not moved or _guarded(ctx, moves, stmt, parents, {p.local for p in moved}):
            return None
        if _after_shim(ctx, moves, stmt, parents):
            return None
        for p in moved:
            p.fix = _fix_level(ctx, p.move) if p.alias.name != "*" else "display"
            if p.move.is_module and p.fix != "display":
                p.fix = worst(p.fix, _module_alias_fix(ctx, moves, p.local, p.move))
        fixable = [p for p in moved if p.fix != "display" and p.move.module]
        items = [(p.alias, *p.target()) for p in fixable]
        level = worst(*(p.fix for p in fixable))
        edits, extra, note = None, [], ""
        if fixable and twins.applies([p.move for p in fixable]):
            items += twins.statements.get(stmt, [])
            extra, note, level = twins.edits(ctx, skip=stmt), twins.note(), "unsafe"
        if fixable and extra is not None:
            edits = ie.regroup_from_import(ctx, stmt, items)
        if base == OLD_PACKAGE:
            names = ", ".join(f"`{p.alias.name}`" for p in moved)
            subject = f"torch 2.13's `{OLD_PACKAGE}` no longer has {names}"
        else:
            subject = f"`{base}` is gone from torch 2.13"
        subject += _reached_handler(ctx, moves, stmt, parents)
        message, help_ = _message(moves, [p.move for p in moved], subject, note)
        if edits:
            targets: dict[str, list[str]] = {}
            for p in fixable:
                targets.setdefault(p.target()[0], []).append(f"`{p.local}`")
            what = "; ".join(f"{', '.join(names)} from `{module}`" for module, names in targets.items())
            fix = Fix(_APPLICABILITY[level], f"Import {what}", (*edits, *extra))
        else:
            fix = _display_fix([p.move for p in moved])
        return ctx.diagnostic(self, stmt, message, fix, evidence=_evidence([p.move for p in moved]), help=help_)

    # -- import <module> [as m] ----------------------------------------------------------
    def _import(self, ctx, moves, stmt: ast.Import, parents, owned: set, plain: list, twins) -> Iterator[Diagnostic]:
        for alias in stmt.names:
            if not moves.removed_module(alias.name):
                continue
            move = moves.find(alias.name)
            local = alias.asname or alias.name.split(".")[0]
            if alias.asname:
                owned.add(alias.asname)
            if _guarded(ctx, moves, stmt, parents, {local}) or _after_shim(ctx, moves, stmt, parents):
                if not alias.asname:
                    plain.append(tuple(alias.name.split(".")))
                continue
            if alias.asname:
                fix_level = _fix_level(ctx, move) if move.is_module and move.known else "display"
                if fix_level != "display":
                    fix_level = worst(fix_level, _module_alias_fix(ctx, moves, alias.asname, move))
                edit = ie.alias_name_edit(ctx, alias, move.module) if fix_level != "display" else None
                fix = Fix(_APPLICABILITY[fix_level], f"Import `{move.module}`", (edit,)) if edit else None
            else:
                prefix = tuple(alias.name.split("."))
                plain.append(prefix)
                fix = self._plain_import_fix(ctx, moves, stmt, alias, move, prefix)
            fix, note = _with_twins(ctx, twins, [move], fix)
            subject = f"`{alias.name}` is gone from torch 2.13" + _reached_handler(ctx, moves, stmt, parents)
            message, help_ = _message(moves, [move], subject, note)
            fix = fix or _display_fix([move])
            yield ctx.diagnostic(self, alias, message, fix, evidence=_evidence([move]), help=help_)

    def _plain_import_fix(self, ctx, moves: Moves, stmt, alias: ast.alias, move: Move, prefix) -> Fix | None:
        """`import torch.ao.quantization.quantize_pt2e` and its `torch.ao....prepare_pt2e(...)` uses."""
        uses = list(_chain_moves(ctx, moves, prefix))
        if any(_fix_level(ctx, m) == "display" or m.module is None for _, m in uses):
            return None
        modules = list(dict.fromkeys(m.module for _, m in uses)) or (
            [move.module] if _fix_level(ctx, move) != "display" else []
        )
        if not modules:
            return None
        edit = ie.alias_name_edit(ctx, alias, ", ".join(modules))
        if edit is None:
            return None
        edits = [edit, *(Edit(ctx.range_of(node), m.new) for node, m in uses)]
        head = prefix[0]
        rewritten = {id(ie.chain_head(node)) for node, _ in uses}
        rewritten_alias = lambda a: a is alias or (a.asname is None and moves.removed_module(a.name) is not None)  # noqa: E731
        if ie.name_still_needed(ctx, head, rewritten) and not ie.binds_elsewhere(ctx, head, rewritten_alias):
            edits.append(ie.insert_before(ctx, stmt, f"import {head}"))
        level = worst(*(_fix_level(ctx, m) for _, m in uses)) if uses else _fix_level(ctx, move)
        return Fix(_APPLICABILITY[level], f"Import {', '.join(f'`{m}`' for m in modules)}", tuple(edits))

    # -- torch.ao.quantization.<moved> through `import torch` ----------------------------
    def _attribute_uses(self, ctx, moves: Moves, parents, owned: set, plain: list, twins) -> Iterator[Diagnostic]:
        seen: set[int] = set()
        # Only chains whose head could lead to torch: an import of torch, or a name bound in
        # the module or the function (an alias such as `tq = torch.ao.quantization`).
        torchy = {n for n, full in ctx.scope.imports.items() if full.split(".")[0] == "torch"} | set(ctx.scope.assigns)
        walked = [
            (body, Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope))
            for body in bodies(ctx.tree, ctx.scope, ctx.cache)
        ]
        module_resolver = Resolver(ctx.scope, ctx.project, ctx.optable)
        # A chain names the old package through its head (a name naming the package or below)
        # or through an attribute `quantization` after a head naming `torch` or `torch.ao`:
        # its rows hold one of these words, each a whole identifier (`quantization_annotation`
        # and `torchao` are other words). A body's own heads (its locals, its class's
        # attributes for `self.x`) are looked for in that body only.
        words = frozenset(
            {"quantization", *(h for h in torchy - owned if _names_old(module_resolver.qualname(ast.Name(h))))}
        )
        shared = _identifier_rows(ctx, words)
        for body, resolver in walked:
            own = _chain_words(body, resolver, owned) - words
            rows = shared if not own else _identifier_rows(ctx, words | own)
            inner: set[int] = set()  # attributes inside a longer chain (walked after it)
            heads: dict[str, str | None] = {}  # a chain's name is its head's name plus the rest
            for node in body.nodes(rows, _ATTRIBUTES):
                if isinstance(node.value, ast.Attribute):
                    inner.add(id(node.value))
                if id(node) in inner:
                    continue
                parts = dotted_parts(node)
                if parts is None or parts[0] in owned or not (parts[0] in torchy or _bound_in(body, parts[0])):
                    continue
                if any(tuple(parts[: len(p)]) == p for p in plain):
                    continue
                if parts[0] not in ("self", "cls"):  # `self.x` resolves through the class instead
                    if parts[0] not in heads:
                        heads[parts[0]] = resolver.qualname(ast.Name(parts[0]))
                    head = heads[parts[0]]
                    if head is None or not ".".join([head, *parts[1:]]).startswith(OLD_PACKAGE + "."):
                        continue
                hit = _outermost_move(resolver, moves, node)
                if hit is None or id(hit[0]) in seen or ie.guarded(hit[0], parents, set(), _versions(ctx)):
                    continue
                sub, move = hit
                seen.add(id(sub))
                yield self._use(ctx, moves, sub, move, _in_type_check(sub, parents), twins)

    def _use(self, ctx, moves: Moves, sub: ast.Attribute, move: Move, type_check: bool, twins: _Twins) -> Diagnostic:
        fix = None
        level = _fix_level(ctx, move)
        if type_check and level == "safe":
            # `isinstance(q, torch.ao...Quantizer)` tells legacy objects from new ones;
            # pointing it at the successor class changes what it accepts.
            level = "unsafe"
        if level != "display" and move.module and move.known:
            edits = [Edit(ctx.range_of(sub), move.new)]
            insert = ie.ensure_import(ctx, move.module)
            if insert is not None:
                edits.append(insert)
            fix = Fix(_APPLICABILITY[level], f"Use `{move.new}`", tuple(edits))
        fix, note = _with_twins(ctx, twins, [move], fix)
        message, help_ = _message(moves, [move], f"`{move.old}` is gone from torch 2.13", note)
        return ctx.diagnostic(self, sub, message, fix or _display_fix([move]), evidence=_evidence([move]), help=help_)


_ATTRIBUTES = frozenset({ast.Attribute})
_CHAIN_TYPES = (ast.Name, ast.Attribute)


def _chain_words(body, resolver: Resolver, owned: set) -> set[str]:
    """Words on a row of every chain of `body` that can name something under the old package,
    so only those rows are walked (module-level heads are asked once, by the caller).

    A chain's qualified name is its head's plus the rest: a head naming `torch` or
    `torch.ao` needs an attribute `quantization` later in the chain, a head naming the old
    package or below is itself the word, and `self.x`/`cls.x` resolve through the class's
    attributes, so those names count."""
    words = set()
    local = body.local
    for head in local.keys() - owned:
        if head in ("self", "cls") and body.class_scope is not None:
            continue
        # A local names a module only through its one value, a chain of names: not when its
        # first binding is anything else (a call, a parameter), which most locals are.
        values = local[head]
        if not values or type(values[0]) not in _CHAIN_TYPES:
            continue
        if _names_old(resolver.qualname(ast.Name(head))):
            words.add(head)
    # The function's own imports (`import torch.ao.quantization as tq` in its body).
    imported = getattr(local, "imports", ())
    words.update(h for h in imported if h not in owned and _names_old(resolver.qualname(ast.Name(h))))
    if body.class_scope is not None:
        words.update(body.class_scope.assigns)
    return words


def _bound_in(body, name: str) -> bool:
    """A local of the function, or a name one of its own import statements binds."""
    return name in body.local or name in getattr(body.local, "imports", ())


def _identifier_rows(ctx: FileContext, words: frozenset[str]) -> frozenset[int]:
    """Rows on which one of `words` occurs as a whole identifier (kept per check and word: the
    module's words are looked for once, whatever each body adds)."""
    key = ("ql401.rows", words)
    found = ctx.cache.get(key)
    if found is None:
        found = ctx.cache[key] = frozenset().union(*(_rows_of(ctx, word) for word in words))
    return found


def _rows_of(ctx: FileContext, word: str) -> frozenset[int]:
    key = ("ql401.word", word)
    found = ctx.cache.get(key)
    if found is None:
        text, starts, rows = ctx.text, ctx.lines.starts, set()
        at = text.find(word)
        while at != -1:
            end = at + len(word)
            if not (at and _continues(text[at - 1])) and not (end < len(text) and _continues(text[end])):
                rows.add(bisect_right(starts, at))
            at = text.find(word, end)
        found = ctx.cache[key] = frozenset(rows)
    return found


def _continues(char: str) -> bool:
    """`char` may be part of an identifier (so a word next to it is part of a longer one)."""
    return char.isalnum() or char == "_"


def _names_old(name: str | None) -> bool:
    return name is not None and (name == OLD_PACKAGE or name.startswith(OLD_PACKAGE + "."))


def _twins(ctx: FileContext, moves: Moves, parents) -> _Twins:
    found: dict[ast.ImportFrom, list[tuple[ast.alias, str, str]]] = {}
    for stmt in _import_statements(ctx):
        if not isinstance(stmt, ast.ImportFrom):
            continue
        base = ie.import_base(ctx, stmt)
        twins = []
        for alias in stmt.names:
            twin = moves.twin(f"{base}.{alias.name}")
            if twin is not None:
                module, _, name = twin.rpartition(".")
                twins.append((alias, module, name))
        if twins and not _guarded(ctx, moves, stmt, parents, {a.asname or a.name for a in stmt.names}):
            found[stmt] = twins
    return _Twins(found)


def _after_shim(ctx: FileContext, moves: Moves, stmt: ast.stmt, parents) -> bool:
    """An old import placed after a shim's old import in the same `try` body.

    The earlier import is a compatibility path (its handler imports the same names from
    elsewhere): on torch 2.13 it raises, the handler runs, and nothing after it in the body
    does. This one runs only where the old package still imports, so it breaks nothing on
    2.13; the handler's own imports are judged as ever. An earlier import that is itself
    reported (no working alternative) quiets nothing: fixing it makes this one run.
    """
    parent = parents.get(id(stmt))
    if not isinstance(parent, _TRY) or stmt not in parent.body:
        return False
    if not any(ie.catches_import_failure(h) for h in parent.handlers):
        return False
    for earlier in parent.body[: parent.body.index(stmt)]:
        names = _old_import_names(ctx, moves, earlier)
        if names and _guarded(ctx, moves, earlier, parents, names):
            return True
    return False


def _guarded(ctx: FileContext, moves: Moves, stmt: ast.stmt, parents, names: set[str]) -> bool:
    """`ie.guarded`, where a `try` body's import that fails with torchao 0.18 (`from
    torchao.quantization.pt2e import prepare_pt2e`: it is in `.quantize_pt2e`) is no working
    alternative: the handler's old import runs on torch 2.13 and raises there."""
    return ie.guarded(stmt, parents, names, _versions(ctx), lambda s: _failing_module(ctx, moves, s) is not None)


def _failing_module(ctx: FileContext, moves: Moves, stmt: ast.stmt) -> str | None:
    """The module `stmt` imports from (or imports) where the table shows it failing."""
    if isinstance(stmt, ast.ImportFrom):
        base = ie.import_base(ctx, stmt)
        if base is not None and (moves.lacks(base) or any(moves.lacks(base, a.name) for a in stmt.names)):
            return base
    elif isinstance(stmt, ast.Import):
        return next((a.name for a in stmt.names if moves.lacks(a.name)), None)
    return None


def _reached_handler(ctx: FileContext, moves: Moves, stmt: ast.stmt, parents) -> str:
    """A subject's tail when `stmt` sits in an import-error handler that runs because its `try`
    body's import fails (the user wrote it as a fallback: say why it is not one)."""
    child, parent = stmt, parents.get(id(stmt))
    while isinstance(parent, (*_TRY, ast.ExceptHandler)):
        if isinstance(parent, _TRY) and child in parent.handlers:
            failing = next((m for s in parent.body if (m := _failing_module(ctx, moves, s))), None)
            if failing is not None:
                return f" (the `try` body's import from `{failing}` fails with torchao 0.18, so this handler runs)"
        child, parent = parent, parents.get(id(parent))
    return ""


def _old_import_names(ctx: FileContext, moves: Moves, stmt: ast.stmt) -> set[str]:
    """The names `stmt` binds from where torch 2.13 has nothing (empty: it imports there)."""
    if isinstance(stmt, ast.ImportFrom):
        base = ie.import_base(ctx, stmt)
        if base is None or not (base == OLD_PACKAGE or moves.removed_module(base)):
            return set()
        return {
            a.asname or a.name
            for a in stmt.names
            if (moves.find(f"{base}.{a.name}") if a.name != "*" else moves.find(base)) is not None
        }
    if isinstance(stmt, ast.Import):
        return {a.asname or a.name.split(".")[0] for a in stmt.names if moves.removed_module(a.name)}
    return set()


def _versions(ctx: FileContext) -> ModuleConstants:
    """Module constants (here or imported from the project) that version checks are read through."""
    found = ctx.cache.get("ql401.versions")
    if found is None:
        found = ctx.cache["ql401.versions"] = ModuleConstants(ctx.scope, ctx.project, ctx.path)
    return found


def _import_statements(ctx: FileContext) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement in `ast.walk` order, from a breadth-first walk of statements
    and handlers only: statements never sit inside expressions, most of the tree."""
    found = ctx.cache.get("ql401.imports")
    if found is None:
        found = []
        queue: deque[ast.AST] = deque([ctx.tree])
        while queue:
            node = queue.popleft()
            cls = type(node)
            if cls is ast.Import or cls is ast.ImportFrom:
                found.append(node)
                continue
            fields = _BLOCK_FIELDS.get(cls)
            if fields is None:
                fields = _BLOCK_FIELDS[cls] = tuple(f for f in cls._fields if f in _BLOCKS)
            for name in fields:
                queue.extend(getattr(node, name))
        ctx.cache["ql401.imports"] = found
    return found


# The fields that hold statements, handlers and match cases (in `_fields` order, as
# `ast.iter_child_nodes` visits them): every other field holds expressions only.
_BLOCKS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})
_BLOCK_FIELDS: dict[type, tuple[str, ...]] = {}


class _Parents:
    """id(child) -> parent, built on the first question: most files have nothing to ask."""

    def __init__(self, ctx: FileContext):
        self._ctx = ctx
        self._map: dict[int, ast.AST] | None = None

    def get(self, key: int) -> ast.AST | None:
        """The parent of the node whose id is `key` (`tree_walk.parents`' keys)."""
        if self._map is None:
            self._map = tree_parents(self._ctx.tree)
        return self._map.get(key)


def _with_twins(ctx: FileContext, twins: _Twins, moved: list[Move], fix: Fix | None) -> tuple[Fix | None, str]:
    """Extend a fix that moves quantizer API with the move of the file's torch.ao observers."""
    if fix is None or not twins.applies(moved):
        return fix, ""
    extra = twins.edits(ctx)
    if extra is None:
        return None, twins.note()
    return Fix(Applicability.UNSAFE, fix.message + " and the torch.ao observers", (*fix.edits, *extra)), twins.note()


def _fix_level(ctx: FileContext, move: Move) -> str:
    """The data's fix level, except inside the package that replaced the API: torchao's own
    compatibility paths reach for the legacy torch classes on purpose, and pointing them at
    torchao would make `prepare_pt2e` dispatch to itself."""
    if ctx.module and move.module:
        for package in SUCCESSOR_PACKAGES:
            if _under(ctx.module, package) and _under(move.module, package):
                return "display"
    return move.fix


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _in_type_check(node: ast.AST, parents: dict) -> bool:
    parent = parents.get(id(node))
    if isinstance(parent, ast.Tuple):
        parent = parents.get(id(parent))
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in ("isinstance", "issubclass")
        and node is not parent.args[0]
    )


def _outermost_move(resolver: Resolver, moves: Moves, node: ast.Attribute) -> tuple[ast.Attribute, Move] | None:
    """The longest prefix of an attribute chain that names something torch removed."""
    sub: ast.AST = node
    fallback = None
    while isinstance(sub, ast.Attribute):
        qual = resolver.qualname(sub)
        if qual is None or not qual.startswith(OLD_PACKAGE + "."):
            return fallback
        move = moves.exact(qual)
        if move is not None:
            return sub, move
        if fallback is None and moves.removed_module(qual):
            fallback = (sub, moves.find(qual))
        sub = sub.value
    return fallback


def _chain_moves(ctx: FileContext, moves: Moves, prefix: tuple[str, ...]) -> Iterator[tuple[ast.Attribute, Move]]:
    """Uses of a plainly imported removed module: the longest known prefix of each chain."""
    parents = tree_parents(ctx.tree)
    old = ".".join(prefix)
    for node in ast.walk(ctx.tree):
        if not isinstance(node, ast.Attribute) or isinstance(parents.get(id(node)), ast.Attribute):
            continue
        parts = dotted_parts(node)
        if parts is None or tuple(parts[: len(prefix)]) != prefix:
            continue
        sub, best = node, None
        while isinstance(sub, ast.Attribute) and best is None:
            text = ".".join(dotted_parts(sub))
            if len(text) >= len(old):
                move = moves.exact(text)
                best = (sub, move) if move is not None else None
            sub = sub.value
        yield best or (node, moves.find(".".join(parts)))


def _module_alias_fix(ctx: FileContext, moves: Moves, local: str, move: Move) -> str:
    """How safely a name bound to a removed module can be rebound to its successor.

    Every `local.attr` in the file must name something that now lives at
    `successor.attr`; anything else (a name that moved elsewhere, or one qualified cannot
    vouch for) makes the rebinding display-only.
    """
    level = "safe"
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == local:
            used = moves.exact(f"{move.old}.{node.attr}")
            expected = f"{move.module}.{node.attr}"
            if used is None or used.new != expected:
                return "display"
            level = worst(level, used.fix)
    return level


_MOVED = (
    "The PT2E quantization flow moved from `torch.ao.quantization` to torchao (`torchao.quantization.pt2e`)"
    " and the backends; on torch 2.13 the old name no longer imports"
)


def _message(moves: Moves, moved: list[Move], subject: str, note: str = "") -> tuple[str, str | None]:
    """Message and help. One move: `<subject>: it is now <new>`; several: `<subject>`, with
    `a, b are in <module>; c is now <new>; d has no successor` as help. `note` joins the help."""
    details, groups = [], {}
    for m in moved:
        short = m.old.rpartition(".")[2]
        if m.module is None:
            details.append(f"`{short}` has no successor in {moves.describe_versions()}")
        elif m.prerelease:
            details.append(f"`{short}` was pre-release API; its successor `{m.new}` takes other arguments")
        elif not m.known:
            details.append(f"`{short}` is not in torch's history as qlint knows it; its module is now `{m.module}`")
        elif m.is_module or m.name != short:
            details.append(f"`{short}` is now `{m.new}`")
        else:
            groups.setdefault(m.module, []).append(f"`{short}`")
    for module, names in groups.items():
        details.append(f"{', '.join(names)} {'is' if len(names) == 1 else 'are'} in `{module}`")
    note = note.removeprefix("; ")
    if len(moved) == 1:
        details[0] = "it " + details[0].split("` ", 1)[1]
    if len(details) == 1:
        return f"{subject}: {details[0]}", (note[0].upper() + note[1:]) if note else _MOVED

    help_ = "; ".join(details)
    return subject, help_[0].upper() + help_[1:] + (f"; {note}" if note else "")


def _display_fix(moved: list[Move]) -> Fix:
    homes = [m.new for m in moved if m.new]
    if homes:
        return Fix(Applicability.DISPLAY_ONLY, "Import from " + ", ".join(f"`{h}`" for h in dict.fromkeys(homes)))
    return Fix(Applicability.DISPLAY_ONLY, "Remove the use: torchao and executorch have no successor")


def _evidence(moved: list[Move]) -> MovedImportEvidence:
    return MovedImportEvidence(tuple(evidence.Move(m.old, m.new, m.fix) for m in moved))
