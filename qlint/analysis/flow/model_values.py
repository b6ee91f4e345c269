"""The values model flow reasons about: where a model came from (`Origin`, and the kinds of
origin), its mode on one path (`ModeFact`, under the branches of a `Guard`) and the object itself
(`Obj`), with the parts of a parameter (`part_of`).

Plain data: the interpreter (`model_interp`, asking `model_calls` about calls) makes them and
carries them in its environment (`model_env`), a function's results (`function_flows`) hold
them, rules read them.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.implied_truths import with_truths
from qlint.value_classes import field, replace, value_class

# Origin kinds: where a value came from.
PARAM, PARAM_PART, ATTRIBUTE, CONSTRUCTED, PRETRAINED, CALL, UNKNOWN = (
    "parameter",
    "part of a parameter",  # `artifact.data["forward"]`, a loop over `models.items()`
    "attribute",
    "constructor",
    "from_pretrained",
    "call",
    "unknown",
)
# A callable that builds a model (a parametrize value, an element of a dict of lambdas).
FACTORY = "factory"
# An attribute of a construction written as an element of a container (`[seq, seq.second]`):
# a submodule, in whatever mode the whole left it; what it holds is among what the whole
# holds (`Origin.built` is the whole's construction, `built_parts`).
BUILT_PART = "part of a construction"
# `fn(model)` where `fn` is a parameter or an item of one (`for t in transforms: m = t(m)`): what
# it returns depends on the callables the caller passes (`FunctionFlow.applied`).
APPLIED = "result of a callable parameter"
# A `self.<attr>` that `__init__` stored from its parameter: the caller's mode, like a parameter.
STORED = "stored constructor parameter"
# A `self.<attr>` every store of which in its class is of a model in a known mode
# (`model_attrs.InMode`): the fact's mode is that store's, its node the method reading it.
IN_MODE = "attribute stored in a known mode"
# A `self.<attr>` read by a private method that one other method of its class calls right
# after storing an eval-mode model in it (`init_calls`): an `IN_MODE` whose method must also be
# reached from nowhere else (`store_then_call.reached_elsewhere`); its node the method reading it.
CALLED_AFTER_STORE = "attribute stored right before its one call"
# A dict, list, tuple or set written as a helper's argument (`quantize_all({"fp": model.eval()})`):
# the modes of the models it holds are its `Origin.items`, what the helper's items of that
# parameter (`for name, m in models.items()`) are in.
CONTAINER = "container literal"
PROGRAM, EXPORTED, PREPARED, PREPARED_QAT, CONVERTED = (
    "ExportedProgram",
    "ExportedProgram.module()",
    "prepare_pt2e",
    "prepare_qat_pt2e",
    "convert_pt2e",
)
GRAPH_KINDS = frozenset({EXPORTED, PREPARED, PREPARED_QAT, CONVERTED})
# On `Capture.contexts`/the interpreter's context stack inside `with pytest.raises(...)`,
# `self.assertRaises(...)` or a `try` catching NotImplementedError: code there expects
# `.eval()` on an exported graph to raise, so it is no finding.
EXPECTS_ERROR = "<expects an error>"

Guard = frozenset  # of (condition, polarity): the branches a fact or a sink lies in


@value_class(frozen=True)
class Origin:
    kind: str
    node: ast.AST  # the expression (or function, for parameters) it came from
    index: int | None = None  # parameter position
    name: str = ""  # parameter or attribute name
    # For a construction: the `built_models.Built` that says what the model holds. Not part of
    # the identity: one call analysed twice (a loop body) is one origin.
    built: object = field(default=None, compare=False)
    makes: tuple = field(default=(), compare=False)  # for a factory: the callables it may be
    items: frozenset = field(default=frozenset(), compare=False)  # for a container: its models' `ModeFact`s
    owner: ast.AST | None = field(default=None, compare=False)  # for a part: the function of its parameter
    # For a construction: the objects it was given, (positional, ((keyword, object), ...)), which
    # a class that stores them holds as attributes (`stored_fields`).
    passed: tuple = field(default=(), compare=False)
    # For a part: the steps from the parameter to it (`part_of`), None when not followed.
    path: tuple | None = field(default=None, compare=False)
    # For a construction handed to a helper (`CallSite.held`): ((attribute, its `ModeFact`s), ...)
    # for each attribute its class stores unchanged, as they were at that call (`held_contents`);
    # None when not read so.
    fields: tuple | None = field(default=None, compare=False)
    # For a `self.<attr>` read: the origin its class gives it (its construction in the class, or
    # the `__init__` parameter stored in it), which `mode_free` judges once it has checked that
    # nothing else in the module writes the attribute or gives it parts; None when unknown.
    source: object = field(default=None, compare=False)
    # For messages, not part of the identity: for a graph a helper of another module made, named
    # at the call here (`anchored`), where that module made it, (path, line); for a construction
    # by the callable a factory of the project returns, applied here (`factory_closures`), the
    # factory's name (a field of its own cost every origin made ~0.2% of a run's instructions).
    made_at: tuple | str | None = field(default=None, compare=False)
    # For a construction whose slots a helper's call bound (`held_slots.bind`): that call. Part
    # of the identity: two calls of one helper hand back two containers holding what each passed.
    bound_at: ast.AST | None = None


def anchored(origin: Origin, node: ast.AST, path: str, **changes) -> Origin:
    """`origin`, from a helper in the module at `path`, as the call `node` here hands it back:
    positions there mean nothing here, but where a graph was made is worth a message's words."""
    if origin.kind in GRAPH_KINDS and origin.made_at is None:
        changes["made_at"] = (path, origin.node.lineno)
    return replace(origin, node=node, **changes)


