-- Headless Neovim (0.7+) session against `memory-lens serve`, driven by tests/editors/test_neovim.py.
-- Env: ML_PYTHON (interpreter with memory_lens), ML_ROOT (workspace), ML_MEMORY (memory file to open),
--      ML_SOURCE (a source file to select text in), ML_OUT (result JSON path).
-- Uses only Neovim 0.7 APIs (vim.lsp.start_client, buf_attach_client, buf_request_sync, vim.wait).
local out = { ok = false, steps = {} }

local function finish(ok, err)
  out.ok = ok
  out.error = err and tostring(err) or nil
  local f = assert(io.open(os.getenv('ML_OUT'), 'w'))
  f:write(vim.json.encode(out))
  f:close()
  if ok then vim.cmd('qall!') else vim.cmd('cquit 1') end
end

local function step(name) table.insert(out.steps, name) end

local function request(client, bufnr, method, params)
  local res, err = vim.lsp.buf_request_sync(bufnr, method, params, 15000)
  if not res or not res[client.id] then error(method .. ' got no answer: ' .. tostring(err)) end
  if res[client.id].err then error(method .. ' failed: ' .. vim.inspect(res[client.id].err)) end
  return res[client.id].result
end

local ok, perr = pcall(function()
  local root = os.getenv('ML_ROOT')
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('ML_MEMORY')))
  local membuf = vim.api.nvim_get_current_buf()
  vim.bo[membuf].filetype = 'markdown'
  local exited = nil
  local client_id = vim.lsp.start_client({
    name = 'memory-lens',
    cmd = { os.getenv('ML_PYTHON'), '-m', 'memory_lens', 'serve' },
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = 'ws' } },
    on_exit = function(code, signal) exited = { code = code, signal = signal } end,
  })
  if not client_id then error('start_client returned nil') end
  vim.lsp.buf_attach_client(membuf, client_id)
  local ready = vim.wait(20000, function()
    local c = vim.lsp.get_client_by_id(client_id)
    return exited ~= nil or (c ~= nil and c.initialized == true)
  end, 20)
  if not ready or exited then error('server did not initialize: ' .. vim.inspect(exited)) end
  local client = vim.lsp.get_client_by_id(client_id)
  step('initialized')

  -- 1. Diagnostics on the open memory file (it holds a duplicate entry).
  if not vim.wait(20000, function() return #vim.diagnostic.get(membuf) > 0 end, 20) then
    error('no diagnostics for the memory file')
  end
  out.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(membuf)) do
    table.insert(out.diagnostics, { lnum = d.lnum, severity = d.severity, source = d.source,
      code = d.user_data and d.user_data.lsp and d.user_data.lsp.code or d.code, message = d.message })
  end
  step('diagnostics')

  -- 2. Hover on the duplicated entry, and on the first line.
  local uri = vim.uri_from_bufnr(membuf)
  local dup_line = tonumber(os.getenv('ML_DUP_LINE'))
  local hover = request(client, membuf, 'textDocument/hover',
    { textDocument = { uri = uri }, position = { line = dup_line, character = 3 } })
  out.hover_entry = hover and hover.contents and hover.contents.value or vim.inspect(hover)
  hover = request(client, membuf, 'textDocument/hover',
    { textDocument = { uri = uri }, position = { line = 0, character = 0 } })
  out.hover_summary = hover and hover.contents and hover.contents.value or vim.inspect(hover)
  step('hover')

  -- 3. memory/effective for a source file that is not open.
  local res = client.request_sync('memory/effective',
    { textDocument = { uri = vim.uri_from_fname(os.getenv('ML_SOURCE')) } }, 15000, membuf)
  if not res or res.err then error('memory/effective failed: ' .. vim.inspect(res)) end
  out.effective = res.result
  step('effective')

  -- 4. Code actions on a selection in a source file; apply "Save selection to project memory".
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('ML_SOURCE')))
  local srcbuf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(srcbuf, client_id)
  local line0 = vim.api.nvim_buf_get_lines(srcbuf, 0, 1, true)[1]
  local actions = request(client, srcbuf, 'textDocument/codeAction', {
    textDocument = { uri = vim.uri_from_bufnr(srcbuf) },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = #line0 } },
    context = { diagnostics = {} },
  })
  out.code_actions = {}
  local chosen = nil
  for _, a in ipairs(actions or {}) do
    table.insert(out.code_actions, a.title)
    if a.title == 'Save selection to project memory' then chosen = a end
  end
  if not chosen then error('no project save action: ' .. vim.inspect(out.code_actions)) end
  -- One step: the action runs the server's save command, which writes the file; no buffer is
  -- written here (no `:wall`), so the entry on disk can only come from the server.
  if chosen.edit or not chosen.command then error('the save action is not a command: ' .. vim.inspect(chosen)) end
  local saved = client.request_sync('workspace/executeCommand', chosen.command, 15000, srcbuf)
  if not saved or saved.err then error('the save command failed: ' .. vim.inspect(saved)) end
  out.saved = saved.result
  out.modified_buffers = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].modified then
      table.insert(out.modified_buffers, vim.api.nvim_buf_get_name(b))
    end
  end
  step('code_action_applied')

  client.stop()
  vim.wait(5000, function() return client.is_stopped() end, 20)
  step('stopped')
end)

if ok then finish(true) else finish(false, perr) end
