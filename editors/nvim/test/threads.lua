-- End-to-end on an OpenAI-compatible HTTP endpoint (editors/test-model.mjs):
-- a follow-up in the same thread carries the first exchange to the model;
-- a two-hunk edit, hunk 1 accepted and hunk 2 rejected from the diff tab
-- (disk byte-exact, saved, undo exact); a run started through
-- vim.lsp.buf.code_action is shown; progress in status(); a readable diff
-- tab name; :checkhealth cairn probes the endpoint (OK up, ERROR down).
-- env: CAIRN_BIN, CAIRN_NVIM_DIR, WS, MODEL_URL (…/v1), REQUESTS (jsonl of model requests)
local T = dofile(vim.env.CAIRN_NVIM_DIR .. '/test/helpers.lua')
T.name = 'nvim-threads'
local cairn = require('cairn')
local ws = vim.env.WS
local function read(p)
  local f = assert(io.open(p, 'r'))
  local s = f:read('*a')
  f:close()
  return s
end
local function lines(b)
  return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n')
end
local hello, two = ws .. '/hello.go', ws .. '/two.go'
local TWO = read(two)
local TWO_HUNK1 = TWO:gsub('"one"', '"uno"', 1)

-- vim.ui.select: pick the item whose label contains `want`.
local want = 'Allow once'
vim.ui.select = function(items, opts, on_choice)
  for _, it in ipairs(items) do
    local label = opts.format_item and opts.format_item(it) or (type(it) == 'table' and it.title) or tostring(it)
    if tostring(label):find(want, 1, true) then
      return on_choice(it)
    end
  end
  on_choice(nil)
end
vim.notify = function(msg)
  T.out('  notify: ' .. tostring(msg))
end

cairn.setup({
  cmd = { vim.env.CAIRN_BIN, 'serve' },
  settings = { model = { provider = 'openai', name = 'test-model', baseURL = vim.env.MODEL_URL }, approval = { mode = 'ask' } },
})

local function model_requests()
  local out = {}
  for _, l in ipairs(vim.split(read(vim.env.REQUESTS), '\n', { plain = true })) do
    if l ~= '' then
      table.insert(out, vim.fn.json_decode(l))
    end
  end
  return out
end
local function messages_text(req)
  local parts = {}
  for _, m in ipairs(req.messages or {}) do
    table.insert(parts, type(m.content) == 'string' and m.content or vim.fn.json_encode(m.content or ''))
  end
  return table.concat(parts, '\n')
end
local function proposed_win()
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if pcall(vim.api.nvim_buf_get_var, vim.api.nvim_win_get_buf(w), 'cairn_proposed') then
      return w
    end
  end
end

local flow = true
local function step(name, fn)
  if not flow then
    T.skip(name, 'an earlier step failed')
    return
  end
  flow = T.test(name, fn)
end

local hello_buf
step('the server starts', function()
  vim.cmd('edit ' .. vim.fn.fnameescape(hello))
  hello_buf = vim.api.nvim_get_current_buf()
  T.wait('the cairn client to initialize', function()
    local c = cairn.client()
    return c and c.server_capabilities ~= nil and next(c.server_capabilities) ~= nil
  end, 20000)
end)

local seen_progress
step('a run shows progress in status() while it answers', function()
  vim.cmd('5,7CairnAsk What does main print?')
  T.wait('status() to say the run is answering', function()
    local s = cairn.status()
    if s:find('answering', 1, true) then
      seen_progress = s
      return true
    end
  end)
  T.wait('the first answer in the answer buffer', function()
    return lines(cairn.answer_buf()):find('It prints Hello.', 1, true) ~= nil
  end)
  T.wait('the run to finish', function()
    return #cairn.runs_with('running') == 0
  end)
  T.truthy(cairn.current_thread(), 'cairn.ask answered with a threadId')
  T.truthy(not cairn.status():find('answering', 1, true), 'status after the run: ' .. cairn.status())
end)

step(':CairnFollowUp continues the thread: the model request holds the first exchange', function()
  local thread = cairn.current_thread()
  vim.cmd('CairnFollowUp And in French?')
  T.wait('the follow-up answer', function()
    return lines(cairn.answer_buf()):find('Il affiche Bonjour.', 1, true) ~= nil
  end)
  T.eq(cairn.current_thread(), thread, 'same thread')
  local follow
  for _, r in ipairs(model_requests()) do
    if messages_text(r):find('And in French?', 1, true) then
      follow = r
    end
  end
  T.truthy(follow, 'a model request with the follow-up question')
  local text = messages_text(follow)
  T.truthy(text:find('What does main print?', 1, true), 'first question in the follow-up request: ' .. text)
  T.truthy(text:find('It prints Hello.', 1, true), 'first answer in the follow-up request: ' .. text)
end)

