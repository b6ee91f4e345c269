"""The JSON-RPC layer, hardened: every request gets an answer, bad input never pops up.

pygls leaves three holes that a misbehaving (or merely buggy) client falls into:

- a request whose params do not match the method's schema fails while the message is
  being decoded, before any handler runs, so no reply is ever sent and the client waits
  forever. Here it is answered with `InvalidParams` (-32602), as JSON-RPC requires;
- a body that is not JSON is reported with a `window/showMessage` popup, which interrupts
  the user for something they cannot act on. Here it is answered with a `ParseError`
  (-32700, id null) and logged;
- an incremental change whose range ends before it starts is silently dropped by pygls's
  text document, and a character one past a line's end lands after the line break (the
  buffer desynchronizes from the editor). Here ranges are clamped first, as the LSP says.
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcParseError
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from qlint.lsp.convert import units

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

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        result = yield from super().lsp_initialize(params)
        if not pulls_and_refreshes(params.capabilities):
            # A client that pulls but cannot be asked to pull again (Neovim 0.11) would
            # never see what the server learns later: runtime verdicts, an imported module
            # changed. It is offered no pull, so it takes pushed diagnostics.
            result.capabilities.diagnostic_provider = None
        return result

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        document = self.workspace.get_text_document(params.text_document.uri)
        encoding = str(getattr(self.workspace.position_encoding, "value", self.workspace.position_encoding))
        for change in params.content_changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                clamp_range(change.range, document.lines, encoding)
            self.workspace.update_text_document(params.text_document, change)
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None


def pulls_and_refreshes(caps: types.ClientCapabilities | None) -> bool:
    """The client pulls diagnostics and honours `workspace/diagnostic/refresh`."""
    pulls = bool(caps and caps.text_document and caps.text_document.diagnostic)
    workspace = caps.workspace if caps else None
    return pulls and bool(workspace and workspace.diagnostics and workspace.diagnostics.refresh_support)


def clamp_range(rng: types.Range, lines: list[str], encoding: str) -> None:
    """LSP: a character past the end of its line means the line's end. pygls counts the
    line break as part of the line, so one past the end lands after the break (on the next
    line), and a range whose end comes before its start drops the inserted text. Both are
    fixed here; a line past the document's end pygls already reads as the end."""
    for pos in (rng.start, rng.end):
        if pos.line < len(lines):
            body = lines[pos.line].rstrip("\r\n")
            pos.character = min(pos.character, units(body, encoding))
    if (rng.end.line, rng.end.character) < (rng.start.line, rng.start.character):
        rng.end.line, rng.end.character = rng.start.line, rng.start.character
