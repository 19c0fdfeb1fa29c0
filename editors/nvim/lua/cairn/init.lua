-- Cairn for Neovim (0.7.2 and 0.8+): starts `cairn serve`, streams runs into a
-- scratch buffer, keeps threads for follow-ups, shows proposed edits as a diff
-- tab, accepts/rejects them whole or hunk by hunk, undoes.
local util = require('cairn.util')

local M = {}

local defaults = {
  cmd = { 'cairn', 'serve' },
  -- Sent as initializationOptions and workspace/didChangeConfiguration (section cairn):
  -- { model = { provider, name, baseURL, contextWindow, maxOutputTokens },
  --   scripted = { path }, approval = { mode }, mcpServers = {}, trace = { otlpEndpoint } }
  settings = {},
  -- A directory, or function(bufnr) -> directory; default: nearest .git/go.mod, else cwd.
  root_dir = nil,
  root_markers = { '.git', 'go.mod', 'package.json', 'Cargo.toml', 'pyproject.toml' },
  -- File types to attach to; empty: every normal file buffer.
  filetypes = {},
  diagnostics_debounce_ms = 300,
  answer_height = 12,
  -- In the diff tab: accept/reject the whole edit, or the hunk under the cursor.
  keymaps = { accept = 'ga', reject = 'gx', accept_hunk = 'gh', reject_hunk = 'gH', close = 'q' },
  -- Echo what a run is doing (tool calls, waiting) in the command line.
  progress_echo = true,
  -- Seconds to wait for an approval answer from an asynchronous vim.ui.select.
  approval_timeout = 120,
}

M.config = vim.deepcopy(defaults)

local state = {
  client_id = nil,
  runs = {}, -- runId -> { question, where, status, last_seq, edits = {} }
  run_order = {},
  edits = {}, -- editId -> { result = getEdit result, state = 'pending'|'accepted'|'rejected', tabs = {} }
  edit_order = {},
  checkpoints = {}, -- stack of { checkpointId, editId, files }
  answer_buf = nil,
  transcript = util.transcript(), -- for lines that belong to no run
  transcripts = {}, -- runId -> its own transcript (line state, tool names)
  -- Runs can stream at the same time (one still answering after its edit was
  -- decided, another started from a code action): each run's output goes to
  -- the end of its own section, marked by an extmark, so deltas never mix.
  sections = {}, -- runId -> extmark id: where the run's next output goes
  last_section = nil, -- the run whose section ends the buffer
  tail = nil, -- who appended last at the end of the buffer (a runId or false)
  early = {}, -- runId -> output received before cairn.ask answered
  begun = {},
  diag_timers = {},
  thread = nil, -- the current thread: follow-ups go there
  threads = {}, -- threadId -> { title, runs = {runId}, uri }
  progress = nil, -- { run_id, what, since } while a run works
}
M._state = state

local has = function(f)
  return vim.fn.has(f) == 1
end

local function notify(msg, level)
  vim.notify('Cairn: ' .. msg, level or vim.log.levels.INFO)
end

-- ---- client plumbing (0.7 .. 0.11) -----------------------------------------

local function get_client()
  if not state.client_id then
    return nil
  end
  local c = vim.lsp.get_client_by_id(state.client_id)
  if not c then
    return nil
  end
  local stopped
  if has('nvim-0.11') then
    stopped = c:is_stopped()
  else
    stopped = c.is_stopped and c.is_stopped()
  end
  return (not stopped) and c or nil
end
M.client = get_client

local function client_request(c, method, params, handler, bufnr)
  if has('nvim-0.11') then
    return c:request(method, params, handler, bufnr)
  end
  return c.request(method, params, handler, bufnr)
end

local function client_notify(c, method, params)
  if has('nvim-0.11') then
    return c:notify(method, params)
  end
  return c.notify(method, params)
end

--- Calls a server command: cb(err, result).
function M.exec(command, arg, cb, waited)
  local c = get_client()
  if not c then
    local e = { message = 'the server is not running (see :checkhealth cairn)' }
    if cb then
      cb(e)
    else
      notify(e.message, vim.log.levels.ERROR)
    end
    return
  end
  -- Right after attach the client may still be initializing (a request sent
  -- before initialize is answered is refused): wait for it, without blocking
  -- the editor. `initialized` is set by every Neovim from 0.7 on.
  if c.initialized ~= true then
    waited = waited or 0
    if waited >= 30000 then
      local e = { message = 'the server did not finish initializing in 30 s (see :checkhealth cairn)' }
      if cb then
        cb(e)
      else
        notify(e.message, vim.log.levels.ERROR)
      end
      return
    end
    vim.defer_fn(function()
      M.exec(command, arg, cb, waited + 20)
    end, 20)
    return
  end
  -- bufnr nil: Neovim first flushes the pending (debounced) didChange of every
  -- buffer, so the server sees the text as it is now (0 would flush none).
  client_request(c, 'workspace/executeCommand', { command = command, arguments = { arg } }, function(err, result)
    if cb then
      cb(err, result)
    elseif err then
      notify(command .. ': ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
  end, nil)
end

local function find_root(bufnr)
  local rd = M.config.root_dir
  if type(rd) == 'function' then
    rd = rd(bufnr)
  end
  if type(rd) == 'string' and rd ~= '' then
    return rd
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = name ~= '' and vim.fn.fnamemodify(name, ':p:h') or vim.fn.getcwd()
  for _, marker in ipairs(M.config.root_markers) do
    local found = vim.fn.finddir(marker, dir .. ';')
    if found ~= '' then
      return (vim.fn.fnamemodify(found, ':p:h:h'))
    end
    found = vim.fn.findfile(marker, dir .. ';')
    if found ~= '' then
      return (vim.fn.fnamemodify(found, ':p:h'))
    end
  end
  return vim.fn.getcwd()
end
M._find_root = find_root

local handlers = {}
M._handlers = handlers

local function client_config(bufnr)
  local root = find_root(bufnr)
  return {
    name = 'cairn',
    cmd = M.config.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ':t') } },
    init_options = M.config.settings,
    settings = { cairn = M.config.settings },
    -- A Cairn client: the server streams cairn/runEvent (not showDocument).
    capabilities = vim.tbl_deep_extend('force', vim.lsp.protocol.make_client_capabilities(), {
      experimental = { cairn = { runEvents = true } },
    }),
    handlers = handlers,
    on_exit = function(code, signal)
      vim.schedule(function()
        if code ~= 0 and signal == 0 then
          notify(('server exited with code %d (see :lua vim.cmd("edit " .. vim.lsp.get_log_path()))'):format(code), vim.log.levels.WARN)
        end
      end)
    end,
  }
