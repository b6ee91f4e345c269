-- qlint for Neovim: starts `qlint server` for Python buffers.
--
-- Neovim 0.11 and later: `require("qlint").setup()` registers the server with
-- `vim.lsp.config` and enables it (or use `lsp/qlint.lua` from this folder directly).
-- Older releases (Debian's 0.7.2 included): one client per project root is started
-- with `vim.lsp.start_client`, and each Python buffer is attached to its root's client.
local M = {}

M.defaults = {
  -- The server command; `{ "python3", "-m", "qlint", "server" }` works without the script.
  cmd = { "qlint", "server" },
  -- Extra arguments appended to `cmd`.
  args = {},
  filetypes = { "python" },
  root_markers = { "pyproject.toml", "qlint.toml", ".git" },
  -- Runtime verdicts in the editor: "on-save" or "off"; nil leaves it to the project's
  -- `[tool.qlint.runtime] editor` setting.
  runtime = nil,
}

local clients = {} -- root directory -> client id (0.7 to 0.10)

local function command(opts)
  local cmd = vim.deepcopy(opts.cmd)
  for _, arg in ipairs(opts.args or {}) do
    table.insert(cmd, arg)
  end
  return cmd
end

local function init_options(opts)
  if opts.runtime == nil then
    return vim.empty_dict()
  end
  return { runtime = opts.runtime }
end

-- The nearest folder above `path` holding one of `markers`, else the file's own folder.
function M.find_root(path, markers)
  local dir = vim.fn.fnamemodify(path, ":p:h")
  local start = dir
  while true do
    for _, marker in ipairs(markers) do
      if vim.loop.fs_stat(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      return start
    end
    dir = parent
  end
end

-- Attach `bufnr` to the qlint client of its project, starting that client if needed.
function M.attach(bufnr, opts)
  opts = opts or M.options or M.defaults
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local root = M.find_root(name, opts.root_markers)
  local id = clients[root]
  if id == nil or vim.lsp.get_client_by_id(id) == nil then
    id = vim.lsp.start_client({
      name = "qlint",
      cmd = command(opts),
      root_dir = root,
      workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
      init_options = init_options(opts),
      on_exit = function()
        clients[root] = nil
      end,
    })
    if id == nil then
      vim.notify("qlint: could not start " .. table.concat(command(opts), " "), vim.log.levels.ERROR)
      return nil
    end
    clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

function M.setup(opts)
  opts = vim.tbl_deep_extend("force", M.defaults, opts or {})
  M.options = opts
  if vim.lsp.config ~= nil and vim.lsp.enable ~= nil then
    vim.lsp.config("qlint", {
      cmd = command(opts),
      filetypes = opts.filetypes,
      root_markers = opts.root_markers,
      init_options = init_options(opts),
    })
    vim.lsp.enable("qlint")
    return
  end
  local group = vim.api.nvim_create_augroup("qlint", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = opts.filetypes,
    callback = function(args)
      M.attach(args.buf, opts)
    end,
  })
  -- Buffers already open when setup() runs.
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.tbl_contains(opts.filetypes, vim.bo[bufnr].filetype) then
      M.attach(bufnr, opts)
    end
  end
end

return M
