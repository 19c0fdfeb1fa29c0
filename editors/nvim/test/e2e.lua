-- End-to-end: headless Neovim drives the real cairn binary on the scripted
-- model. Ask on a range, the diff tab appears, accept, the buffer changes,
-- undo, it is restored; context report; :checkhealth cairn.
-- env: CAIRN_BIN, CAIRN_NVIM_DIR, WS (workspace with hello.go), SCRIPT (script file)
local T = dofile(vim.env.CAIRN_NVIM_DIR .. '/test/helpers.lua')
T.name = 'nvim-e2e'
local cairn = require('cairn')
local ws, script = vim.env.WS, vim.env.SCRIPT
local file = ws .. '/hello.go'
local function read(p)
  local f = assert(io.open(p, 'r'))
  local s = f:read('*a')
  f:close()
  return s
end
local ORIGINAL = read(file)
local EDITED = ORIGINAL:gsub('"Hello"', '"Hello, world"', 1)

if vim.env.CAIRN_TEST_DEBUG then
  vim.lsp.set_log_level('debug')
end
local selects = {}
local choose = 'Allow once'
vim.ui.select = function(items, opts, on_choice)
  table.insert(selects, opts.prompt)
  for _, it in ipairs(items) do
    if it.title == choose then
      return on_choice(it)
    end
  end
  on_choice(items[1])
end
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, msg)
  T.out('  notify: ' .. tostring(msg))
end

cairn.setup({
  cmd = { vim.env.CAIRN_BIN, 'serve' },
  settings = { model = { provider = 'scripted' }, scripted = { path = script }, approval = { mode = 'ask' } },
})

local src_buf
local function lines(b)
  return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n')
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

step('the server starts and attaches to hello.go', function()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  src_buf = vim.api.nvim_get_current_buf()
  -- Asked at once, while the client is still initializing: the question
  -- waits for the server instead of failing (issue 25).
  vim.cmd('5,7CairnAsk Make the greeting friendlier.')
  T.wait('the cairn client to initialize', function()
    local c = cairn.client()
    return c and vim.lsp.buf_is_attached(src_buf, c.id) and c.server_capabilities ~= nil and next(c.server_capabilities) ~= nil
  end, 20000)
  local cmds = cairn.client().server_capabilities.executeCommandProvider.commands
  T.truthy(vim.tbl_contains(cmds, 'cairn.ask'), 'cairn.ask advertised: ' .. vim.inspect(cmds))
end)

step(':5,7CairnAsk opens a diff tab with the proposed text', function()
  -- (asked in the first step, right after attach)
  for _, n in ipairs(notes) do
    T.truthy(not tostring(n):find('not initialized', 1, true) and not tostring(n):find('ask failed', 1, true), 'the early ask failed: ' .. tostring(n))
  end
  T.wait('a Cairn proposed window', function()
    return proposed_win() ~= nil
  end)
  local pw = proposed_win()
  local pb = vim.api.nvim_win_get_buf(pw)
  T.truthy(lines(pb):find('Hello, world', 1, true), 'proposed text: ' .. lines(pb))
  T.truthy(vim.wo[pw].diff, 'proposed window is in diff mode')
  local tab_wins = vim.api.nvim_tabpage_list_wins(vim.api.nvim_win_get_tabpage(pw))
  local left
  for _, w in ipairs(tab_wins) do
    if vim.api.nvim_win_get_buf(w) == src_buf then
      left = w
    end
  end
  T.truthy(left, 'hello.go is the left side of the diff tab')
  T.truthy(vim.wo[left].diff, 'hello.go window is in diff mode')
  -- The changed line is highlighted as a diff change.
  local hl = vim.api.nvim_win_call(pw, function()
    return vim.fn.diff_hlID(6, 1)
  end)
  T.truthy(hl ~= 0, 'line 6 has a diff highlight')
  T.eq(vim.fn.maparg('ga', 'n', false, true).buffer, 1, 'ga is a buffer-local map')
end)

step('the answer streams into the cairn://answers buffer', function()
  local b = cairn.answer_buf()
  T.wait('the finished run in the answer buffer', function()
    return lines(b):find('-- finished', 1, true) ~= nil
  end)
  local text = lines(b)
  T.truthy(text:find('Make the greeting friendlier.', 1, true), text)
  T.truthy(text:find('hello.go:5-7', 1, true), text)
  T.truthy(text:find('read_file', 1, true), text)
  T.truthy(text:find('edit proposed to hello.go', 1, true), text)
  -- Markdown for people: no run, edit or checkpoint ids, no raw JSON.
  for _, bad in ipairs({ 'run-', 'edit-', 'cp-', '{"', '[' }) do
    T.truthy(not text:find(bad, 1, true), ('%q in the answer buffer:\n%s'):format(bad, text))
  end
end)