end

local function attachable(bufnr)
  if vim.bo[bufnr].buftype ~= '' then
    return false
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return false
  end
  local fts = M.config.filetypes
  if fts and #fts > 0 then
    return vim.tbl_contains(fts, vim.bo[bufnr].filetype)
  end
  return true
end

--- Starts the server if needed and attaches bufnr; returns the client id.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not attachable(bufnr) then
    return state.client_id
  end
  if get_client() then
    if not vim.lsp.buf_is_attached(bufnr, state.client_id) then
      vim.lsp.buf_attach_client(bufnr, state.client_id)
    end
    return state.client_id
  end
  if vim.fn.executable(M.config.cmd[1]) ~= 1 then
    if not state.warned_missing then
      state.warned_missing = true
      notify(('`%s` not found. Install it with `go install ./cmd/cairn` in a clone of Cairn, or pass cmd to setup(). See :checkhealth cairn.'):format(M.config.cmd[1]), vim.log.levels.ERROR)
    end
    return nil
  end
  local cfg = client_config(bufnr)
  local id
  if vim.lsp.start then
    id = vim.lsp.start(cfg, { bufnr = bufnr })
  else
    id = vim.lsp.start_client(cfg)
    if id then
      vim.lsp.buf_attach_client(bufnr, id)
    end
  end
  state.client_id = id
  return id
end

--- Replaces settings (merged) and sends workspace/didChangeConfiguration.
function M.update_settings(settings)
  M.config.settings = util.merge(M.config.settings, settings or {})
  local c = get_client()
  if c then
    c.config.settings = { cairn = M.config.settings }
    client_notify(c, 'workspace/didChangeConfiguration', { settings = { cairn = M.config.settings } })
  end
end

-- ---- the answer buffer -------------------------------------------------------

local function answer_buf()
  local b = state.answer_buf
  if b and vim.api.nvim_buf_is_valid(b) then
    return b
  end
  b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(b, 'cairn://answers')
  vim.bo[b].buftype = 'nofile'
  vim.bo[b].bufhidden = 'hide'
  vim.bo[b].swapfile = false
  vim.bo[b].filetype = 'markdown'
  state.answer_buf = b
  return b
end
M.answer_buf = answer_buf

local function show_answers()
  local b = answer_buf()
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(w) == b then
      return w
    end
  end
  local cur = vim.api.nvim_get_current_win()
  vim.cmd('botright ' .. M.config.answer_height .. 'split')
  local w = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(w, b)
  vim.wo[w].wrap = true
  vim.api.nvim_set_current_win(cur)
  return w
end

local answer_ns = vim.api.nvim_create_namespace('cairn_answers')

-- Inserts text at (row, col) of b; returns the position just after it.
local function insert_text(b, row, col, text)
  local parts = vim.split(text, '\n', { plain = true })
  vim.api.nvim_buf_set_text(b, row, col, row, col, parts)
  if #parts == 1 then
    return row, col + #parts[1]
  end
  return row + #parts - 1, #parts[#parts]
end

-- Appends text to the answer buffer: at the end, or, for a run whose section
-- another run's section has followed since, at the end of its own section.
local function append_answer(text, run_id)
  if text == nil or text == '' then
    return
  end
  local api = vim.api
  local b = answer_buf()
  local mark = run_id and state.sections[run_id]
  local row, col
  if mark and state.last_section ~= run_id then
    local pos = api.nvim_buf_get_extmark_by_id(b, answer_ns, mark, {})
    if pos and pos[1] then
      row, col = pos[1], pos[2]
    end
  end
  local at_end = row == nil
  if at_end then
    local n = api.nvim_buf_line_count(b)
    local last = api.nvim_buf_get_lines(b, n - 1, n, false)[1] or ''
    if n == 1 and last == '' then
      text = text:gsub('^\n', '')
    elseif last ~= '' and state.tail ~= (run_id or false) and text:sub(1, 1) ~= '\n' then
      text = '\n' .. text -- someone else's line is open: start a new one
    end
    row, col = n - 1, #last
    state.tail = run_id or false
    if run_id then
      state.last_section = run_id
    end
  end
  if text == '' then
    return
  end
  local erow, ecol = insert_text(b, row, col, text)
  if run_id then
    -- Left gravity: text another run appends right here goes after the mark.
    state.sections[run_id] = api.nvim_buf_set_extmark(b, answer_ns, erow, ecol, { id = mark or nil, right_gravity = false })
  end
  if at_end then
    local count = api.nvim_buf_line_count(b)
    for _, w in ipairs(api.nvim_list_wins()) do
      if api.nvim_win_get_buf(w) == b then
        api.nvim_win_set_cursor(w, { count, 0 })
      end
    end
  end
end
M._append_answer = append_answer

