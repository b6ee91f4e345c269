"""What inserting a node into an FX graph looks like, in a module's code and in its text.

QL102 reports packets inserted as node targets (`graph.call_function(op, ...)`,
`graph.create_node("call_function", op, ...)`, `node.target = op`), also through the
project's own wrappers that hand their parameter on to one of those. Its prefilter reads
texts only: a file is checked when it writes one of those attributes, or when it imports a
wrapper from another module of the project (`wrapper_index.imports_a_wrapper`, the rule's import
trigger, asked without importing the rule).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from qlint.analysis.graphs.attribute_text import AFTER_DOT
from qlint.analysis.graphs.last_text import last_text
from qlint.analysis.graphs.packet_text import spells_packet
from qlint.analysis.graphs.pattern_replacements import rewrites_spelled
from qlint.analysis.text_needles import holds_any
from qlint.lazy_patterns import lazy

if TYPE_CHECKING:  # imported by the search alone: the triggers above turn most files away
    from qlint.analysis.graphs.forwarding import Forwarding
    from qlint.analysis.names.resolver import Resolver

FACT = "ql102-insertions"  # other modules' wrappers, in their summaries


@last_text  # QL102's text trigger asked it of this text; its import trigger asks again
def writes_insertion(text: str) -> bool:
    """The text writes `.call_function`, `.create_node` or `.target =`. Every spelling of them
    holds one of the attributes' names, QL102's triggers, which the registry searched the text
    for a moment ago (`text_needles`): a text that lacks them all (most files its import trigger
    asks) is answered without a search."""
    return holds_any(text, _NAMES) and attribute_written(text, PLAIN, ATTRIBUTES)


def may_insert_packet(text: str) -> bool:
    """QL102's trigger (its `text_trigger`): the text inserts, and can make a packet itself
    (`packet_text`; a packet it imports is the import trigger's question), or it holds a
    subgraph rewrite and names an ops root (`pattern_replacements`: the replacement calls the
    packet, which `packet_text` does not count as one the text makes)."""
    return (writes_insertion(text) and spells_packet(text)) or (rewrites_spelled(text) and "ops" in text)


def wrapper_search(project, optable, path: str, deep: bool = False) -> Forwarding:
    """The helper search for insertion wrappers, in the check of the module at `path`.
    `deep`: the search QL102's check and import trigger make, which a tree run answers with
    the wrapper-name index, chains `CHAIN_LINKS` deep (`Forwarding.chain_links`)."""
    from qlint.analysis.graphs.forwarding import Forwarding
    from qlint.analysis.names.resolver import Resolver

    return Forwarding(
        direct_insertions,
        lambda scope, cls: Resolver(scope, project, optable, class_scope=cls),
        NEEDLES,
        path,
        FACT,
        calls_inserting,
        instances=True,
        deep=deep,
    )


def attribute_written(text: str, plain: tuple[str, ...], attributes) -> bool:
    """Whether the text writes one of the attributes after a dot. `plain`: how nearly every
    file spells them (one substring test decides); else `graph.\ncall_function(`,
    `(g\n.call_function)(`, `node.target=`: the attribute written other than in one piece,
    as the rows the check reads (`_INSERTING`, `target_store_rows`) allow."""
    if any(spelling in text for spelling in plain):
        return True
    return any(
        AFTER_DOT.search(text, max(0, m.start() - 200), m.start())
        for name, pattern in attributes
        if name in text
        for m in pattern.finditer(text)
    )


def calls_inserting(text: str) -> bool:
    """Whether a module can hold a wrapper's own insertion (`x.call_function(...)`,
    `x.create_node(...)`): modules that only hold the strings (`n.op == "call_function"`)
    are not summarised for the wrapper search."""
    return attribute_written(text, PLAIN[:2], ATTRIBUTES[:2])


NEEDLES = ("call_function", "create_node")
# How nearly every inserting file spells it: one substring test decides.
PLAIN = (".call_function", "create_node(", ".target =")
# One pattern per name, each led by its literal (an alternation would be searched slowly).
ATTRIBUTES = tuple(
    (name, lazy(pattern))
    for name, pattern in (
        ("call_function", r"call_function\b"),
        ("create_node", r"create_node\b"),
        ("target", r"target\s*=(?!=)"),
    )
)
_NAMES = tuple(name for name, _ in ATTRIBUTES)


def direct_insertions(call: ast.Call, resolver: Resolver) -> Iterator[ast.expr]:
    """What a wrapper's body inserts. `x.call_function(op)` with nothing else is how the PT2E
    test helpers' NodeSpec is spelled (also where `NodeSpec` cannot be resolved, as when
    imported inside the function): a node of an op without inputs is no wrapper's job."""
    if is_nodespec(call, resolver):
        return
    if (
        isinstance(call.func, ast.Attribute)
        and call.func.attr == "call_function"
        and len(call.args) + len(call.keywords) < 2
    ):
        return
    yield from inserted_exprs(call)


def is_nodespec(node: ast.AST, resolver: Resolver) -> bool:
    """`NodeSpec.call_function(op)` in the PT2E test helpers describes a node; it inserts nothing."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "call_function":
        owner = resolver.qualname(node.func.value)
        return bool(owner and owner.endswith("NodeSpec"))
    return False


def inserted_exprs(node: ast.AST) -> Iterator[ast.expr]:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        attr = node.func.attr
        kwargs = {kw.arg: kw.value for kw in node.keywords if kw.arg}
        if attr == "call_function":
            target = node.args[0] if node.args else kwargs.get("the_function")
            if target is not None:
                yield target
        elif attr == "create_node":
            op = node.args[0] if node.args else kwargs.get("op")
            target = node.args[1] if len(node.args) > 1 else kwargs.get("target")
            if isinstance(op, ast.Constant) and op.value == "call_function" and target is not None:
                yield target
    elif isinstance(node, ast.Assign):
        for tgt in node.targets:
            # `self.target = op` stores an op on a pattern object; only a node's target matters.
            if (
                isinstance(tgt, ast.Attribute)
                and tgt.attr == "target"
                and not (isinstance(tgt.value, ast.Name) and tgt.value.id in ("self", "cls"))
            ):
                yield node.value