step(':CairnThreads lists the thread', function()
  local got
  cairn.threads(function(list)
    got = list
  end)
  T.wait('cairn.listThreads', function()
    return got ~= nil
  end)
  T.truthy(#got >= 1, vim.inspect(got))
  T.eq(got[1].threadId, cairn.current_thread(), 'newest first')
  T.eq(#got[1].runs, 2, 'two runs in the thread')
end)

local two_buf
step('a two-hunk edit opens a diff tab with a readable name', function()
  vim.cmd('edit ' .. vim.fn.fnameescape(two))
  two_buf = vim.api.nvim_get_current_buf()
  vim.cmd('CairnAsk Tidy both functions.')
  T.wait('a Cairn proposed window', function()
    return proposed_win() ~= nil
  end)
  local pw = proposed_win()
  vim.api.nvim_set_current_win(pw)
  local name = vim.fn.bufname(vim.api.nvim_win_get_buf(pw))
  T.truthy(name:match('^two%.go ') and not name:find('/', 1, true), 'tab/buffer name: ' .. name)
  local label = vim.api.nvim_eval('pathshorten(bufname(winbufnr(' .. pw .. ')))')
  T.truthy(label:match('^two%.go '), 'the tab line label: ' .. label)
  T.wait('two hunks', function()
    local e = cairn._edit(vim.b.cairn_edit_id)
    return e and e.result and #(e.result.hunks or {}) == 2
  end)
end)

step('gH on hunk 2 rejects it (it leaves the diff), gh on hunk 1 accepts it: disk byte-exact and saved', function()
  local pw = proposed_win()
  vim.api.nvim_set_current_win(pw)
  local function hl(line)
    return vim.api.nvim_win_call(proposed_win(), function()
      return vim.fn.diff_hlID(line, 1)
    end)
  end
  T.truthy(hl(8) ~= 0, 'hunk 2 (line 8) is highlighted as a change before the reject')
  local ns = vim.api.nvim_get_namespaces()['cairn_hunk_actions']
  local function action_rows()
    local rows = {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(vim.api.nvim_win_get_buf(proposed_win()), ns, 0, -1, { details = true })) do
      local text = m[4].virt_text[1][1]
      T.truthy(text:find('gh accept', 1, true) and text:find('gH reject', 1, true), 'the hunk actions: ' .. text)
      table.insert(rows, m[2] + 1)
    end
    return rows
  end
  T.eq(action_rows(), { 4, 8 }, 'the actions shown on both hunks (lines 4 and 8)')
  vim.api.nvim_win_set_cursor(pw, { 8, 0 })
  vim.api.nvim_feedkeys('gH', 'mx', false)
  T.wait('hunk 2 rejected in the answers', function()
    return lines(cairn.answer_buf()):find('Rejected hunk 2 of two.go', 1, true) ~= nil
  end)
  T.truthy(proposed_win(), 'the diff tab stays while hunk 1 is pending')
  T.wait('the rejected hunk to leave the diff', function()
    return hl(8) == 0
  end)
  T.truthy(hl(4) ~= 0, 'hunk 1 (line 4) still shows as a change')
  T.eq(action_rows(), { 4 }, 'the actions shown on the pending hunk only')
  T.eq(read(two), TWO, 'disk untouched by the reject')
  vim.api.nvim_set_current_win(proposed_win())
  vim.api.nvim_win_set_cursor(0, { 4, 0 })
  vim.api.nvim_feedkeys('gh', 'mx', false)
  T.wait('hunk 1 on disk', function()
    return read(two) == TWO_HUNK1
  end)
  T.wait('the diff tab to close once every hunk is decided', function()
    return proposed_win() == nil
  end)
  T.eq(vim.bo[two_buf].modified, false, 'two.go saved after the accept')
  T.eq(read(two), TWO_HUNK1, 'disk after accept of hunk 1')
  T.eq(lines(two_buf) .. '\n', TWO_HUNK1, 'buffer')
end)

step(':CairnUndo restores two.go exactly (saved) and names the hunk it undid', function()
  vim.cmd('CairnUndo')
  T.wait('two.go restored on disk', function()
    return read(two) == TWO
  end)
  T.wait('the undo named in the answers', function()
    return lines(cairn.answer_buf()):find('Undid hunk 1 of two.go (line 4)', 1, true) ~= nil
  end)
  T.eq(vim.bo[two_buf].modified, false, 'two.go saved after the undo')
end)

step('a run started from vim.lsp.buf.code_action is shown', function()
  -- The two-hunk run answers once its hunks are decided. The test endpoint
  -- hands out turns in request order, so both model calls at once could swap
  -- answers; two runs streaming at once are covered in unit.lua.
  T.wait('the two-hunk run to finish', function()
    return #cairn.runs_with('running') == 0
  end)
  vim.cmd('buffer ' .. hello_buf)
  want = 'Explain this code'
  local before = #cairn.runs_with(nil)
  if vim.lsp.buf.range_code_action and vim.fn.has('nvim-0.8') == 0 then
    vim.lsp.buf.range_code_action(nil, { 5, 0 }, { 7, 0 })
  else
    vim.api.nvim_win_set_cursor(0, { 6, 0 })
    vim.lsp.buf.code_action({ range = { start = { 5, 0 }, ['end'] = { 7, 0 } } })
  end
  T.wait('the code-action run in the answer buffer', function()
    return lines(cairn.answer_buf()):find('It explains itself.', 1, true) ~= nil
  end)
  T.truthy(#cairn.runs_with(nil) > before, 'a new run is tracked')
  T.truthy(lines(cairn.answer_buf()):find('Explain what the selected code does', 1, true), 'its question is shown: ' .. lines(cairn.answer_buf()))
  want = 'Allow once'
end)

step('u after an accept, then :CairnUndo: "already undone", and the disk is undone too', function()
  local ORIGINAL = read(hello)
  vim.cmd('buffer ' .. hello_buf)
  vim.cmd('CairnAsk Say howdy.')
  T.wait('a Cairn proposed window', function()
    return proposed_win() ~= nil
  end)
  vim.api.nvim_set_current_win(proposed_win())
  vim.api.nvim_feedkeys('ga', 'mx', false)
  T.wait('the accepted edit on disk (saved)', function()
    return read(hello):find('Howdy', 1, true) ~= nil
  end)
  T.wait('the diff tab to close', function()
    return proposed_win() == nil
  end)
  vim.cmd('buffer ' .. hello_buf)
  vim.cmd('silent undo')
  T.eq(lines(hello_buf) .. '\n', ORIGINAL, 'the buffer after u')
  local said
  vim.notify = function(msg)
    T.out('  notify: ' .. tostring(msg))
    if tostring(msg):find('already undone', 1, true) then
      said = msg
    end
  end
  vim.cmd('CairnUndo')
  T.wait('"already undone"', function()
    return said ~= nil
  end)
  T.wait('the disk back at the original', function()
    return read(hello) == ORIGINAL
  end)
  T.eq(vim.bo[hello_buf].modified, false, 'hello.go written')
end)

flow = true
T.test(':checkhealth cairn probes the endpoint: OK while it is up', function()
  vim.cmd('checkhealth cairn')
  local text = lines(0)
  T.truthy(text:find('model endpoint reachable', 1, true), text)
  T.truthy(not text:find('ERROR', 1, true), 'no ERROR in: ' .. text)
end)

T.test(':checkhealth cairn reports an ERROR when the endpoint is down', function()
  -- A port nothing listens on: bind one, note it, close it.
  local uv = vim.uv or vim.loop
  local s = uv.new_tcp()
  s:bind('127.0.0.1', 0)
  local port = s:getsockname().port
  s:close()
  cairn.config.settings.model.baseURL = ('http://127.0.0.1:%d/v1'):format(port)
  vim.cmd('checkhealth cairn')
  local text = lines(0)
  T.truthy(text:find('is down', 1, true) and text:find('ERROR', 1, true), text)
  cairn.config.settings.model.baseURL = vim.env.MODEL_URL
end)

T.out('  progress seen: ' .. tostring(seen_progress))
if T.failed > 0 then
  local okr, content = pcall(read, vim.lsp.get_log_path())
  if okr then
    local all = vim.split(content, '\n', { plain = true })
    for i = math.max(1, #all - 40), #all do
      T.out(all[i])
    end
  end
end
T.finish()