-- ---- runs ----------------------------------------------------------------------

local function run(run_id)
  local r = state.runs[run_id]
  if not r then
    r = { run_id = run_id, status = 'running', last_seq = 0, edits = {} }
    state.runs[run_id] = r
    table.insert(state.run_order, run_id)
  end
  return r
end

local function note_thread(thread_id, run_id, question, uri)
  if type(thread_id) ~= 'string' or thread_id == '' then
    return
  end
  local t = state.threads[thread_id]
  if not t then
    t = { title = question, runs = {} }
    state.threads[thread_id] = t
  end
  if run_id and not vim.tbl_contains(t.runs, run_id) then
    table.insert(t.runs, run_id)
  end
  t.uri = uri or t.uri
  state.thread = thread_id
end

-- ---- progress: a statusline function and echo ------------------------------------

local progress_timer

local function progress_text()
  local p = state.progress
  if not p then
    return nil
  end
  local secs = math.floor(((vim.uv or vim.loop).now() - p.since) / 1000)
  return ('Cairn: %s%s'):format(p.what, secs >= 2 and (' (%ds)'):format(secs) or '')
end

local function set_progress(run_id, what)
  local uv = vim.uv or vim.loop
  if what then
    state.progress = { run_id = run_id, what = what, since = uv.now() }
    if not progress_timer then
      -- Ticks while a run works, so a long tool (a 100 s `go test`) visibly counts up.
      progress_timer = uv.new_timer()
      progress_timer:start(1000, 1000, vim.schedule_wrap(function()
        if not state.progress then
          return
        end
        pcall(vim.cmd, 'redrawstatus')
        if M.config.progress_echo then
          pcall(vim.api.nvim_echo, { { progress_text() or '', 'Comment' } }, false, {})
        end
      end))
    end
  elseif state.progress and state.progress.run_id == run_id then
    state.progress = nil
    if progress_timer then
      progress_timer:stop()
      progress_timer:close()
      progress_timer = nil
    end
  end
  if M.config.progress_echo then
    pcall(vim.api.nvim_echo, { { progress_text() or '', 'Comment' } }, false, {})
  end
  pcall(vim.cmd, 'redrawstatus')
end
M._set_progress = set_progress

local function transcript(run_id)
  local t = state.transcripts[run_id]
  if not t then
    t = util.transcript()
    state.transcripts[run_id] = t
  end
  return t
end

local function begin_run(run_id, question, where, meta)
  local r = run(run_id)
  meta = meta or {}
  r.question = r.question or question
  r.where = r.where or where
  r.uri = r.uri or meta.uri
  r.thread_id = meta.thread_id or r.thread_id
  note_thread(r.thread_id, run_id, question, r.uri)
  if state.begun[run_id] then
    return
  end
  state.begun[run_id] = true
  show_answers()
  append_answer(transcript(run_id).header(run_id, question, where), run_id)
  append_answer(state.early[run_id], run_id)
  state.early[run_id] = nil
end

local open_diff -- forward

local function on_run_event(ev)
  if type(ev) ~= 'table' or type(ev.runId) ~= 'string' then
    return
  end
  local r = run(ev.runId)
  if type(ev.seq) == 'number' then
    if ev.seq <= r.last_seq then
      return -- duplicate or stale
    end
    r.last_seq = ev.seq
  end
  local out = transcript(ev.runId).render(ev)
  if state.begun[ev.runId] then
    append_answer(out, ev.runId)
  else
    state.early[ev.runId] = (state.early[ev.runId] or '') .. out
  end
  if ev.kind == 'started' then
    r.status = 'running'
    set_progress(ev.runId, 'thinking…')
    if type(ev.threadId) == 'string' then
      r.thread_id = ev.threadId
    end
    -- A run this session did not start (vim.lsp.buf.code_action, a resume):
    -- its started event says what it is about, so it is shown like any other.
    if type(ev.question) == 'string' and ev.question ~= '' then
      local where
      if type(ev.uri) == 'string' then
        where = vim.fn.fnamemodify(vim.uri_to_fname(ev.uri), ':.')
        if type(ev.range) == 'table' and ev.range.start then
          where = where .. (':%d-%d'):format(ev.range.start.line + 1, ev.range['end'].line + 1)
        end
      end
      begin_run(ev.runId, ev.question, where, { thread_id = ev.threadId, uri = ev.uri })
    end
  elseif ev.kind == 'toolCall' then
    set_progress(ev.runId, 'running ' .. (ev.tool or 'a tool') .. ' ' .. util.summarize(ev.input, 60))
  elseif ev.kind == 'toolResult' or ev.kind == 'approval' then
    set_progress(ev.runId, 'thinking…')
  elseif ev.kind == 'text' then
    if not state.progress or state.progress.what ~= 'answering…' then
      set_progress(ev.runId, 'answering…')
    end
  elseif util.terminal[ev.kind] then
    set_progress(ev.runId, nil)
    r.status = ev.kind
    if ev.kind == 'failed' then
      notify(('run failed%s: %s'):format(ev.class and (' (' .. ev.class .. ')') or '', ev.error or ''), vim.log.levels.ERROR)
    elseif ev.kind == 'interrupted' then
      notify('run ' .. ev.runId .. ' was interrupted; :CairnResume continues it', vim.log.levels.WARN)
    end
  elseif ev.kind == 'editProposed' and ev.editId then
    table.insert(r.edits, ev.editId)
    open_diff(ev.editId)
  elseif ev.kind == 'editUpdated' and ev.editId then
    M.refresh_diff(ev.editId)
  end
  vim.cmd('redrawstatus')
end

handlers['cairn/runEvent'] = function(err, result)
  if err then
    return
  end
  on_run_event(result)
