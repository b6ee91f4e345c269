-- Driven by tests/test_lsp_editors.py: a headless Neovim with editors/nvim, one Python file.
-- Writes what it saw to $QLINT_NVIM_OUT as JSON; `transcript` is the human-readable log.
local out_path = os.getenv("QLINT_NVIM_OUT")
local runtime = os.getenv("QLINT_NVIM_RUNTIME")
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

local function run()
  require("qlint").setup({
    cmd = vim.fn.json_decode(os.getenv("QLINT_NVIM_CMD")),
    runtime = runtime ~= "" and runtime or nil,
  })
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("QLINT_NVIM_FILE")))
  local bufnr = vim.api.nvim_get_current_buf()
  log("nvim " .. tostring(vim.version().major) .. "." .. tostring(vim.version().minor) .. "." .. tostring(vim.version().patch)
    .. " opened " .. vim.api.nvim_buf_get_name(bufnr))
  if not vim.wait(timeout, function() return #vim.diagnostic.get(bufnr) > 0 end, 50) then
    return finish(false, "no diagnostics within the timeout")
  end
  local clients = vim.lsp.buf_get_clients(bufnr)
  local client
  for _, c in pairs(clients) do client = c end
  log("attached client " .. client.name .. " (id " .. client.id .. ")")
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
  -- The diagnostics on the finding's line as the client itself sends them back
  -- (what `vim.lsp.buf.code_action()` does on 0.7).
  local d = vim.diagnostic.get(bufnr)[1]
  local lsp_diag = vim.lsp.diagnostic.get_line_diagnostics(bufnr, d.lnum, nil, client.id)[1]
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
