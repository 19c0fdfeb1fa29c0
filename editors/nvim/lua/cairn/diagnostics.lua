-- Forwards the editor's diagnostics of attached buffers (from every source but
-- Cairn itself) to the buffer's server with cairn/didChangeDiagnostics, debounced.
local config = require('cairn.config')
local sessions = require('cairn.sessions')
local util = require('cairn.util')

local M = {}

local timers = {} -- bufnr -> debounce timer

function M.send(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  local s = sessions.for_buf(bufnr)
  local c = sessions.client(s)
  if not c or not vim.lsp.buf_is_attached(bufnr, s.client_id) then
    return
  end
  local skip = {}
  pcall(function()
    skip[vim.lsp.diagnostic.get_namespace(s.client_id)] = true
  end)
  local items = vim.diagnostic.get(bufnr)
  local diags = util.to_lsp_diagnostics(items, skip, function(lnum)
    return vim.api.nvim_buf_get_lines(bufnr, lnum, lnum + 1, false)[1]
  end)
  sessions.notify_client(c, 'cairn/didChangeDiagnostics', { uri = vim.uri_from_bufnr(bufnr), diagnostics = diags })
end

function M.schedule(bufnr)
  local t = timers[bufnr]
  if t then
    t:stop()
  else
    t = (vim.uv or vim.loop).new_timer()
    timers[bufnr] = t
  end
  t:start(config.options.diagnostics_debounce_ms, 0, vim.schedule_wrap(function()
    M.send(bufnr)
  end))
end

return M
