"""The JSON-RPC layer, hardened: every request gets an answer, bad input never pops up.

pygls leaves three holes that a misbehaving (or merely buggy) client falls into:

- a request whose params do not match the method's schema fails while the message is
  being decoded, before any handler runs, so no reply is ever sent and the client waits
  forever. Here it is answered with `InvalidParams` (-32602), as JSON-RPC requires;
- a body that is not JSON is reported with a `window/showMessage` popup, which interrupts
  the user for something they cannot act on. Here it is answered with a `ParseError`
  (-32700, id null) and logged;
- an incremental change whose range ends before it starts is silently dropped by pygls's
  text document (the inserted text vanishes and the buffer desynchronizes from the
  editor). Here such ranges are clamped first.
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcParseError
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

log = logging.getLogger(__name__)


class AlreadyAnswered(JsonRpcException):
    """A message that could not be decoded and has been answered with an error already."""


class QlintProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]):
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and "method" in data:  # a request: it must get a reply
                detail = f"invalid params for {data.get('method')!r}"
                error = JsonRpcInvalidParams(message=detail) if isinstance(exc, JsonRpcInvalidParams) else exc
                self._send_response(data["id"], None, error.to_response_error())
                raise AlreadyAnswered(detail) from exc
            raise

    def answer_parse_error(self, exc: Exception) -> None:
        self._send_response(None, None, JsonRpcParseError(message=f"invalid JSON: {exc}").to_response_error())

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        for change in params.content_changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                clamp_range(change.range)
            self.workspace.update_text_document(params.text_document, change)
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None


def clamp_range(rng: types.Range) -> None:
    """pygls already moves positions past a line's or the document's end back to it; a range
    whose end comes before its start (or a negative position) it mishandles by dropping the
    inserted text. Such a range is read as the empty range at its start."""
    for pos in (rng.start, rng.end):
        pos.line, pos.character = max(pos.line, 0), max(pos.character, 0)
    if (rng.end.line, rng.end.character) < (rng.start.line, rng.start.character):
        rng.end.line, rng.end.character = rng.start.line, rng.start.character
