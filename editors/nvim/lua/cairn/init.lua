-- Cairn for Neovim (0.7.2 and 0.8+): starts `cairn serve` for each workspace
-- root, streams runs into a scratch buffer, keeps threads for follow-ups,
-- shows proposed edits as a diff tab, accepts/rejects them whole or hunk by
-- hunk, undoes. This file is the public API, the commands and the autocmds;
-- the parts live beside it:
--   config       options and defaults
--   sessions     one client per root; which session a buffer or id belongs to
--   answers      the cairn://answers buffer
--   runs         asking, follow-ups, threads, run events, cancel, resume, context report
--   review       diff tabs, accept/reject (whole or per hunk), redo, undo
--   approvals    window/showMessageRequest through vim.ui.select
--   progress     what a run is doing, for status() and the echo
--   diagnostics  forwarding the editor's diagnostics
local answers = require('cairn.answers')
local approvals = require('cairn.approvals')
local config = require('cairn.config')
local diagnostics = require('cairn.diagnostics')
local progress = require('cairn.progress')
local review = require('cairn.review')
local runs = require('cairn.runs')
local sessions = require('cairn.sessions')
local util = require('cairn.util')

local M = {}

M.config = config.options

local notify = config.notify

local handlers = sessions.handlers
M._handlers = handlers

handlers['cairn/runEvent'] = function(err, result, ctx)
  if err then
    return
  end
  local s = sessions.for_client(ctx and ctx.client_id) or sessions.current()
  runs.on_event(s, result)
end

handlers['window/showMessageRequest'] = approvals.handler

-- ---- clients ----------------------------------------------------------------------

--- The running client of the current buffer's root (nil when none runs).
function M.client()
  return sessions.client(sessions.for_buf(0))
end

--- Every root with its client id: { { root = ..., client_id = ... } }.
function M.roots()
  local out = {}
  for _, s in ipairs(sessions.all()) do
    if sessions.client(s) then
      table.insert(out, { root = s.root, client_id = s.client_id })
    end
  end
  return out
end

--- The session of the current buffer (tests and statuslines read it).
M._session = sessions.current
M._find_root = sessions.find_root

--- Calls a server command of the current buffer's root: cb(err, result).
function M.exec(command, arg, cb)
  sessions.exec(sessions.current(), command, arg, cb)
end

--- Starts the server of bufnr's root if needed and attaches bufnr; returns the client id.
function M.attach(bufnr)
  return (sessions.attach(bufnr))
end

--- Replaces settings (merged) and sends workspace/didChangeConfiguration to every server.
function M.update_settings(settings)
  config.options.settings = util.merge(config.options.settings, settings or {})
  sessions.push_settings()
end

-- ---- the answer buffer, runs and threads ----------------------------------------------

M.answer_buf = answers.buf
M._append_answer = answers.append

function M._set_progress(run_id, what)
  progress.set(sessions.of_run(run_id) or sessions.current(), run_id, what)
end

--- Asks about lines line1..line2 (1-based; nil: no range) of bufnr.
function M.ask(question, line1, line2, bufnr, cb)
  runs.ask(question, line1, line2, bufnr, cb)
end

--- cairn.ask in thread_id's thread (nil: a new thread) on the server of uri's root; shows the run.
function M.send_ask(question, uri, range, where, thread_id, cb)
  runs.send_ask(sessions.for_uri(uri), question, uri, range, where, thread_id, cb)
end

--- Asks a follow-up in the current thread of this buffer's root.
function M.follow_up(question, cb)
  runs.follow_up(sessions.current(), question, cb)
end

--- The current thread id of this buffer's root (nil before the first run).
function M.current_thread()
  local s = sessions.for_buf(0)
  return s and s.thread
end

function M.threads(cb)
  runs.threads(sessions.current(), cb)
end

--- This buffer's root's run ids with that status (nil: all), oldest first.
function M.runs_with(status)
  return runs.with(sessions.for_buf(0), status)
end

function M.cancel(run_id)
  runs.cancel(sessions.current(), run_id)
end

function M.resume(run_id)
  runs.resume(sessions.current(), run_id)
end

--- Shows the ids of session's newest run (or run_id) in a scratch buffer
--- (they are kept out of the answer buffer); returns that buffer.
function M.run_info(run_id)
  local out, id = runs.info(sessions.current(), run_id)
  if not out then
    notify('no run yet; :CairnAsk starts one')
    return nil
  end
  vim.cmd('botright 10split')
  local b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_win_set_buf(0, b)
  pcall(vim.api.nvim_buf_set_name, b, 'cairn://run/' .. id)
  vim.bo[b].bufhidden = 'wipe'
  vim.api.nvim_buf_set_lines(b, 0, -1, false, out)
  vim.bo[b].filetype = 'markdown'
  vim.bo[b].modifiable = false
  return b
end

function M.context_report(run_id, cb)
  runs.context_report(sessions.current(), run_id, cb)
end

-- ---- proposed edits ------------------------------------------------------------------

function M.pending_edits()
  return review.pending(sessions.for_buf(0))
end

--- The edit record (getEdit result, state, tabs) of edit_id, from whichever root made it.
function M._edit(edit_id)
  local s = sessions.of_edit(edit_id)
  return s and s.edits[edit_id]
end

function M.fetch_edit(edit_id, cb)
  review.fetch(sessions.of_edit(edit_id) or sessions.current(), edit_id, cb)
end

function M.open_diff(edit_id, cb)
  review.open(sessions.of_edit(edit_id) or sessions.current(), edit_id, cb)
end

function M.refresh_diff(edit_id, cb)
  local s = sessions.of_edit(edit_id)
  if s then
    review.refresh(s, edit_id, cb)
  end
end