step('ga in the proposed buffer accepts: hello.go changes', function()
  vim.api.nvim_set_current_win(proposed_win())
  vim.api.nvim_feedkeys('ga', 'mx', false)
  T.wait('hello.go buffer to have the edit', function()
    return lines(src_buf):find('Hello, world', 1, true) ~= nil
  end)
  T.wait('the diff tab to close', function()
    return proposed_win() == nil
  end, 5000)
  vim.api.nvim_set_current_buf(src_buf)
  vim.cmd('silent write')
  T.eq(read(file), EDITED, 'file on disk')
end)

step(':CairnUndo restores hello.go', function()
  vim.cmd('CairnUndo')
  T.wait('hello.go buffer restored', function()
    return lines(src_buf) .. '\n' == ORIGINAL
  end)
  vim.api.nvim_set_current_buf(src_buf)
  vim.cmd('silent write')
  T.eq(read(file), ORIGINAL, 'file on disk')
end)

step(':CairnContext shows the context report', function()
  vim.cmd('CairnContext')
  T.wait('a cairn://context buffer', function()
    local name = vim.api.nvim_buf_get_name(0)
    return name:match('cairn://context/') and #lines(0) > 0
  end, 15000)
  T.eq(vim.bo.filetype, 'markdown')
  vim.cmd('tabclose')
end)