end

handlers['window/showMessageRequest'] = function(_, params)
  params = params or {}
  local actions = params.actions or {}
  if #actions == 0 then
    notify(params.message or '')
    return vim.NIL
  end
  local approval = util.is_approval(actions)
  if approval then
    append_answer(state.transcript.render({ kind = 'toolCall', tool = 'approval asked:', input = params.message }))
    -- Deny first: the default choice of a picker denies.
    actions = util.deny_first(actions)
  end
  local done, choice = false, nil
  vim.ui.select(actions, {
    prompt = (approval and 'Cairn asks: ' or '') .. (params.message or ''),
    format_item = function(a)
      return a.title
    end,
  }, function(item)
    choice, done = item, true
  end)
  if not done then
    -- An asynchronous picker: wait for it (the server waits for this reply).
    vim.wait(M.config.approval_timeout * 1000, function()
      return done
    end, 50)
  end
  if not choice and approval then
    return { title = 'Deny' } -- dismissed: Deny, said explicitly
  end
  return choice or vim.NIL
end

-- ---- proposed edits: diff tabs -------------------------------------------------

local function pending_edits()
  local out = {}
  for _, id in ipairs(state.edit_order) do
    if state.edits[id].state == 'pending' then
      table.insert(out, id)
    end
  end
  return out
end
M.pending_edits = pending_edits

local function buf_keymap(b, lhs, rhs, desc)
  if lhs and lhs ~= '' then
    vim.api.nvim_buf_set_keymap(b, 'n', lhs, rhs, { noremap = true, silent = true, desc = desc })
  end
end

local function open_file_diff(edit_id, f, idx)
  local fname = vim.uri_to_fname(f.uri)
  vim.cmd('tabnew')
  local tab = vim.api.nvim_get_current_tabpage()
  -- Left: the file as it is (a scratch copy of `current` for new files).
  if f.create then
    local cb = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(cb, 0, -1, false, {})
    vim.api.nvim_buf_set_name(cb, ('cairn://current/%s/%d/%s'):format(edit_id, idx, f.path))
    vim.api.nvim_win_set_buf(0, cb)
  else
    vim.cmd('edit ' .. vim.fn.fnameescape(fname))
  end
  local left_win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_var(left_win, 'cairn_edit_id', edit_id)
  vim.api.nvim_win_set_var(left_win, 'cairn_side', 'old')
  vim.api.nvim_win_set_var(left_win, 'cairn_path', f.path)
  local ft = vim.bo.filetype
  vim.cmd('diffthis')
  -- Right: the proposed text.
  vim.cmd('rightbelow vnew')
  local pb = vim.api.nvim_get_current_buf()
  vim.bo[pb].buftype = 'nofile'
  vim.bo[pb].bufhidden = 'wipe'
  vim.bo[pb].swapfile = false
  -- The tab line shows this name: the file's name first, not a shortened
  -- path (cairn://proposed/e1/1/pkg/x.go used to read c//p/e/1/p/x.go).
  vim.api.nvim_buf_set_name(pb, ('%s (Cairn proposed %s)'):format(vim.fn.fnamemodify(f.path, ':t'), edit_id))
  vim.api.nvim_buf_set_var(pb, 'cairn_proposed', { edit_id = edit_id, file = idx, path = f.path })
  vim.api.nvim_win_set_var(0, 'cairn_edit_id', edit_id)
  vim.api.nvim_win_set_var(0, 'cairn_side', 'new')
  vim.api.nvim_win_set_var(0, 'cairn_path', f.path)
  vim.api.nvim_tabpage_set_var(tab, 'cairn_title', 'Cairn: ' .. f.path)
  vim.api.nvim_buf_set_lines(pb, 0, -1, false, util.split_lines(f.proposed))
  vim.bo[pb].modifiable = false
  if ft and ft ~= '' then
    vim.bo[pb].filetype = ft
  end
  vim.api.nvim_buf_set_var(pb, 'cairn_edit_id', edit_id)
  vim.cmd('diffthis')
  local km = M.config.keymaps
  buf_keymap(pb, km.accept, ('<Cmd>lua require("cairn").accept(%q)<CR>'):format(edit_id), 'Cairn: accept the proposed edit')
  buf_keymap(pb, km.reject, ('<Cmd>lua require("cairn").reject(%q)<CR>'):format(edit_id), 'Cairn: reject the proposed edit')
  buf_keymap(pb, km.close, '<Cmd>tabclose<CR>', 'Cairn: close the diff (the edit stays pending)')
  -- Hunk keys on both sides of the diff (the left buffer is the real file: only while the tab lives).
  for _, b in ipairs({ pb, vim.api.nvim_win_get_buf(left_win) }) do
    buf_keymap(b, km.accept_hunk, '<Cmd>lua require("cairn").accept_hunk()<CR>', 'Cairn: accept the hunk under the cursor')
    buf_keymap(b, km.reject_hunk, '<Cmd>lua require("cairn").reject_hunk()<CR>', 'Cairn: reject the hunk under the cursor')
  end
  pcall(function()
    vim.wo.statusline = ('Cairn proposed: %s   %s/%s hunk  %s/%s all'):format(f.path, km.accept_hunk, km.reject_hunk, km.accept, km.reject)
  end)
  -- The run's answer below the diff, so it can be read while reviewing.
  local pw = vim.api.nvim_get_current_win()
  vim.cmd(('botright %dsplit'):format(math.max(4, math.floor(M.config.answer_height / 2))))
  local ab = answer_buf()
  vim.api.nvim_win_set_buf(0, ab)
  vim.wo.wrap = true
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(ab), 0 })
  vim.api.nvim_set_current_win(pw)
  return tab, left_win
end

