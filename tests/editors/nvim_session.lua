-- Driven by tests/test_lsp_editors.py: a headless Neovim with editors/nvim, one Python file.
-- Writes what it saw to $QLINT_NVIM_OUT as JSON; `transcript` is the human-readable log.
local out_path = os.getenv("QLINT_NVIM_OUT")
local runtime = os.getenv("QLINT_NVIM_RUNTIME")
-- "plugin": require("qlint").setup(); "config": the 0.11 form, the shipped lsp/qlint.lua
-- enabled with vim.lsp.enable (only the command is overridden, to run this checkout).
local form = os.getenv("QLINT_NVIM_FORM") or "plugin"
local timeout = tonumber(os.getenv("QLINT_NVIM_TIMEOUT") or "30000")
local result = { transcript = {} }

local function log(line)
  table.insert(result.transcript, line)
end

local function finish(ok, err)
  result.ok = ok
  result.error = err
  local fh = io.open(out_path, "w")
  fh:write(vim.fn.json_encode(result))
  fh:close()
  vim.cmd(ok and "qall!" or "cquit!")
end

local function diagnostics_text(bufnr)
  local shown = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(shown, string.format("%d:%d %s [%s] %s", d.lnum + 1, d.col + 1, tostring(d.code), d.severity, d.message))
  end
  return shown
end

-- The diagnostic as the server sent it (what `vim.lsp.buf.code_action()` sends back).
local function lsp_diagnostic(bufnr, d, client)
  if vim.lsp.diagnostic.get_line_diagnostics ~= nil and vim.fn.has("nvim-0.10") == 0 then
    return vim.lsp.diagnostic.get_line_diagnostics(bufnr, d.lnum, nil, client.id)[1]
  end
  return d.user_data.lsp
end

local function client_of(bufnr)
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr }) or vim.lsp.buf_get_clients(bufnr)
  for _, c in pairs(clients) do
    return c
  end
end

local function run()
  local cmd = vim.fn.json_decode(os.getenv("QLINT_NVIM_CMD"))
  if form == "config" then
    vim.lsp.config("qlint", { cmd = cmd, init_options = runtime ~= "" and { runtime = runtime } or nil })
    vim.lsp.enable("qlint")
  else
    require("qlint").setup({ cmd = cmd, runtime = runtime ~= "" and runtime or nil })
  end
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("QLINT_NVIM_FILE")))
  local bufnr = vim.api.nvim_get_current_buf()
  log("nvim " .. tostring(vim.version().major) .. "." .. tostring(vim.version().minor) .. "." .. tostring(vim.version().patch)
    .. " (" .. form .. ") opened " .. vim.api.nvim_buf_get_name(bufnr))
  if not vim.wait(timeout, function() return #vim.diagnostic.get(bufnr) > 0 end, 50) then
    return finish(false, "no diagnostics within the timeout")
  end
  local client = client_of(bufnr)
  log("attached client " .. client.name .. " (id " .. client.id .. ")")
  if form == "config" then -- what lsp/qlint.lua contributed, merged with the cmd set here
    local config = vim.lsp.config.qlint
    result.config = { filetypes = config.filetypes, root_markers = config.root_markers, cmd = config.cmd }
    log("vim.lsp.config.qlint: filetypes " .. table.concat(config.filetypes, ",")
      .. ", root markers " .. table.concat(config.root_markers, ","))
  end
  for _, line in ipairs(diagnostics_text(bufnr)) do log("diagnostic: " .. line) end
  result.diagnostics = vim.diagnostic.get(bufnr)

  if runtime == "on-save" then
    local function has_verdict()
      for _, d in ipairs(vim.diagnostic.get(bufnr)) do
        local data = d.user_data and d.user_data.lsp and d.user_data.lsp.data
        if data and data.runtime then return true end
      end
      return false
    end
    if not vim.wait(timeout, has_verdict, 100) then
      return finish(false, "no runtime verdict within the timeout")
    end
    for _, line in ipairs(diagnostics_text(bufnr)) do log("diagnostic with verdict: " .. line) end
    result.with_verdict = vim.diagnostic.get(bufnr)
  end

  -- The quick fix, through the client's own code-action request.
  local lsp_diag = lsp_diagnostic(bufnr, vim.diagnostic.get(bufnr)[1], client)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = lsp_diag.range,
    context = { diagnostics = { lsp_diag }, only = { "quickfix" } },
  }
  local replies = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", params, timeout)
  local actions = {}
  for _, reply in pairs(replies or {}) do
    for _, action in ipairs(reply.result or {}) do table.insert(actions, action) end
  end
  result.actions = {}
  for _, action in ipairs(actions) do
    table.insert(result.actions, action.title)
    log("code action: " .. action.title)
  end
  local fix = actions[1]
  if fix == nil then return finish(false, "no code action") end
  vim.lsp.util.apply_workspace_edit(fix.edit, client.offset_encoding or "utf-16")
  result.lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  log("applied: " .. fix.title)
  local cleared = vim.wait(timeout, function() return #vim.diagnostic.get(bufnr) == 0 end, 50)
  log(cleared and "diagnostics after the fix: none" or "diagnostics after the fix: still present")
  result.cleared = cleared
  finish(true)
end

local ok, err = pcall(run)
if not ok then finish(false, tostring(err)) end