step('gx in the proposed buffer rejects: hello.go unchanged', function()
  vim.api.nvim_set_current_buf(src_buf)
  vim.cmd('CairnAsk Shorter greeting?')
  T.wait('a Cairn proposed window', function()
    return proposed_win() ~= nil
  end)
  vim.api.nvim_set_current_win(proposed_win())
  vim.api.nvim_feedkeys('gx', 'mx', false)
  T.wait('the diff tab to close', function()
    return proposed_win() == nil
  end, 10000)
  T.wait('"Rejected Cairn\'s edit of hello.go" in the answers', function()
    return lines(cairn.answer_buf()):find("Rejected Cairn's edit of hello.go", 1, true) ~= nil
  end, 5000)
  T.eq(lines(src_buf) .. '\n', ORIGINAL, 'buffer')
  T.eq(read(file), ORIGINAL, 'file on disk')
  T.eq(#cairn.pending_edits(), 0, 'pending edits')
end)

step(':CairnCancel stops a streaming run', function()
  vim.api.nvim_set_current_buf(src_buf)
  vim.cmd('CairnExplain')
  local b = cairn.answer_buf()
  T.wait('the answer to start streaming', function()
    return lines(b):find('w2', 1, true) ~= nil
  end)
  T.truthy(cairn.status():find('^Cairn: answering'), 'status() while streaming: ' .. cairn.status())
  vim.cmd('CairnCancel')
  T.wait('"-- cancelled" in the answers', function()
    return lines(b):find('-- cancelled', 1, true) ~= nil
  end, 10000)
  T.truthy(not lines(b):find('end-of-answer', 1, true), 'the run streamed to its end despite the cancel')
  T.eq(#cairn.runs_with('running'), 0, 'running runs')
end)

local function run_and_wait(question, marker)
  vim.api.nvim_set_current_buf(src_buf)
  local before = #lines(cairn.answer_buf())
  vim.cmd('CairnAsk ' .. question)
  T.wait('the run to finish', function()
    local text = lines(cairn.answer_buf())
    return #text > before and text:sub(before + 1):find(marker, 1, true) ~= nil
  end, 20000)
  return lines(cairn.answer_buf()):sub(before + 1)
end

step('approval: "Allow once" through vim.ui.select runs the command', function()
  selects, choose = {}, 'Allow once'
  local out = run_and_wait('Create a marker file.', '-- finished')
  T.eq(#selects, 1, 'vim.ui.select calls')
  T.truthy(selects[1]:find('touch approved.txt', 1, true), 'the prompt shows the command: ' .. selects[1])
  T.truthy(vim.fn.filereadable(ws .. '/approved.txt') == 1, 'approved.txt created')
  T.truthy(out:find('allowed once', 1, true), out)
end)

step('approval: "Deny" keeps the command from running', function()
  selects, choose = {}, 'Deny'
  local out = run_and_wait('Create another marker file.', '-- finished')
  T.eq(#selects, 1, 'vim.ui.select calls')
  T.truthy(vim.fn.filereadable(ws .. '/denied.txt') == 0, 'denied.txt must not exist')
  T.truthy(out:find('denied', 1, true), out)
end)

step(':CairnUndo refuses, naming the file, after the user changed it', function()
  run_and_wait('Greet differently.', '-- finished')
  T.wait('a Cairn proposed window', function()
    return proposed_win() ~= nil
  end)
  local before = #lines(cairn.answer_buf())
  vim.cmd('CairnAccept')
  T.wait('hello.go buffer to have the edit', function()
    return lines(src_buf):find('"Hey"', 1, true) ~= nil
  end)
  T.wait('the accept to be answered', function()
    return lines(cairn.answer_buf()):sub(before + 1):find("Accepted Cairn's edit of hello.go", 1, true) ~= nil
  end, 5000)
  local n = vim.api.nvim_buf_line_count(src_buf)
  vim.api.nvim_buf_set_lines(src_buf, n, n, false, { '// a change of mine' })
  notes = {}
  vim.cmd('CairnUndo')
  T.wait('an error naming hello.go', function()
    for _, m in ipairs(notes) do
      if m:find('undo refused', 1, true) and m:find('hello.go', 1, true) then
        return true
      end
    end
  end, 10000)
  T.truthy(lines(src_buf):find('"Hey"', 1, true), 'the buffer must be left alone')
  -- Without the change the checkpoint restores.
  vim.api.nvim_buf_set_lines(src_buf, n, n + 1, false, {})
  vim.cmd('CairnUndo')
  T.wait('hello.go buffer restored', function()
    return lines(src_buf) .. '\n' == ORIGINAL
  end)
end)

step('typing while a proposal waits: the diff follows, accepting a hunk keeps the buffer unsaved', function()
  local calc = ws .. '/calc.go'
  local CALC = read(calc)
  vim.cmd('tabnew')
  vim.cmd('edit ' .. vim.fn.fnameescape(calc))
  local cb = vim.api.nvim_get_current_buf()
  T.wait('the cairn client to attach to calc.go', function()
    local c = cairn.client()
    return c and vim.lsp.buf_is_attached(cb, c.id)
  end, 10000)
  vim.cmd('CairnAsk Fix the operators.')
  T.wait('a Cairn proposed window', function()
    return proposed_win() ~= nil
  end, 20000)
  local pb = vim.api.nvim_win_get_buf(proposed_win())
  local edit_id = vim.api.nvim_buf_get_var(pb, 'cairn_edit_id')
  -- The user types a line above both hunks, without saving.
  vim.api.nvim_buf_set_lines(cb, 1, 1, false, { '// mine' })
  T.wait('the proposed side to follow the buffer', function()
    return lines(pb):find('// mine', 1, true) ~= nil
  end, 10000)
  T.truthy(lines(pb):find('return a * b', 1, true) and lines(pb):find('return a + b', 1, true), 'proposed: ' .. lines(pb))
  local done
  cairn.accept_hunk(edit_id, 1, function(res)
    done = res
  end)
  T.wait('the hunk to be accepted', function()
    return done ~= nil
  end, 10000)
  local want = CALC:gsub('\treturn a %+ b\n', '\treturn a * b\n', 1):gsub('package main\n', 'package main\n// mine\n', 1)
  T.eq(lines(cb) .. '\n', want, 'calc.go buffer')
  T.truthy(vim.bo[cb].modified, 'the buffer must stay modified: the user had unsaved text')
  T.eq(read(calc), CALC, 'calc.go on disk must not be written')
end)

flow = true
T.test('vim.diagnostic is forwarded: the server offers "Fix these diagnostics"', function()
  local ns = vim.api.nvim_create_namespace('fake-linter')
  vim.diagnostic.set(ns, src_buf, {
    { lnum = 5, col = 1, end_lnum = 5, end_col = 12, severity = vim.diagnostic.severity.ERROR, message = 'fake: greeting too short', source = 'fakelint' },
  })
  local c = cairn.client()
  local titles, question
  T.wait('a "Fix these diagnostics" code action', function()
    local req = vim.fn.has('nvim-0.11') == 1 and function(...) return c:request_sync(...) end or c.request_sync
    local resp = req('textDocument/codeAction', {
      textDocument = { uri = vim.uri_from_bufnr(src_buf) },
      range = { start = { line = 4, character = 0 }, ['end'] = { line = 6, character = 1 } },
      context = { diagnostics = {} },
    }, 5000, src_buf)
    titles, question = {}, nil
    for _, a in ipairs(resp and resp.result or {}) do
      table.insert(titles, a.title)
      if a.title:find('Fix these diagnostics', 1, true) then
        question = a.command.arguments[1].question
      end
    end
    return question ~= nil
  end, 10000)
  T.truthy(question:find('fake: greeting too short', 1, true), 'question: ' .. tostring(question))
end)

T.test(':checkhealth cairn reports no errors', function()
  vim.cmd('checkhealth cairn')
  local text = lines(0)
  T.truthy(text:find('OK', 1, true), text)
  T.truthy(text:find('started and answered initialize', 1, true), 'server start check: ' .. text)
  T.truthy(not text:find('ERROR', 1, true), 'no ERROR in: ' .. text)
end)

if T.failed > 0 then
  local log = vim.lsp.get_log_path()
  local okr, content = pcall(read, log)
  if okr then
    local all = vim.split(content, '\n', { plain = true })
    T.out('--- ' .. log .. ' (last 40 lines)')
    for i = math.max(1, #all - 40), #all do
      T.out(all[i])
    end
  end
end
T.finish()