--- Fetches an edit (cairn.getEdit: files and hunks) into state; cb(res).
local function fetch_edit(edit_id, cb)
  M.exec('cairn.getEdit', { editId = edit_id }, function(err, res)
    if err or type(res) ~= 'table' then
      notify(('cannot fetch edit %s: %s'):format(edit_id, err and err.message or 'no result'), vim.log.levels.ERROR)
      return
    end
    local e = state.edits[edit_id]
    if not e then
      e = { state = 'pending', tabs = {} }
      state.edits[edit_id] = e
      table.insert(state.edit_order, edit_id)
    end
    e.result = res
    if type(res.state) == 'string' and res.state ~= 'pending' and res.state ~= '' then
      e.state = res.state
    end
    cb(res, e)
  end)
end
M.fetch_edit = fetch_edit

function open_diff(edit_id, cb)
  fetch_edit(edit_id, function(res, e)
    for i, f in ipairs(res.files or {}) do
      local tab = open_file_diff(edit_id, f, i)
      table.insert(e.tabs, tab)
    end
    if cb then
      cb(res)
    end
  end)
end
M.open_diff = open_diff

local function close_tabs(edit_id)
  local e = state.edits[edit_id]
  if not e then
    return
  end
  for _, tab in ipairs(e.tabs) do
    if vim.api.nvim_tabpage_is_valid(tab) then
      local wins = vim.api.nvim_tabpage_list_wins(tab)
      for _, w in ipairs(wins) do
        if vim.api.nvim_win_is_valid(w) then
          vim.api.nvim_win_call(w, function()
            vim.cmd('diffoff')
          end)
          local okv, side = pcall(vim.api.nvim_win_get_var, w, 'cairn_side')
          if okv and side == 'old' then
            local b = vim.api.nvim_win_get_buf(w)
            for _, lhs in ipairs({ M.config.keymaps.accept_hunk, M.config.keymaps.reject_hunk }) do
              pcall(vim.api.nvim_buf_del_keymap, b, 'n', lhs)
            end
          end
        end
      end
      if #vim.api.nvim_list_tabpages() > 1 then
        vim.cmd('tabclose ' .. vim.api.nvim_tabpage_get_number(tab))
      end
    end
  end
  e.tabs = {}
end

local function pick_edit(edit_id)
  if edit_id and edit_id ~= '' then
    return edit_id
  end
  local ok, id = pcall(vim.api.nvim_buf_get_var, 0, 'cairn_edit_id')
  if ok and id and state.edits[id] and state.edits[id].state == 'pending' then
    return id
  end
  local p = pending_edits()
  return p[#p]
end

--- The loaded buffers of these file URIs that have unsaved changes: an
--- accept or undo leaves them unsaved (the user's own text is not saved for
--- them).
local function dirty_buffers(uris)
  local out = {}
  for _, u in ipairs(uris or {}) do
    local b = vim.uri_to_bufnr(u)
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].modified then
      -- 'modified' stays set after a change and its reverse: compare with the disk.
      local f = io.open(vim.api.nvim_buf_get_name(b), 'rb')
      local disk = f and f:read('*a')
      if f then
        f:close()
      end
      local text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n')
      if vim.bo[b].eol or vim.bo[b].fixeol then
        text = text .. '\n'
      end
      if text ~= disk then
        out[b] = true
      end
    end
  end
  return out
end

--- Writes the buffers of these file URIs that an accept or undo changed: the
--- checkpoint describes the disk, so nothing is left unsaved. A buffer that
--- had unsaved changes before (keep: from dirty_buffers) stays unsaved. No
--- autocmds: a format-on-save must not change what was accepted.
local function save_files(uris, keep)
  keep = keep or {}
  for _, u in ipairs(uris or {}) do
    local b = vim.uri_to_bufnr(u)
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].modified and not keep[b] then
      local okw, werr = pcall(vim.api.nvim_buf_call, b, function()
        vim.cmd('silent noautocmd write')
      end)
      if not okw then
        notify('could not save ' .. vim.uri_to_fname(u) .. ': ' .. tostring(werr), vim.log.levels.WARN)
      end
    end
  end
end
M._save_files = save_files

local function edit_uris(edit_id)
  local e = state.edits[edit_id]
  local files = {}
  for _, f in ipairs(e and e.result and e.result.files or {}) do
    table.insert(files, f.uri)
  end
  return files
end

