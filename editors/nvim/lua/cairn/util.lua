-- Pure helpers for the Cairn plugin (no editor state): ranges, diagnostics,
-- transcript rendering. Tested by test/unit.lua.
local M = {}

local islist = vim.islist or vim.tbl_islist

--- Length of a string in UTF-16 code units (LSP's character unit).
function M.utf16_len(s)
  local n, i, len = 0, 1, #s
  while i <= len do
    local c = s:byte(i)
    if c < 0x80 then
      i = i + 1
      n = n + 1
    elseif c < 0xE0 then
      i = i + 2
      n = n + 1
    elseif c < 0xF0 then
      i = i + 3
      n = n + 1
    else
      i = i + 4
      n = n + 2 -- astral plane: a surrogate pair
    end
  end
  return n
end

--- LSP range covering whole lines line1..line2 (1-based, inclusive).
--- @param last_line string the text of line2
function M.lines_range(line1, line2, last_line)
  if line2 < line1 then
    line1, line2 = line2, line1
  end
  return {
    start = { line = line1 - 1, character = 0 },
    ['end'] = { line = line2 - 1, character = M.utf16_len(last_line or '') },
  }
end

local function num(v)
  return type(v) == 'number' and v or nil
end

--- vim.diagnostic items to LSP Diagnostic objects.
--- Items from namespaces in skip_ns (a set) or with source "cairn" are left out.
--- lines: optional function(lnum) -> text, to convert byte columns to UTF-16.
function M.to_lsp_diagnostics(items, skip_ns, lines)
  local out = {}
  skip_ns = skip_ns or {}
  local function col16(lnum, col)
    if not lines or col == 0 then
      return col
    end
    local text = lines(lnum)
    if not text then
      return col
    end
    return M.utf16_len(text:sub(1, col))
  end
  for _, d in ipairs(items or {}) do
    local src = type(d.source) == 'string' and d.source:lower() or ''
    if not skip_ns[d.namespace] and src ~= 'cairn' then
      local lnum = num(d.lnum) or 0
      local end_lnum = num(d.end_lnum) or lnum
      local col = num(d.col) or 0
      local end_col = num(d.end_col) or col
      local lsp = {
        range = {
          start = { line = lnum, character = col16(lnum, col) },
          ['end'] = { line = end_lnum, character = col16(end_lnum, end_col) },
        },
        message = d.message or '',
        severity = num(d.severity) or 1,
      }
      if d.source then
        lsp.source = d.source
      end
      if d.code ~= nil then
        lsp.code = d.code
      end
      table.insert(out, lsp)
    end
  end
  return out
end

--- Appends streamed text to a list of lines: the first piece joins the last
--- line, every newline starts a new one. Returns the new lines list.
function M.append_text(lines, text)
  local out = {}
  for i, l in ipairs(lines) do
    out[i] = l
  end
  if #out == 0 then
    out[1] = ''
  end
  local parts = vim.split(text, '\n', { plain = true })
  out[#out] = out[#out] .. parts[1]
  for i = 2, #parts do
    table.insert(out, parts[i])
  end
  return out
end

--- Splits file text into buffer lines (a final newline does not add a line).
function M.split_lines(text)
  local lines = vim.split(text or '', '\n', { plain = true })
  if #lines > 1 and lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

--- Recursive merge of b into a copy of a (b wins).
function M.merge(a, b)
  local out = {}
  for k, v in pairs(a or {}) do
    out[k] = v
  end
  for k, v in pairs(b or {}) do
    if type(v) == 'table' and type(out[k]) == 'table' and not islist(v) then
      out[k] = M.merge(out[k], v)
    else
      out[k] = v
    end
  end
  return out
end

local approval = { ['Allow once'] = true, ['Allow for session'] = true, ['Deny'] = true }

--- True when a showMessageRequest's actions are Cairn's approval actions.
function M.is_approval(actions)
  if type(actions) ~= 'table' or #actions == 0 then
    return false
  end
  for _, a in ipairs(actions) do
    if not approval[a.title] then
      return false
    end
  end
  return true
end

--- An approval's actions with Deny first: pickers preselect the first item,
--- so accepting the default denies.
function M.deny_first(actions)
  local out = {}
  for _, a in ipairs(actions) do
    if a.title == 'Deny' then
      table.insert(out, a)
    end
  end
  for _, a in ipairs(actions) do
    if a.title ~= 'Deny' then
      table.insert(out, a)
    end
  end
  return out
end

local function short(v, max)
  max = max or 120
  local s
  if type(v) == 'string' then
    s = v
  elseif v == nil or v == vim.NIL then
    s = ''
  else
    local ok, enc = pcall(vim.fn.json_encode, v)
    s = ok and enc or tostring(v)
  end
  s = s:gsub('%s+', ' ')
  if #s > max then
    s = s:sub(1, max - 3) .. '...'
  end
  return s
end
M.short = short

--- One line for a tool input: its most telling field (command, path, query), else the JSON.
function M.summarize(input, max)
  if type(input) == 'table' then
    for _, k in ipairs({ 'command', 'path', 'query', 'glob' }) do
      if type(input[k]) == 'string' and input[k] ~= '' then
        return short(input[k], max)
      end
    end
  end
  return short(input, max)
end

--- The pending hunk of `path` at 1-based `line` of one side of the diff
--- ('old': the file as it is, 'new': the proposed text), if the line is in the
--- hunk or within `slack` lines of it (default 2). Hunk lines are 0-based,
--- half-open (cairn.getEdit's startLine/endLine, proposedStartLine/proposedEndLine).
function M.hunk_at(hunks, path, line, side, slack)
  slack = slack or 2
  local best, best_d
  for _, h in ipairs(hunks or {}) do
    if h.state == 'pending' and (path == nil or h.path == path) then
      local s, e
      if side == 'new' and type(h.proposedStartLine) == 'number' then
        s, e = h.proposedStartLine, h.proposedEndLine
      else
        s, e = h.startLine, h.endLine
      end
      -- 1-based first and last line; a pure insertion/deletion is the line at s.
      local first, last = s + 1, math.max(s + 1, e)
      local d = line < first and first - line or (line > last and line - last or 0)
      if not best_d or d < best_d then
        best, best_d = h, d
      end
    end
  end
  if best_d and best_d <= slack then
    return best
  end
end

local decisions = {
  allow_once = 'allowed once',
  allow_session = 'allowed for the session',
  deny = 'denied',
  policy_allow = 'allowed by policy',
  policy_deny = 'denied by policy',
}

--- The text a diff tab shows as proposed for file f of an edit (cairn.getEdit):
--- the proposal with every rejected hunk of that file put back to the old
--- lines, so a rejected change no longer shows (or highlights) as a change.
function M.shown_proposed(f, hunks)
  local lines = M.split_lines(f.proposed)
  local rejected = {}
  for _, h in ipairs(hunks or {}) do
    if h.state == 'rejected' and (h.path == f.path or (h.uri and h.uri == f.uri)) and type(h.proposedStartLine) == 'number' then
      table.insert(rejected, h)
    end
  end
  table.sort(rejected, function(a, b)
    return a.proposedStartLine > b.proposedStartLine
  end)
  for _, h in ipairs(rejected) do
    local old, body = {}, false
    for _, l in ipairs(vim.split(h.diff or '', '\n', { plain = true })) do
      if l:sub(1, 2) == '@@' then
        body = true
      elseif body and l:sub(1, 1) == '-' then
        table.insert(old, l:sub(2))
      end
    end
    local out = {}
    for i = 1, h.proposedStartLine do
      out[#out + 1] = lines[i]
    end
    for _, l in ipairs(old) do
      out[#out + 1] = l
    end
    for i = h.proposedEndLine + 1, #lines do
      out[#out + 1] = lines[i]
    end
    lines = out
  end
  return lines
end

--- A hunk named for people: "hunk 2 of two.go (line 8)".
function M.hunk_name(h)
  if type(h) ~= 'table' then
    return 'a hunk'
  end
  local first, last = h.startLine + 1, math.max(h.startLine + 1, h.endLine)
  return ('hunk %d of %s (%s)'):format(h.index + 1, h.path or '?', first == last and ('line ' .. first) or ('lines %d-%d'):format(first, last))
end

--- The workspace-relative paths (file names when no root) a WorkspaceEdit touches.
function M.edit_paths(edit, root)
  local uris = {}
  if type(edit) == 'table' then
    for uri in pairs(type(edit.changes) == 'table' and edit.changes or {}) do
      table.insert(uris, uri)
    end
    for _, dc in ipairs(type(edit.documentChanges) == 'table' and edit.documentChanges or {}) do
      local u = type(dc) == 'table' and ((type(dc.textDocument) == 'table' and dc.textDocument.uri) or dc.uri or dc.newUri)
      if type(u) == 'string' and not vim.tbl_contains(uris, u) then
        table.insert(uris, u)
      end
    end
  end
  table.sort(uris)
  local out = {}
  for _, u in ipairs(uris) do
    local ok, f = pcall(vim.uri_to_fname, u)
    f = ok and f or u
    if root and f:sub(1, #root + 1) == root .. '/' then
      f = f:sub(#root + 2)
    else
      f = vim.fn.fnamemodify(f, ':t')
    end
    table.insert(out, f)
  end
  return out
end

--- A transcript renders run events as Markdown for people: text deltas
--- inline, everything else on its own line, and no ids or raw JSON (those
--- are behind :CairnRunInfo).
function M.transcript()
  local t = { at_line_start = true, tools = {} }
  local function line(s)
    local prefix = t.at_line_start and '' or '\n'
    t.at_line_start = true
    return prefix .. s .. '\n'
  end
  function t.header(_, question, where)
    local qlines = vim.split(vim.trim(question or ''), '\n', { plain = true })
    local out = { '## ' .. qlines[1] }
    for i = 2, #qlines do
      table.insert(out, '> ' .. qlines[i])
    end
    if where and where ~= '' then
      table.insert(out, '*' .. where .. '*')
    end
    table.insert(out, '')
    return line(table.concat(out, '\n'))
  end
  function t.render(ev, root)
    local k = ev.kind
    if k == 'text' then
      local d = ev.delta or ''
      if d ~= '' then
        t.at_line_start = d:sub(-1) == '\n'
      end
      return d
    elseif k == 'toolCall' then
      if ev.callId then
        t.tools[ev.callId] = ev.tool
      end
      if ev.tool == 'update_plan' then
        return '' -- shown as the plan event that follows
      end
      -- Only the input's telling field (command, path, query), never its JSON.
      local what = ''
      if type(ev.input) == 'table' then
        for _, f in ipairs({ 'command', 'path', 'query', 'glob' }) do
          if type(ev.input[f]) == 'string' and ev.input[f] ~= '' then
            what = ' `' .. (short(ev.input[f], 80):gsub('`', "'")) .. '`'
            break
          end
        end
      end
      return line(('> %s%s'):format(ev.tool or 'tool', what))
    elseif k == 'toolResult' then
      if ev.ok ~= false then
        return '' -- the call's line says enough; failures are worth a line
      end
      local name = ev.tool or (ev.callId and t.tools[ev.callId]) or 'tool'
      local sum = (type(ev.summary) == 'string' and ev.summary ~= '') and (': ' .. short(ev.summary, 100)) or ''
      return line(('> %s failed%s'):format(name, sum))
    elseif k == 'approval' then
      local name = (ev.callId and t.tools[ev.callId]) or 'tool call'
      return line(('> approval: %s %s'):format(name, decisions[ev.decision or ''] or (ev.decision or '')))
    elseif k == 'editProposed' then
      local paths = M.edit_paths(ev.edit, root)
      local files = #paths > 0 and (' to ' .. table.concat(paths, ', ')) or ''
      return line(('> edit proposed%s: review it in the diff tab (ga accept, gx reject)'):format(files))
    elseif k == 'plan' then
      -- One line per plan event: the steps with their state, the whole list each time.
      local marks, steps, done = { completed = '[x]', in_progress = '[>]' }, {}, 0
      for _, e in ipairs(type(ev.plan) == 'table' and ev.plan or {}) do
        if type(e) == 'table' and type(e.content) == 'string' then
          done = done + (e.status == 'completed' and 1 or 0)
          table.insert(steps, (marks[e.status] or '[ ]') .. ' ' .. e.content)
        end
      end
      return #steps > 0 and line(('> plan (%d/%d done): %s'):format(done, #steps, table.concat(steps, '; '))) or ''
    elseif k == 'checkpoint' then
      return ''
    elseif k == 'finished' then
      local tokens = M.usage_text(ev.usage)
      tokens = tokens ~= '' and (' - ' .. tokens) or ''
      local nr = ''
      if type(ev.notReady) == 'table' and #ev.notReady > 0 then
        nr = (' - not ready: %s (the answer used what was indexed so far)'):format(table.concat(ev.notReady, ', '))
      end
      return line('-- finished' .. tokens .. nr)
    elseif k == 'failed' then
      return line(('-- failed%s: %s'):format(ev.class and (' (' .. ev.class .. ')') or '', ev.error or 'unknown error'))
    elseif k == 'cancelled' then
      return line('-- cancelled')
    elseif k == 'interrupted' then
      return line(('-- interrupted%s (:CairnResume continues it)'):format(ev.error and (': ' .. ev.error) or ''))
    end
    return ''
  end
  return t
end

M.terminal = { finished = true, failed = true, cancelled = true, interrupted = true }

-- usage_text renders a `finished` event's usage: tokens in (of them served
-- from the provider's prompt cache) and out, and the cost when the server
-- priced it ('' without usage).
function M.usage_text(u)
  if type(u) ~= 'table' or not u.inputTokens then
    return ''
  end
  local cached = (u.cachedInputTokens or 0) > 0 and (' (%d cached)'):format(u.cachedInputTokens) or ''
  local cost = u.costUSD and (', $%.4f'):format(u.costUSD) or ''
  return ('%d in%s / %d out tokens%s'):format(u.inputTokens or 0, cached, u.outputTokens or 0, cost)
end

return M