M.accept = review.accept
M.reject = review.reject
M.redo = review.redo
M._save_files = review.save_files

function M.accept_hunk(edit_id, index, cb)
  review.settle_hunk('accept', edit_id, index, cb)
end

function M.reject_hunk(edit_id, index, cb)
  review.settle_hunk('reject', edit_id, index, cb)
end

--- Undoes the last edit accepted in this buffer's root.
function M.undo(cb)
  review.undo(sessions.current(), cb)
end

M.send_diagnostics = diagnostics.send

--- For the statusline: what a run of this buffer's root is doing (with
--- seconds), else edits to review.
---   vim.o.statusline = '%f %= %{v:lua.require("cairn").status()}'
function M.status()
  local s = sessions.for_buf(0)
  if not s then
    return ''
  end
  if #runs.with(s, 'running') > 0 then
    return progress.text(s) or 'Cairn: running'
  end
  local p = #review.pending(s)
  if p > 0 then
    return ('Cairn: %d edit%s to review'):format(p, p > 1 and 's' or '')
  end
  return sessions.client(s) and 'Cairn' or ''
end

-- ---- setup ----------------------------------------------------------------------------

local function command(name, fn, opts)
  vim.api.nvim_create_user_command(name, fn, opts or {})
end

local function define_commands()
  local function range_args(o)
    if o.range and o.range > 0 then
      return o.line1, o.line2
    end
  end
  command('CairnAsk', function(o)
    local l1, l2 = range_args(o)
    M.ask(o.args, l1, l2)
  end, { nargs = '+', range = true, desc = 'Cairn: ask about the range (or the file)' })
  command('CairnExplain', function(o)
    local l1, l2 = range_args(o)
    M.ask('Explain this code.', l1 or o.line1, l2 or o.line2)
  end, { range = true, desc = 'Cairn: explain the range' })
  command('CairnFix', function(o)
    local l1, l2 = range_args(o)
    diagnostics.send(vim.api.nvim_get_current_buf())
    M.ask('Fix these diagnostics.', l1 or o.line1, l2 or o.line2)
  end, { range = true, desc = 'Cairn: fix the diagnostics in the range' })
  command('CairnAccept', function(o)
    M.accept(o.args)
  end, { nargs = '?', desc = 'Cairn: accept the proposed edit' })
  command('CairnReject', function(o)
    M.reject(o.args)
  end, { nargs = '?', desc = 'Cairn: reject the proposed edit' })
  command('CairnRedo', function(o)
    M.redo(o.args ~= '' and o.args or nil)
  end, { nargs = '?', desc = 'Cairn: redo the proposed changes your edits overlap' })
  command('CairnUndo', function()
    M.undo()
  end, { desc = 'Cairn: undo the last accepted edit' })
  command('CairnCancel', function(o)
    M.cancel(o.args)
  end, { nargs = '?', desc = 'Cairn: cancel the running run' })
  command('CairnResume', function(o)
    M.resume(o.args)
  end, { nargs = '?', desc = 'Cairn: resume an interrupted run' })
  command('CairnContext', function(o)
    M.context_report(o.args)
  end, { nargs = '?', desc = 'Cairn: show the context report of the last run' })
  command('CairnRunInfo', function(o)
    M.run_info(o.args ~= '' and o.args or nil)
  end, { nargs = '?', desc = 'Cairn: the ids of the last run (or run {id}): thread, edits, checkpoints' })
  command('CairnFollowUp', function(o)
    M.follow_up(o.args)
  end, { nargs = '+', desc = 'Cairn: ask a follow-up in the current thread' })
  command('CairnThreads', function()
    M.threads()
  end, { desc = 'Cairn: list threads; the picked one becomes current' })
  command('CairnNewThread', function()
    sessions.current().thread = nil
    notify('the next :CairnFollowUp starts a new thread')
  end, { desc = 'Cairn: forget the current thread' })
  local function hunk_command(how)
    return function(o)
      local n = tonumber(o.args)
      local edit_id
      if n then
        local okv, id = pcall(vim.api.nvim_win_get_var, 0, 'cairn_edit_id')
        local pending = M.pending_edits()
        edit_id = okv and id or pending[#pending]
      end
      review.settle_hunk(how, edit_id, n and n - 1 or nil)
    end
  end
  command('CairnAcceptHunk', hunk_command('accept'), { nargs = '?', desc = 'Cairn: accept the hunk under the cursor (or hunk N)' })
  command('CairnRejectHunk', hunk_command('reject'), { nargs = '?', desc = 'Cairn: reject the hunk under the cursor (or hunk N)' })
  command('CairnAnswers', function()
    answers.show()
  end, { desc = 'Cairn: show the answer buffer' })
end

function M.setup(opts)
  local options = util.merge(vim.deepcopy(config.defaults), opts or {})
  if opts and opts.cmd then
    options.cmd = opts.cmd
  end
  if type(options.cmd) == 'string' then
    options.cmd = { options.cmd, 'serve' }
  end
  config.options = options
  M.config = options

  define_commands()

  local group = vim.api.nvim_create_augroup('cairn', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'FileType' }, {
    group = group,
    callback = function(a)
      sessions.attach(a.buf)
    end,
  })
  local ok = pcall(vim.api.nvim_create_autocmd, 'DiagnosticChanged', {
    group = group,
    callback = function(a)
      if a.buf and a.buf > 0 then
        diagnostics.schedule(a.buf)
      end
    end,
  })
  if not ok then
    vim.api.nvim_create_autocmd('User', {
      group = group,
      pattern = 'DiagnosticsChanged',
      callback = function()
        diagnostics.schedule(vim.api.nvim_get_current_buf())
      end,
    })
  end
  -- Buffers already open.
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and sessions.attachable(b) then
      sessions.attach(b)
    end
  end
end

return M