--- Accepts (how = 'accept') or rejects one hunk of an edit: index is 0-based
--- (cairn.getEdit's index); nil: the hunk under the cursor in the diff tab.
local function settle_hunk(how, edit_id, index, cb)
  if not edit_id or index == nil then
    local okv, id = pcall(vim.api.nvim_win_get_var, 0, 'cairn_edit_id')
    local _, side = pcall(vim.api.nvim_win_get_var, 0, 'cairn_side')
    local _, path = pcall(vim.api.nvim_win_get_var, 0, 'cairn_path')
    local e = okv and state.edits[id]
    local h = e and e.result and util.hunk_at(e.result.hunks, path, vim.api.nvim_win_get_cursor(0)[1], side)
    if not h then
      notify('no pending hunk under the cursor (use it in a Cairn diff tab, on or next to a change)', vim.log.levels.WARN)
      return
    end
    edit_id, index = id, h.index
  end
  local method = how == 'accept' and 'cairn.acceptEdit' or 'cairn.rejectEdit'
  local keep = dirty_buffers(edit_uris(edit_id))
  M.exec(method, { editId = edit_id, hunks = { index } }, function(err, res)
    if err then
      notify(how .. ' hunk failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if how == 'accept' then
      if type(res) ~= 'table' or not res.applied then
        notify('hunk ' .. (index + 1) .. ' was not applied', vim.log.levels.ERROR)
        return
      end
      save_files(edit_uris(edit_id), keep)
      if res.checkpointId then
        table.insert(state.checkpoints, { checkpointId = res.checkpointId, editId = edit_id, files = edit_uris(edit_id) })
      end
    end
    append_answer(('\n%s hunk %d of edit %s\n'):format(how == 'accept' and 'accepted' or 'rejected', index + 1, edit_id))
    fetch_edit(edit_id, function(r2, e)
      local pending = false
      for _, h in ipairs(r2.hunks or {}) do
        pending = pending or h.state == 'pending' or h.state == 'conflict'
      end
      if not pending then
        if e.state == 'pending' then
          e.state = how == 'accept' and 'accepted' or 'rejected'
        end
        close_tabs(edit_id)
      else
        pcall(vim.cmd, 'diffupdate')
      end
      if cb then
        cb(res, r2)
      end
    end)
  end)
end

--- Re-renders the proposed side of an edit's open diff tabs from the server's
--- view (the user's buffer plus the hunks carried onto it), and says which
--- hunks now conflict with the user's own edits.
function M.refresh_diff(edit_id, cb)
  local e = state.edits[edit_id]
  if not e then
    return
  end
  local before = {}
  for _, h in ipairs(e.result and e.result.hunks or {}) do
    before[h.index] = h.state
  end
  fetch_edit(edit_id, function(res)
    for _, tab in ipairs(e.tabs or {}) do
      if vim.api.nvim_tabpage_is_valid(tab) then
        for _, w in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
          local b = vim.api.nvim_win_get_buf(w)
          local okp, p = pcall(vim.api.nvim_buf_get_var, b, 'cairn_proposed')
          local f = okp and type(p) == 'table' and (res.files or {})[p.file]
          if f then
            vim.bo[b].modifiable = true
            vim.api.nvim_buf_set_lines(b, 0, -1, false, util.split_lines(f.proposed))
            vim.bo[b].modifiable = false
            pcall(vim.api.nvim_win_call, w, function()
              vim.cmd('diffupdate')
            end)
          end
        end
      end
    end
    local clashes = {}
    for _, h in ipairs(res.hunks or {}) do
      if h.state == 'conflict' and before[h.index] ~= 'conflict' then
        table.insert(clashes, ('%s line %d'):format(h.path, h.startLine + 1))
      end
    end
    if #clashes > 0 then
      notify(('your edit overlaps the proposed change to %s: :CairnRedo redoes it against your text, :CairnRejectHunk drops it'):format(
        table.concat(clashes, ', ')), vim.log.levels.WARN)
    end
    if cb then
      cb(res)
    end
  end)
end

--- Asks Cairn to redo an edit's conflicting hunks against the current text
--- (cairn.redoHunks): merged where the user's change and Cairn's touch
--- different characters, else asked of the model again.
function M.redo(edit_id, cb)
  edit_id = pick_edit(edit_id)
  if not edit_id then
    notify('no proposed edit is waiting')
    return
  end
  M.exec('cairn.redoHunks', { editId = edit_id }, function(err, res)
    if err then
      notify('redo failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if type(res) == 'table' and res.reason then
      notify(res.reason, vim.log.levels.WARN)
    end
    M.refresh_diff(edit_id, function()
      if cb then
        cb(res)
      end
    end)
  end)
end

function M.accept_hunk(edit_id, index, cb)
  settle_hunk('accept', edit_id, index, cb)
end

function M.reject_hunk(edit_id, index, cb)
  settle_hunk('reject', edit_id, index, cb)
end

function M.accept(edit_id, cb)
  edit_id = pick_edit(edit_id)
  if not edit_id then
    notify('no proposed edit is waiting')
    return
  end
  local keep = dirty_buffers(edit_uris(edit_id))
  M.exec('cairn.acceptEdit', { editId = edit_id }, function(err, res)
    if err then
      notify('accept failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if type(res) ~= 'table' or not res.applied then
      notify('the edit was not applied' .. ((type(res) == 'table' and res.reason) and (': ' .. res.reason) or ''), vim.log.levels.ERROR)
      return
    end
    local e = state.edits[edit_id] or { tabs = {} }
    e.state = 'accepted'
    local files = edit_uris(edit_id)
    save_files(files, keep)
    if res.checkpointId then
      table.insert(state.checkpoints, { checkpointId = res.checkpointId, editId = edit_id, files = files })
    end
    close_tabs(edit_id)
    append_answer(('\naccepted edit %s%s\n'):format(edit_id, res.checkpointId and (' (checkpoint ' .. res.checkpointId .. '; :CairnUndo restores)') or ''))
    if cb then
      cb(res)
    end
  end)
end

function M.reject(edit_id)
  edit_id = pick_edit(edit_id)
  if not edit_id then
    notify('no proposed edit is waiting')
    return
  end
  M.exec('cairn.rejectEdit', { editId = edit_id }, function(err)
    if err then
      notify('reject failed: ' .. (err.message or ''), vim.log.levels.ERROR)
      return
    end
    if state.edits[edit_id] then
      state.edits[edit_id].state = 'rejected'
    end
    close_tabs(edit_id)
    append_answer(('\nrejected edit %s\n'):format(edit_id))
  end)
end

function M.undo(cb)
  local last = state.checkpoints[#state.checkpoints]
  if not last then
    notify('no accepted edit to undo in this session')
    return
  end
  local keep = dirty_buffers(last.files)
  M.exec('cairn.undo', { checkpointId = last.checkpointId }, function(err, res)
    if err then
      notify('undo refused: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if type(res) == 'table' and not res.applied and type(res.alreadyUndone) == 'table' and #res.alreadyUndone > 0 then
      -- The editor's own undo already put the text back; write it, so the disk is undone too.
      table.remove(state.checkpoints)
      -- The buffer holds exactly the text from before the accept: writing it is the undo.
      save_files(last.files)
      append_answer(('\nedit %s was already undone\n'):format(last.editId))
      notify('already undone: ' .. table.concat(res.alreadyUndone, ', '))
      if cb then
        cb(res)
      end
      return
    end
    if type(res) ~= 'table' or not res.applied then
      notify('the undo was not applied' .. ((type(res) == 'table' and res.reason) and (': ' .. res.reason) or ''), vim.log.levels.ERROR)
      return
    end
    table.remove(state.checkpoints)
    save_files(last.files, keep)
    append_answer(('\nundid edit %s\n'):format(last.editId))
    if cb then
      cb(res)
    end
  end)
end

-- ---- asking ----------------------------------------------------------------------

--- Asks about lines line1..line2 (1-based; nil: no range) of bufnr.
function M.ask(question, line1, line2, bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not question or question == '' then
    notify('usage: :CairnAsk {question}', vim.log.levels.WARN)
    return
  end
  if not M.attach(bufnr) then
    return
  end
  local range
  if line1 and line2 then
    local last = vim.api.nvim_buf_get_lines(bufnr, line2 - 1, line2, false)[1] or ''
    range = util.lines_range(line1, line2, last)
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local where = vim.fn.fnamemodify(name, ':.') .. (line1 and (':%d-%d'):format(line1, line2) or '')
  M.send_ask(question, vim.uri_from_bufnr(bufnr), range, where, nil)
end

--- cairn.ask in thread_id's thread (nil: a new thread); shows the run.
function M.send_ask(question, uri, range, where, thread_id, cb)
  M.exec('cairn.ask', { uri = uri, range = range, question = question, threadId = thread_id }, function(err, res)
    if err or type(res) ~= 'table' or not res.runId then
      notify('ask failed: ' .. (err and err.message or vim.inspect(res)), vim.log.levels.ERROR)
      return
    end
    begin_run(res.runId, question, where, { thread_id = res.threadId or thread_id, uri = uri })
    if cb then
      cb(res)
    end
  end)
end

--- Asks a follow-up in the current thread (the last run's, or the one picked
--- with :CairnThreads); with no thread yet, a new question about this buffer.
function M.follow_up(question, cb)
  if not question or question == '' then
    notify('usage: :CairnFollowUp {question}', vim.log.levels.WARN)
    return
  end
  local t = state.thread and state.threads[state.thread]
  if not t then
    return M.ask(question)
  end
  local uri = t.uri or vim.uri_from_bufnr(0)
  M.send_ask(question, uri, nil, vim.fn.fnamemodify(vim.uri_to_fname(uri), ':.') .. ' (follow-up)', state.thread, cb)
end

--- The current thread id (nil before the first run).
function M.current_thread()
  return state.thread
end

--- Lists the server's threads (cairn.listThreads; they survive restarts) and
--- makes the picked one current, so :CairnFollowUp continues it.
function M.threads(cb)
  M.exec('cairn.listThreads', vim.empty_dict(), function(err, res)
    if err then
      notify('listing threads failed: ' .. (err.message or ''), vim.log.levels.ERROR)
      return
    end
    local list = type(res) == 'table' and res or {}
    if cb then
      return cb(list)
    end
    if #list == 0 then
      notify('no threads yet: :CairnAsk starts one')
      return
    end
    vim.ui.select(list, {
      prompt = 'Cairn threads (newest first):',
      format_item = function(t)
        return ('%s%s  [%d run%s, %s]'):format(t.threadId == state.thread and '* ' or '', t.title or t.threadId,
          #(t.runs or {}), #(t.runs or {}) == 1 and '' or 's', t.updated or '')
      end,
    }, function(t)
      if t then
        local have = state.threads[t.threadId] or { title = t.title, runs = {} }
        state.threads[t.threadId] = have
        for _, id in ipairs(t.runs or {}) do
          if not vim.tbl_contains(have.runs, id) then
            table.insert(have.runs, id)
          end
        end
        state.thread = t.threadId
        notify(('current thread: %s (:CairnFollowUp continues it)'):format(t.title or t.threadId))
      end
    end)
  end)
end

local function runs_with(status)
  local out = {}
  for _, id in ipairs(state.run_order) do
    if not status or state.runs[id].status == status then
      table.insert(out, id)
    end
  end
  return out
end
M.runs_with = runs_with

function M.cancel(run_id)
  local list = runs_with('running')
  run_id = (run_id and run_id ~= '') and run_id or list[#list]
  if not run_id then
    notify('no run is in progress')
    return
  end
  M.exec('cairn.cancel', { runId = run_id })
end

function M.resume(run_id)
  local list = runs_with('interrupted')
  run_id = (run_id and run_id ~= '') and run_id or list[#list]
  if not run_id then
    -- Runs interrupted before this session (the server was restarted).
    M.exec('cairn.listRuns', vim.empty_dict(), function(err, res)
      local found = {}
      for _, r in ipairs((not err and type(res) == 'table') and res or {}) do
        if r.state == 'interrupted' then
          table.insert(found, r)
        end
      end
      if #found == 0 then
        notify('no interrupted run; pass a run id: :CairnResume {runId}')
        return
      end
      vim.ui.select(found, {
        prompt = 'Resume which run?',
        format_item = function(r)
          return r.runId .. ': ' .. (r.question or '')
        end,
      }, function(r)
        if r then
          M.resume(r.runId)
        end
      end)
    end)
    return
  end
  M.exec('cairn.resume', { runId = run_id }, function(err, res)
    if err then
      notify('resume failed: ' .. (err.message or ''), vim.log.levels.ERROR)
      return
    end
    local old = state.runs[run_id] or {}
    begin_run(res.runId or run_id, 'resume ' .. run_id .. (old.question and (': ' .. old.question) or ''), old.where)
  end)
end

function M.context_report(run_id, cb)
  local list = runs_with(nil)
  run_id = (run_id and run_id ~= '') and run_id or list[#list]
  if not run_id then
    notify('ask something first; the report describes a run')
    return
  end
  M.exec('cairn.contextReport', { runId = run_id }, function(err, res)
    if err then
      notify('context report failed: ' .. (err.message or ''), vim.log.levels.ERROR)
      return
    end
    vim.cmd('tabnew')
    local b = vim.api.nvim_get_current_buf()
    vim.bo[b].buftype = 'nofile'
    vim.bo[b].bufhidden = 'wipe'
    vim.bo[b].swapfile = false
    pcall(vim.api.nvim_buf_set_name, b, 'cairn://context/' .. run_id)
    vim.api.nvim_buf_set_lines(b, 0, -1, false, util.split_lines(res and res.markdown or ''))
    vim.bo[b].filetype = 'markdown'
    vim.bo[b].modifiable = false
    if cb then
      cb(b)
    end
  end)
end

-- ---- diagnostics forwarding --------------------------------------------------------

local function send_diagnostics(bufnr)
  local c = get_client()
  if not c or not vim.api.nvim_buf_is_valid(bufnr) or not vim.lsp.buf_is_attached(bufnr, state.client_id) then
    return
  end
  local skip = {}
  pcall(function()
    skip[vim.lsp.diagnostic.get_namespace(state.client_id)] = true
  end)
  local items = vim.diagnostic.get(bufnr)
  local diags = util.to_lsp_diagnostics(items, skip, function(lnum)
    return vim.api.nvim_buf_get_lines(bufnr, lnum, lnum + 1, false)[1]
  end)
  client_notify(c, 'cairn/didChangeDiagnostics', { uri = vim.uri_from_bufnr(bufnr), diagnostics = diags })
end
M.send_diagnostics = send_diagnostics

local function schedule_diagnostics(bufnr)
  local t = state.diag_timers[bufnr]
  if t then
    t:stop()
  else
    t = (vim.uv or vim.loop).new_timer()
    state.diag_timers[bufnr] = t
  end
  t:start(M.config.diagnostics_debounce_ms, 0, vim.schedule_wrap(function()
    send_diagnostics(bufnr)
  end))
end

-- ---- setup ----------------------------------------------------------------------------

--- For the statusline: what a run is doing (with seconds), else edits to review.
---   vim.o.statusline = '%f %= %{v:lua.require("cairn").status()}'
function M.status()
  local running = runs_with('running')
  if #running > 0 then
    return progress_text() or 'Cairn: running'
  end
  local p = #pending_edits()
  if p > 0 then
    return ('Cairn: %d edit%s to review'):format(p, p > 1 and 's' or '')
  end
  return get_client() and 'Cairn' or ''
end

local function command(name, fn, opts)
  vim.api.nvim_create_user_command(name, fn, opts or {})
end

function M.setup(opts)
  M.config = util.merge(vim.deepcopy(defaults), opts or {})
  if opts and opts.cmd then
    M.config.cmd = opts.cmd
  end
  if type(M.config.cmd) == 'string' then
    M.config.cmd = { M.config.cmd, 'serve' }
  end

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
    send_diagnostics(vim.api.nvim_get_current_buf())
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
  command('CairnFollowUp', function(o)
    M.follow_up(o.args)
  end, { nargs = '+', desc = 'Cairn: ask a follow-up in the current thread' })
  command('CairnThreads', function()
    M.threads()
  end, { desc = 'Cairn: list threads; the picked one becomes current' })
  command('CairnNewThread', function()
    state.thread = nil
    notify('the next :CairnFollowUp starts a new thread')
  end, { desc = 'Cairn: forget the current thread' })
  command('CairnAcceptHunk', function(o)
    local n = tonumber(o.args)
    local okv, id = pcall(vim.api.nvim_win_get_var, 0, 'cairn_edit_id')
    M.accept_hunk(n and (okv and id or pending_edits()[#pending_edits()]) or nil, n and n - 1 or nil)
  end, { nargs = '?', desc = 'Cairn: accept the hunk under the cursor (or hunk N)' })
  command('CairnRejectHunk', function(o)
    local n = tonumber(o.args)
    local okv, id = pcall(vim.api.nvim_win_get_var, 0, 'cairn_edit_id')
    M.reject_hunk(n and (okv and id or pending_edits()[#pending_edits()]) or nil, n and n - 1 or nil)
  end, { nargs = '?', desc = 'Cairn: reject the hunk under the cursor (or hunk N)' })
  command('CairnAnswers', function()
    show_answers()
  end, { desc = 'Cairn: show the answer buffer' })

  local group = vim.api.nvim_create_augroup('cairn', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'FileType' }, {
    group = group,
    callback = function(a)
      M.attach(a.buf)
    end,
  })
  local ok = pcall(vim.api.nvim_create_autocmd, 'DiagnosticChanged', {
    group = group,
    callback = function(a)
      if a.buf and a.buf > 0 then
        schedule_diagnostics(a.buf)
      end
    end,
  })
  if not ok then
    vim.api.nvim_create_autocmd('User', {
      group = group,
      pattern = 'DiagnosticsChanged',
      callback = function()
        schedule_diagnostics(vim.api.nvim_get_current_buf())
      end,
    })
  end
  -- Buffers already open.
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and attachable(b) then
      M.attach(b)
    end
  end
end

return M
