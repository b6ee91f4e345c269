"""QL101: a matcher keyed on the packet of an op the project defines and inserts only as it.

Nobody outside a project knows an op the project defines itself: a `torch.library.Library`
of its own namespace (`Library("ns", "DEF")`) and the schemas its `define(...)` declares, or
`"ns::op"` as `custom_op` and `torch.library.define` spell it. Its nodes are the ones the
project's code makes. Where the project inserts it as its packet (`graph.call_function(
torch.ops.ns.op, ...)`, `node.target = torch.ops.ns.op`), never spells one of its overloads
(`ns.op.default`, through an alias of `torch.ops.ns` too) and never calls it (a traced call
would record `.default`), every node of the op that any graph of the project holds is that
packet, and a matcher keyed on the packet is keyed on exactly those nodes. pytorch-shir's FPGA
backend defines its instructions in a `_shir` library, inserts them as packets when it selects
instructions, and dispatches on the packets when it lays out and emits the program.

QL102's side of the same construct is `packet_consumers.own_op_keyed_on_packet`. Reported as
before: an op qlint's op table knows, one no module of the package defines, one a module of
the package spells with an overload or calls (pytorch-shir's intrinsics: its lowering after an
AOT re-trace is keyed on `.default`), one no module inserts as its packet.
"""

from __future__ import annotations

import os
import re

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.insertions import writes_insertion
from qlint.analysis.graphs.project_texts import parsed_module, project_modules, text_holding
from qlint.rules.module_insertions import insertions

_CACHE_KEY = "ql101.own-op-packet"


def keyed_on_own_op_packet(ctx: FileContext, key: tuple[str, str, str]) -> bool:
    """Whether the packet `key` (dialect, namespace, op) is of an op the package defines,
    inserts as that packet, and never spells with an overload nor calls (above)."""
    dialect, namespace, op = key
    if dialect != "aten" or namespace == "aten" or ctx.optable.lookup(namespace, op) is not None:
        return False  # an op torch, torchao or ExecuTorch define: graphs carry its overloads
    memo = (_CACHE_KEY, key)
    if memo not in ctx.cache:
        ctx.cache[memo] = _own_packet_op(ctx, namespace, op, key)
    return ctx.cache[memo]


def op_texts(ctx: FileContext, op: str) -> list[tuple[str, str, FileContext | None]]:
    """(path, text, the parsed module or None) of this module and of every other module of the
    project whose text spells `op`: where the project may define, insert, call or spell it."""
    own = os.path.abspath(ctx.path)
    texts: list[tuple[str, str, FileContext | None]] = [(ctx.path, ctx.text, ctx)]
    for path, module_key in project_modules(ctx, (op,)):
        if module_key is None or os.path.abspath(path) == own:
            continue
        read = text_holding(ctx.project, path, module_key, (op.encode(),))
        if read is not None:
            texts.append((path, read[0], None))
    return texts


def _own_packet_op(ctx: FileContext, namespace: str, op: str, key: tuple[str, str, str]) -> bool:
    spellings = OpSpellings(namespace, op)
    defined = inserted = False
    for path, text, module in op_texts(ctx, op):
        if spellings.overload_or_call(text):
            return False  # some code of the package takes the op's nodes as `.default`
        defined = defined or spellings.defined(text)
        if not inserted and spellings.packet(text) and writes_insertion(text):
            module = module or parsed_module(ctx, path, text)
            inserted = module is not None and any(r.key == key for r, _ in insertions(module))
    return defined and inserted


class OpSpellings:
    """How a module's text may spell the op `namespace.op`: its packet, an overload or a call
    of it (directly or through a name bound to `torch.ops.<namespace>`), its definition."""

    def __init__(self, namespace: str, op: str):
        ns, name = re.escape(namespace), re.escape(op)
        self._namespace = namespace
        self._op = name
        self._packet = re.compile(rf"\b{ns}\s*\.\s*{name}\b")
        # `ns.op.default`, `"ns::op.Tensor"`, and `ns.op(...)`: each takes the node as `.default`
        # (a schema `"ns::op(Tensor x)"` is no call).
        self._used = re.compile(rf"\b{ns}\s*(?:(?:\.|::)\s*{name}\s*\.\s*[A-Za-z_]|\.\s*{name}\s*\()")
        self._alias = re.compile(rf"^[ \t]*(\w+)\s*=\s*torch\s*\.\s*ops\s*\.\s*{ns}[ \t]*(?:#.*)?$", re.M)
        self._quoted = re.compile(rf"""["']{ns}::{name}(?=["'(.])""")
        self._library = re.compile(rf"""\bLibrary\(\s*(["']){ns}\1\s*,\s*(["'])(?:DEF|FRAGMENT)\2""")
        # A schema string opening with the op's name: `lib.define("op(Tensor x) -> Tensor")`.
        self._schema = re.compile(rf"""\.define\(\s*[rRuU]?(?:\"\"\"|'''|"|')\s*{name}\s*\(""")

    def packet(self, text: str) -> bool:
        return self._op in text and self._packet.search(text) is not None

    def overload_or_call(self, text: str) -> bool:
        if self._used.search(text):
            return True
        for alias in self._alias.findall(text):
            if re.search(rf"\b{re.escape(alias)}\s*\.\s*{self._op}\s*(?:\.\s*[A-Za-z_]|\()", text):
                return True
        return False

    def called(self, text: str) -> bool:
        """`ns.op(...)`, directly or through an alias of `torch.ops.<ns>`: a symbolic trace of
        that code records the packet, with whatever arguments the call has."""
        if self._op not in text:
            return False
        if re.search(rf"\b{re.escape(self._namespace)}\s*\.\s*{self._op}\s*\(", text):
            return True
        return any(
            re.search(rf"\b{re.escape(alias)}\s*\.\s*{self._op}\s*\(", text) for alias in self._alias.findall(text)
        )

    def defined(self, text: str) -> bool:
        if self._quoted.search(text):
            return True
        return self._library.search(text) is not None and self._schema.search(text) is not None


__all__ = ["OpSpellings", "keyed_on_own_op_packet", "op_texts"]
