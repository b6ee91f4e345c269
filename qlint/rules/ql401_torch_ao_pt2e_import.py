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

Kept in modules of their own: which old imports are such compatibility paths
(`analysis.edits.pt2e_shims`), the attribute chains that reach the old package with
the rows worth walking for them (`analysis.edits.old_package_chains`), and the torch.ao
observers a fix moves along (`rules.observer_twins`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from qlint import evidence
from qlint.analysis.edits import import_edits as ie
from qlint.analysis.edits.old_package_chains import (
    bound_in,
    chain_moves,
    chain_words,
    identifier_rows,
    in_type_check,
    module_alias_fix,
    names_old,
    outermost_move,
)
from qlint.analysis.edits.pt2e_moves import (
    OLD_PACKAGE,
    SUCCESSOR_PACKAGES,
    Move,
    Moves,
    load_moves,
    names_a_moved_api,
    worst,
)
from qlint.analysis.edits.pt2e_shims import (
    LazyParents,
    after_shim,
    guarded,
    import_statements,
    reached_handler,
    versions,
)
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.diagnostic import Applicability, Diagnostic, Edit, Fix
from qlint.evidence.moved_imports import MovedImportEvidence
from qlint.rules.base import FileContext, FixAvailability, Rule
from qlint.rules.observer_twins import Twins, observer_twins, with_twins
from qlint.value_classes import value_class

_APPLICABILITY = {"safe": Applicability.SAFE, "unsafe": Applicability.UNSAFE}


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
        parents = LazyParents(ctx)
        owned_heads: set[str] = set()  # names bound by a reported import: their uses go with it
        plain: list[tuple[str, ...]] = []  # `import <old>` without `as`: owns chains by prefix
        twins = observer_twins(ctx, moves, parents)
        for stmt in import_statements(ctx):
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
    def _from_import(self, ctx, moves, stmt: ast.ImportFrom, parents, owned: set, twins: Twins) -> Diagnostic | None:
        base = ie.import_base(ctx, stmt)
        if base is None or not (base == OLD_PACKAGE or moves.removed_module(base)):
            return None
        plans = [_Plan(a, moves.find(f"{base}.{a.name}") if a.name != "*" else moves.find(base)) for a in stmt.names]
        moved = [p for p in plans if p.move is not None]
        owned.update(p.local for p in moved)  # their uses are reported with the import, or deliberate
        if not moved or guarded(ctx, moves, stmt, parents, {p.local for p in moved}):
            return None
        if after_shim(ctx, moves, stmt, parents):
            return None
        for p in moved:
            p.fix = _fix_level(ctx, p.move) if p.alias.name != "*" else "display"
            if p.move.is_module and p.fix != "display":
                p.fix = worst(p.fix, module_alias_fix(ctx, moves, p.local, p.move))
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
        subject += reached_handler(ctx, moves, stmt, parents)
        message, help_ = _message(moves, [p.move for p in moved], subject, note)
        message += _unbound_note(stmt, parents, module_gone=base != OLD_PACKAGE)
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
            if guarded(ctx, moves, stmt, parents, {local}) or after_shim(ctx, moves, stmt, parents):
                if not alias.asname:
                    plain.append(tuple(alias.name.split(".")))
                continue
            if alias.asname:
                fix_level = _fix_level(ctx, move) if move.is_module and move.known else "display"
                if fix_level != "display":
                    fix_level = worst(fix_level, module_alias_fix(ctx, moves, alias.asname, move))
                edit = ie.alias_name_edit(ctx, alias, move.module) if fix_level != "display" else None
                fix = Fix(_APPLICABILITY[fix_level], f"Import `{move.module}`", (edit,)) if edit else None
            else:
                prefix = tuple(alias.name.split("."))
                plain.append(prefix)
                fix = self._plain_import_fix(ctx, moves, stmt, alias, move, prefix)
            fix, note = with_twins(ctx, twins, [move], fix)
            subject = f"`{alias.name}` is gone from torch 2.13" + reached_handler(ctx, moves, stmt, parents)
            message, help_ = _message(moves, [move], subject, note)
            message += _unbound_note(stmt, parents, module_gone=True)
            fix = fix or _display_fix([move])
            yield ctx.diagnostic(self, alias, message, fix, evidence=_evidence([move]), help=help_)

    def _plain_import_fix(self, ctx, moves: Moves, stmt, alias: ast.alias, move: Move, prefix) -> Fix | None:
        """`import torch.ao.quantization.quantize_pt2e` and its `torch.ao....prepare_pt2e(...)` uses."""
        uses = list(chain_moves(ctx, moves, prefix))
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
            {"quantization", *(h for h in torchy - owned if names_old(module_resolver.qualname(ast.Name(h))))}
        )
        shared = identifier_rows(ctx, words)
        for body, resolver in walked:
            own = chain_words(body, resolver, owned) - words
            rows = shared if not own else identifier_rows(ctx, words | own)
            inner: set[int] = set()  # attributes inside a longer chain (walked after it)
            heads: dict[str, str | None] = {}  # a chain's name is its head's name plus the rest
            for node in body.nodes(rows, _ATTRIBUTES):
                if isinstance(node.value, ast.Attribute):
                    inner.add(id(node.value))
                if id(node) in inner:
                    continue
                parts = dotted_parts(node)
                if parts is None or parts[0] in owned or not (parts[0] in torchy or bound_in(body, parts[0])):
                    continue
                if any(tuple(parts[: len(p)]) == p for p in plain):
                    continue
                if parts[0] not in ("self", "cls"):  # `self.x` resolves through the class instead
                    if parts[0] not in heads:
                        heads[parts[0]] = resolver.qualname(ast.Name(parts[0]))
                    head = heads[parts[0]]
                    if head is None or not ".".join([head, *parts[1:]]).startswith(OLD_PACKAGE + "."):
                        continue
                hit = outermost_move(resolver, moves, node)
                if hit is None or id(hit[0]) in seen or ie.guarded(hit[0], parents, set(), versions(ctx)):
                    continue
                sub, move = hit
                seen.add(id(sub))
                yield self._use(ctx, moves, sub, move, in_type_check(sub, parents), twins)

    def _use(self, ctx, moves: Moves, sub: ast.Attribute, move: Move, type_check: bool, twins: Twins) -> Diagnostic:
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
        fix, note = with_twins(ctx, twins, [move], fix)
        message, help_ = _message(moves, [move], f"`{move.old}` is gone from torch 2.13", note)
        return ctx.diagnostic(self, sub, message, fix or _display_fix([move]), evidence=_evidence([move]), help=help_)


_ATTRIBUTES = frozenset({ast.Attribute})


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


def _unbound_note(stmt, parents, module_gone: bool) -> str:
    from qlint.analysis.edits.swallowed_imports import unbound_note  # for a finding's message only

    return unbound_note(stmt, parents, module_gone)


def _display_fix(moved: list[Move]) -> Fix:
    homes = [m.new for m in moved if m.new]
    if homes:
        return Fix(Applicability.DISPLAY_ONLY, "Import from " + ", ".join(f"`{h}`" for h in dict.fromkeys(homes)))
    return Fix(Applicability.DISPLAY_ONLY, "Remove the use: torchao and executorch have no successor")


def _evidence(moved: list[Move]) -> MovedImportEvidence:
    return MovedImportEvidence(tuple(evidence.Move(m.old, m.new, m.fix) for m in moved))
