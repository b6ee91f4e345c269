"""`qlint server`: the language server (pygls, stdio).

`convert` turns `Diagnostic`s into LSP diagnostics and back (positions in the editor's
code units, the fix carried in `data`), `actions` builds code actions from them,
`settings_cache` finds each buffer's configuration and `server` wires it to pygls.
"""
