-- Runs and threads: asking (cairn.ask), follow-ups, the run events streamed
-- into the answer buffer, cancel, resume, the context report. Runs and
-- threads belong to the session (root) whose server made them.
local answers = require('cairn.answers')
local config = require('cairn.config')
local progress = require('cairn.progress')
local review = require('cairn.review')
local sessions = require('cairn.sessions')
local util = require('cairn.util')

local M = {}

local notify = config.notify

-- Keyed by run id (ids are unique across servers), so shared by every session.
local transcripts = {} -- runId -> its own transcript (line state, tool names)
local early = {} -- runId -> output received before cairn.ask answered
local begun = {}

local function run(s, run_id)
  local r = s.runs[run_id]
  if not r then
    r = { run_id = run_id, status = 'running', last_seq = 0, edits = {}, checkpoints = {} }
    s.runs[run_id] = r
    table.insert(s.run_order, run_id)
    sessions.own_run(s, run_id)
  end
  return r
end

local function note_thread(s, thread_id, run_id, question, uri)
  if type(thread_id) ~= 'string' or thread_id == '' then
    return
  end
  local t = s.threads[thread_id]
  if not t then
    t = { title = question, runs = {} }
    s.threads[thread_id] = t
  end
  if run_id and not vim.tbl_contains(t.runs, run_id) then
    table.insert(t.runs, run_id)
  end
  t.uri = uri or t.uri
  s.thread = thread_id
end

local function transcript(run_id)
  local t = transcripts[run_id]
  if not t then
    t = util.transcript()
    transcripts[run_id] = t
  end
  return t
end

local function begin_run(s, run_id, question, where, meta)
  local r = run(s, run_id)
  meta = meta or {}
  r.question = r.question or question
  r.where = r.where or where
  r.uri = r.uri or meta.uri
  r.thread_id = meta.thread_id or r.thread_id
  note_thread(s, r.thread_id, run_id, question, r.uri)
  if begun[run_id] then
    return
  end
  begun[run_id] = true
  answers.show()
  answers.append(transcript(run_id).header(run_id, question, where), run_id)
  answers.append(early[run_id], run_id)
  early[run_id] = nil
end

--- A cairn/runEvent of session s's server.
function M.on_event(s, ev)
  if type(ev) ~= 'table' or type(ev.runId) ~= 'string' then
    return
  end
  local r = run(s, ev.runId)
  if type(ev.seq) == 'number' then
    if ev.seq <= r.last_seq then
      return -- duplicate or stale
    end
    r.last_seq = ev.seq
  end
  local out = transcript(ev.runId).render(ev, s.root)
  if begun[ev.runId] then
    answers.append(out, ev.runId)
  else
    early[ev.runId] = (early[ev.runId] or '') .. out
  end
  if ev.kind == 'started' then
    r.status = 'running'
    progress.set(s, ev.runId, 'thinking…')
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
      begin_run(s, ev.runId, ev.question, where, { thread_id = ev.threadId, uri = ev.uri })
    end
  elseif ev.kind == 'toolCall' then
    progress.set(s, ev.runId, 'running ' .. (ev.tool or 'a tool') .. ' ' .. util.summarize(ev.input, 60))
  elseif ev.kind == 'toolResult' or ev.kind == 'approval' then
    progress.set(s, ev.runId, 'thinking…')
  elseif ev.kind == 'text' then
    if not s.progress or s.progress.what ~= 'answering…' then
      progress.set(s, ev.runId, 'answering…')
    end
  elseif util.terminal[ev.kind] then
    progress.set(s, ev.runId, nil)
    r.status = ev.kind
    r.usage = type(ev.usage) == 'table' and ev.usage or r.usage
    r.error = ev.error
    if ev.kind == 'failed' then
      notify(('run failed%s: %s'):format(ev.class and (' (' .. ev.class .. ')') or '', ev.error or ''), vim.log.levels.ERROR)
    elseif ev.kind == 'interrupted' then
      notify('run ' .. ev.runId .. ' was interrupted; :CairnResume continues it', vim.log.levels.WARN)
    end
  elseif ev.kind == 'checkpoint' and ev.checkpointId then
    table.insert(r.checkpoints, ev.checkpointId)
  elseif ev.kind == 'editProposed' and ev.editId then
    table.insert(r.edits, ev.editId)
    review.open(s, ev.editId)
  elseif ev.kind == 'editUpdated' and ev.editId then
    review.refresh(s, ev.editId)
  end
  vim.cmd('redrawstatus')
end

--- cairn.ask in thread_id's thread (nil: a new thread) on session s; shows the run.
function M.send_ask(s, question, uri, range, where, thread_id, cb)
  sessions.exec(s, 'cairn.ask', { uri = uri, range = range, question = question, threadId = thread_id }, function(err, res)
    if err or type(res) ~= 'table' or not res.runId then
      notify('ask failed: ' .. (err and err.message or vim.inspect(res)), vim.log.levels.ERROR)
      return
    end
    begin_run(s, res.runId, question, where, { thread_id = res.threadId or thread_id, uri = uri })
    if cb then
      cb(res)
    end
  end)
end

--- Asks about lines line1..line2 (1-based; nil: no range) of bufnr, on the
--- server of bufnr's root (started if need be).
function M.ask(question, line1, line2, bufnr, cb)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not question or question == '' then
    notify('usage: :CairnAsk {question}', vim.log.levels.WARN)
    return
  end
  local id, s = sessions.attach(bufnr)
  if not id then
    return
  end
  local range
  if line1 and line2 then
    local last = vim.api.nvim_buf_get_lines(bufnr, line2 - 1, line2, false)[1] or ''
    range = util.lines_range(line1, line2, last)
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local where = vim.fn.fnamemodify(name, ':.') .. (line1 and (':%d-%d'):format(line1, line2) or '')
  M.send_ask(s, question, vim.uri_from_bufnr(bufnr), range, where, nil, cb)
