-- Neovim 0.11+: with this folder on 'runtimepath', `vim.lsp.enable("qlint")` is enough.
return {
  cmd = { "qlint", "server" },
  filetypes = { "python" },
  root_markers = { "pyproject.toml", "qlint.toml", ".git" },
  -- init_options = { runtime = "on-save" },  -- runtime verdicts on open and save
}