@value_class(frozen=True)
class ModeFact:
    """The mode on one path: "eval", "train", "unset" (as it came) or "unknown" (`.train(flag)`)."""

    state: str
    node: ast.AST | None  # the call that set it, or the origin's node
    origin: Origin | None = None  # for "unset": what it came in as
    guard: Guard = frozenset()
    # Parts switched to another mode since the whole model was (`part_modes.PartMode`).
    parts: tuple = ()

    def guarded(self, condition: tuple[str, bool]) -> ModeFact:
        return replace(self, guard=self.guard | {condition})


@value_class(frozen=True)
class Obj:
    anchor: ast.AST  # where it was created (or merged)
    key: str
    origins: frozenset[Origin]
    captures: frozenset[int] = frozenset()  # indices into FunctionFlow.captures it derives from

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset([o.kind for o in self.origins])

    @property
    def is_graph(self) -> bool:
        # `kinds` is not empty and within GRAPH_KINDS: asked of most values the walk meets,
        # which built that set twice per asking.
        origins = self.origins
        return bool(origins) and GRAPH_KINDS.issuperset([o.kind for o in origins])


UNKNOWN_MODE = frozenset({ModeFact("unknown", None)})


def compatible(a: Guard, b: Guard) -> bool:
    """Two guards can hold on one run: no condition is required both true and false, counting
    the truth a holding `flag is True`/`flag is False` gives the flag (`implied_truths`)."""
    a, b = with_truths(a), with_truths(b)
    return not any((cond, not polarity) in b for cond, polarity in a)


# The steps of a part's `Origin.path`: an attribute (ATTR, name); an item of a container or
# one element of an unpacked item (ITEM: a subscript, `.get(k)`, a loop variable); the key
# of a dict's pair (KEY); and the views `.values()` (VALUES) and `.items()` (PAIRS), which are
# the container itself until a loop takes an item of them.
ATTR, ITEM, KEY, VALUES, PAIRS = "attr", "item", "key", "values", "pairs"


def part_of(container: Obj | None, node: ast.AST, steps: tuple | None = None) -> Origin | None:
    """`Origin` of an item or attribute of a parameter: its mode is the caller's, too. `steps`
    (None: not followed) are how it was taken from `container`, added to the part's path; a
    view (`.values()`, `.items()`) is the container itself to the step after it."""
    if container is None or container.is_graph:
        return None
    for o in container.origins:
        if o.kind == PARAM and o.name not in ("self", "cls"):
            return Origin(PARAM_PART, node, o.index, o.name, owner=o.node, path=steps)
        if o.kind == PARAM_PART:
            path = o.path
            if path is None or steps is None:
                path = None
            else:
                if path and path[-1][0] in (VALUES, PAIRS):
                    path = path[:-1]
                path = (*path, *steps)
            return Origin(PARAM_PART, node, o.index, o.name, owner=o.owner, path=path)
    return None