end

--- Asks a follow-up in session s's current thread (the last run's, or the
--- one picked with :CairnThreads); with no thread yet, a new question about
--- this buffer.
function M.follow_up(s, question, cb)
  if not question or question == '' then
    notify('usage: :CairnFollowUp {question}', vim.log.levels.WARN)
    return
  end
  local t = s.thread and s.threads[s.thread]
  if not t then
    return M.ask(question, nil, nil, nil, cb)
  end
  local uri = t.uri or vim.uri_from_bufnr(0)
  M.send_ask(s, question, uri, nil, vim.fn.fnamemodify(vim.uri_to_fname(uri), ':.') .. ' (follow-up)', s.thread, cb)
end

--- Lists session s's threads (cairn.listThreads; they survive restarts) and
--- makes the picked one current, so :CairnFollowUp continues it.
function M.threads(s, cb)
  sessions.exec(s, 'cairn.listThreads', vim.empty_dict(), function(err, res)
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
        return ('%s%s  [%d run%s, %s]'):format(t.threadId == s.thread and '* ' or '', t.title or t.threadId,
          #(t.runs or {}), #(t.runs or {}) == 1 and '' or 's', t.updated or '')
      end,
    }, function(t)
      if t then
        local have = s.threads[t.threadId] or { title = t.title, runs = {} }
        s.threads[t.threadId] = have
        for _, id in ipairs(t.runs or {}) do
          if not vim.tbl_contains(have.runs, id) then
            table.insert(have.runs, id)
          end
        end
        s.thread = t.threadId
        notify(('current thread: %s (:CairnFollowUp continues it)'):format(t.title or t.threadId))
      end
    end)
  end)
end

--- Session s's run ids with that status (nil: all), oldest first.
function M.with(s, status)
  local out = {}
  for _, id in ipairs(s and s.run_order or {}) do
    if not status or s.runs[id].status == status then
      table.insert(out, id)
    end
  end
  return out
end

-- The session of a run named by id, else s and its newest run with status.
local function pick_run(s, run_id, status)
  if run_id and run_id ~= '' then
    return run_id, sessions.of_run(run_id) or s
  end
  local list = M.with(s, status)
  return list[#list], s
end

function M.cancel(s, run_id)
  run_id, s = pick_run(s, run_id, 'running')
  if not run_id then
    notify('no run is in progress')
    return
  end
  sessions.exec(s, 'cairn.cancel', { runId = run_id })
end

function M.resume(s, run_id)
  run_id, s = pick_run(s, run_id, 'interrupted')
  if not run_id then
    -- Runs interrupted before this session (the server was restarted).
    sessions.exec(s, 'cairn.listRuns', vim.empty_dict(), function(err, res)
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
          M.resume(s, r.runId)
        end
      end)
    end)
    return
  end
  sessions.exec(s, 'cairn.resume', { runId = run_id }, function(err, res)
    if err then
      notify('resume failed: ' .. (err.message or ''), vim.log.levels.ERROR)
      return
    end
    local old = s.runs[run_id] or {}
    begin_run(s, res.runId or run_id, 'resume ' .. run_id .. (old.question and (': ' .. old.question) or ''), old.where)
  end)
end

--- The ids and bookkeeping of a run (the answer buffer shows none of
--- them), as Markdown lines: run, thread, state, edits with their hunks'
--- states, checkpoints, tokens. run_id nil: the session's newest run.
function M.info(s, run_id)
  run_id, s = pick_run(s, run_id, nil)
  local r = run_id and s and s.runs[run_id]
  if not r then
    return nil
  end
  local out = {
    '# Cairn run',
    '',
    '- question: ' .. (r.question or '?'),
    '- run: `' .. run_id .. '`',
    '- thread: ' .. (r.thread_id and ('`' .. r.thread_id .. '`') or '-'),
    '- state: ' .. (r.status or '?') .. (r.error and (' (' .. r.error .. ')') or ''),
  }
  if type(r.usage) == 'table' and r.usage.inputTokens then
    table.insert(out, '- tokens: ' .. util.usage_text(r.usage))
  end
  for _, id in ipairs(r.edits) do
    local e = s.edits[id]
    local hunks = {}
    for _, h in ipairs(e and e.result and e.result.hunks or {}) do
      table.insert(hunks, ('hunk %d %s:%d %s'):format(h.index + 1, h.path, h.startLine + 1, h.state))
    end
    table.insert(out, ('- edit: `%s` %s%s'):format(id, e and e.state or '?', #hunks > 0 and (' (' .. table.concat(hunks, ', ') .. ')') or ''))
  end
  for _, c in ipairs(r.checkpoints) do
    table.insert(out, '- checkpoint: `' .. c .. '`')
  end
  for _, c in ipairs(s.checkpoints or {}) do
    if vim.tbl_contains(r.edits, c.editId) then
      table.insert(out, ('- accepted: `%s` (%s; :CairnUndo restores)'):format(c.checkpointId, c.what or c.editId))
    end
  end
  return out, run_id
end

function M.context_report(s, run_id, cb)
  run_id, s = pick_run(s, run_id, nil)
  if not run_id then
    notify('ask something first; the report describes a run')
    return
  end
  sessions.exec(s, 'cairn.contextReport', { runId = run_id }, function(err, res)
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

return M
