-- Unit tests of the pure helpers (lua/cairn/util.lua).
local T = dofile(vim.env.CAIRN_NVIM_DIR .. '/test/helpers.lua')
T.name = 'nvim-unit'
local util = require('cairn.util')

T.test('utf16_len counts UTF-16 code units', function()
  T.eq(util.utf16_len('abc'), 3)
  T.eq(util.utf16_len('héllo'), 5)
  T.eq(util.utf16_len('日本'), 2)
  T.eq(util.utf16_len('a😀b'), 4)
end)

T.test('lines_range covers whole lines, 0-based, end at the line end', function()
  T.eq(util.lines_range(5, 7, '}'), { start = { line = 4, character = 0 }, ['end'] = { line = 6, character = 1 } })
  T.eq(util.lines_range(3, 2, 'xé'), { start = { line = 1, character = 0 }, ['end'] = { line = 2, character = 2 } })
end)

T.test('to_lsp_diagnostics converts and filters', function()
  local items = {
    { lnum = 1, col = 2, end_lnum = 1, end_col = 6, severity = 1, message = 'undefined: x', source = 'gopls', code = 'UndeclaredName', namespace = 10 },
    { lnum = 0, col = 0, severity = 2, message = 'mine', source = 'Cairn', namespace = 11 },
    { lnum = 3, col = 0, severity = 3, message = 'from cairn ns', namespace = 12 },
  }
  local out = util.to_lsp_diagnostics(items, { [12] = true }, function(l)
    return ({ [1] = 'é = x + 1' })[l]
  end)
  T.eq(#out, 1)
  T.eq(out[1], {
    range = { start = { line = 1, character = 1 }, ['end'] = { line = 1, character = 5 } },
    message = 'undefined: x',
    severity = 1,
    source = 'gopls',
    code = 'UndeclaredName',
  })
end)

T.test('append_text streams deltas into lines', function()
  local l = util.append_text({ '' }, 'Read')
  l = util.append_text(l, 'ing the file.\n> read_file')
  l = util.append_text(l, '\n')
  T.eq(l, { 'Reading the file.', '> read_file', '' })
  T.eq(util.append_text({}, 'a\nb'), { 'a', 'b' })
end)

T.test('split_lines drops the final newline only', function()
  T.eq(util.split_lines('a\nb\n'), { 'a', 'b' })
  T.eq(util.split_lines('a\n\n'), { 'a', '' })
  T.eq(util.split_lines(''), { '' })
end)

T.test('merge is deep for maps, replaces lists', function()
  local m = util.merge({ model = { provider = 'openai', name = 'x' }, list = { 1, 2 } }, { model = { name = 'y' }, list = { 3 } })
  T.eq(m, { model = { provider = 'openai', name = 'y' }, list = { 3 } })
end)

T.test('hunk_at finds the pending hunk under or next to the cursor, either side', function()
  local hunks = {
    { index = 0, path = 'two.go', startLine = 3, endLine = 4, proposedStartLine = 3, proposedEndLine = 4, state = 'pending' },
    { index = 1, path = 'two.go', startLine = 7, endLine = 8, proposedStartLine = 7, proposedEndLine = 10, state = 'pending' },
  }
  T.eq(util.hunk_at(hunks, 'two.go', 4, 'new').index, 0)
  T.eq(util.hunk_at(hunks, 'two.go', 10, 'new').index, 1, 'last line of a grown hunk')
  T.eq(util.hunk_at(hunks, 'two.go', 11, 'old'), nil, 'the old side of hunk 2 ends at line 8: 3 lines away')
  T.eq(util.hunk_at(hunks, 'two.go', 7, 'old').index, 1, 'next to a change')
  T.eq(util.hunk_at(hunks, 'one.go', 4, 'new'), nil, 'other file')
  hunks[1].state = 'accepted'
  T.eq(util.hunk_at(hunks, 'two.go', 4, 'new'), nil, 'decided hunks are skipped')
end)

T.test('summarize shows the telling field of a tool input', function()
  T.eq(util.summarize({ command = 'go test ./...', timeoutSec = 100 }), 'go test ./...')
  T.eq(util.summarize({ path = 'a.go', startLine = 1 }), 'a.go')
  T.truthy(util.summarize({ x = 1 }):find('"x"', 1, true), 'JSON of the input')
end)

T.test('is_approval recognises the three actions only', function()
  T.eq(util.is_approval({ { title = 'Allow once' }, { title = 'Allow for session' }, { title = 'Deny' } }), true)
  T.eq(util.is_approval({ { title = 'Retry' } }), false)
  T.eq(util.is_approval({}), false)
end)

T.test('transcript renders a run', function()
  local t = util.transcript()
  local s = t.header('r1', 'Why?', 'a.go:1-3')
  s = s .. t.render({ kind = 'started' })
  s = s .. t.render({ kind = 'text', delta = 'Reading ' })
  s = s .. t.render({ kind = 'text', delta = 'the file.' })
  s = s .. t.render({ kind = 'toolCall', callId = 'c1', tool = 'read_file', input = { path = 'a.go' } })
  s = s .. t.render({ kind = 'toolResult', callId = 'c1', ok = true, summary = '7 lines' })
  s = s .. t.render({ kind = 'toolCall', callId = 'c2', tool = 'run_command', input = { command = 'go vet' } })
  s = s .. t.render({ kind = 'toolResult', callId = 'c2', ok = false, summary = 'exit 1' })
  s = s .. t.render({ kind = 'approval', callId = 'c1', decision = 'deny' })
  s = s .. t.render({ kind = 'editProposed', editId = 'e1', edit = { changes = { ['file:///w/pkg/a.go'] = {} } } }, '/w')
  s = s .. t.render({ kind = 'checkpoint', checkpointId = 'cp-1', step = 2 })
  s = s .. t.render({ kind = 'finished', usage = { inputTokens = 5, outputTokens = 2 } })
  T.eq(vim.split(s, '\n', { plain = true }), {
    '## Why?',
    '*a.go:1-3*',
    '',
    'Reading the file.',
    '> read_file `a.go`',
    '> run_command `go vet`',
    '> run_command failed: exit 1',
    '> approval: read_file denied',
    '> edit proposed to pkg/a.go: review it in the diff tab (ga accept, gx reject)',
    '-- finished - 5 in / 2 out tokens',
    '',
  })
  T.eq(t.render({ kind = 'failed', error = 'boom', class = 'provider' }), '-- failed (provider): boom\n')
  T.eq(t.render({ kind = 'toolCall', callId = 'p1', tool = 'update_plan', input = { entries = {} } }), '')
  T.eq(t.render({ kind = 'plan', plan = { { content = 'Read a.go', status = 'completed' }, { content = 'Fix it', status = 'in_progress' }, { content = 'Test', status = 'pending' } } }),
    '> plan (1/3 done): [x] Read a.go; [>] Fix it; [ ] Test\n')
  T.eq(t.render({ kind = 'finished', usage = { inputTokens = 4000, outputTokens = 100, cachedInputTokens = 3072, costUSD = 0.0072 } }),
    '-- finished - 4000 in (3072 cached) / 100 out tokens, $0.0072\n')
  T.eq(t.render({ kind = 'finished', notReady = { 'repo map', 'search' } }),
    '-- finished - not ready: repo map, search (the answer used what was indexed so far)\n')
end)

T.test('setup defines the commands', function()
  require('cairn').setup({ cmd = { '/nonexistent/cairn', 'serve' } })
  for _, c in ipairs({ 'CairnAsk', 'CairnExplain', 'CairnFix', 'CairnAccept', 'CairnReject', 'CairnUndo', 'CairnCancel', 'CairnContext', 'CairnResume' }) do
    T.eq(vim.fn.exists(':' .. c), 2, c)
  end
end)

T.test('root is the nearest directory with a marker', function()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. '/sub', 'p')
  vim.fn.writefile({ 'module x' }, dir .. '/go.mod')
  vim.cmd('edit ' .. dir .. '/sub/a.go')
  T.eq(require('cairn')._find_root(0), vim.fn.resolve(dir))
end)

T.test('approvals go through vim.ui.select, showing the command; an async picker never blocks', function()
  local cairn = require('cairn')
  local h = cairn._handlers['window/showMessageRequest']
  local params = {
    type = 2,
    message = 'Cairn wants to run run_command (network risk):\ncurl -s http://127.0.0.1:9/x',
    actions = { { title = 'Allow once' }, { title = 'Allow for session' }, { title = 'Deny' } },
  }
  local orig, orig_notify = vim.ui.select, vim.notify
  local prompt
  vim.ui.select = function(items, opts, cb)
    prompt = opts.prompt
    -- Deny first: a picker's default choice denies.
    T.eq(opts.format_item(items[1]), 'Deny')
    T.eq(opts.format_item(items[3]), 'Allow for session')
    cb(items[3])
  end
  T.eq(h(nil, params), { title = 'Allow for session' })
  T.truthy(prompt:find('curl -s http://127.0.0.1:9/x', 1, true), prompt)
  -- Dismissed: Deny.
  vim.ui.select = function(_, _, cb)
    cb(nil)
  end
  T.eq(h(nil, params), { title = 'Deny' })

  -- An asynchronous picker, the handler run in a coroutine as Neovim 0.9+
  -- runs it: the handler yields (returns nothing yet) and the picker's answer
  -- resumes it.
  local later
  vim.ui.select = function(items, _, cb)
    later = function()
      cb(items[2])
    end
  end
  local result
  local co = coroutine.create(function()
    result = h(nil, params)
  end)
  T.truthy(coroutine.resume(co))
  T.eq(coroutine.status(co), 'suspended', 'the handler waits without blocking')
  T.eq(result, nil)
  later()
  T.wait('the approval answer', function()
    return result ~= nil
  end, 5000)
  T.eq(result, { title = 'Allow once' })

  -- The same picker outside a coroutine (Neovim before 0.9): no wait, an
  -- explicit Deny at once; the late answer is only reported.
  local notes = {}
  vim.notify = function(msg)
    table.insert(notes, msg)
  end
  T.eq(h(nil, params), { title = 'Deny' })
  T.truthy(notes[1] and notes[1]:find('denied', 1, true), vim.inspect(notes))
  later()
  T.truthy(notes[2] and notes[2]:find('after the question was answered', 1, true), vim.inspect(notes))
  vim.ui.select, vim.notify = orig, orig_notify
end)

T.test('two runs streaming at once each keep their text together in the answer buffer', function()
  -- A run still answering (its edit was just decided) and one started from a
  -- code action stream at the same time: their deltas arrive interleaved.
  local cairn = require('cairn')
  local h = cairn._handlers['cairn/runEvent']
  local function ev(run_id, seq, kind, extra)
    local e = { runId = run_id, seq = seq, kind = kind }
    for k, v in pairs(extra or {}) do
      e[k] = v
    end
    h(nil, e)
  end
  ev('run-a', 1, 'started', { question = 'Tidy both functions.' })
  ev('run-a', 2, 'text', { delta = 'Two ' })
  ev('run-b', 1, 'started', { question = 'Explain what the selected code does.' })
  ev('run-b', 2, 'text', { delta = 'It ' })
  ev('run-a', 3, 'text', { delta = 'changes ' })
  ev('run-b', 3, 'text', { delta = 'explains ' })
  ev('run-a', 4, 'text', { delta = 'proposed.' })
  ev('run-a', 5, 'finished')
  ev('run-b', 4, 'text', { delta = 'itself.' })
  ev('run-b', 5, 'finished')
  local text = table.concat(vim.api.nvim_buf_get_lines(cairn.answer_buf(), 0, -1, false), '\n')
  T.truthy(text:find('Two changes proposed.\n-- finished\n', 1, true), 'run a together: ' .. text)
  T.truthy(text:find('\nIt explains itself.\n-- finished', 1, true), 'run b together: ' .. text)
  T.truthy(text:find('## Tidy both functions.', 1, true) < text:find('Two changes', 1, true), 'run a under its header: ' .. text)
  T.truthy(text:find('## Explain what', 1, true) < text:find('It explains', 1, true), 'run b under its header: ' .. text)
  T.truthy(text:find('Two changes', 1, true) < text:find('## Explain what', 1, true), 'run a before run b: ' .. text)
  T.truthy(not text:find('run-a', 1, true) and not text:find('run-b', 1, true), 'no run ids in the answer buffer: ' .. text)
end)

T.test('the answer buffer is Markdown for people: no ids, no raw JSON', function()
  local cairn = require('cairn')
  local h = cairn._handlers['cairn/runEvent']
  local seq = 0
  local function ev(kind, extra)
    seq = seq + 1
    local e = { runId = 'run-clean-1', seq = seq, kind = kind }
    for k, v in pairs(extra or {}) do
      e[k] = v
    end
    h(nil, e)
  end
  ev('started', { question = 'Why?', threadId = 'thread-xyz-1' })
  ev('toolCall', { callId = 'c1', tool = 'read_file', input = { path = 'hello.go', startLine = 1, endLine = 40 } })
  ev('toolResult', { callId = 'c1', ok = true, summary = '{"lines":40,"truncated":false}' })
  ev('toolCall', { callId = 'c2', tool = 'repo_map', input = { focus = { 'a.go', 'b.go' } } })
  ev('checkpoint', { checkpointId = 'cp-secret-1', step = 2 })
  ev('text', { delta = 'Because.' })
  ev('finished', { usage = { inputTokens = 10, outputTokens = 2 } })
  local text = table.concat(vim.api.nvim_buf_get_lines(cairn.answer_buf(), 0, -1, false), '\n')
  T.truthy(text:find('## Why?', 1, true), 'the question is a heading: ' .. text)
  T.truthy(text:find('> read_file `hello.go`', 1, true), 'the tool call, by its telling field: ' .. text)
  T.truthy(text:find('> repo_map\n', 1, true), 'a tool without a telling field, by name only: ' .. text)
  for _, bad in ipairs({ 'run-clean-1', 'thread-xyz-1', 'cp-secret-1', '{', '"' }) do
    T.truthy(not text:find(bad, 1, true), ('%q in the answer buffer: %s'):format(bad, text))
  end
  -- The ids are behind :CairnRunInfo.
  vim.cmd('CairnRunInfo run-clean-1')
  local info = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  T.truthy(info:find('run-clean-1', 1, true) and info:find('thread-xyz-1', 1, true) and info:find('cp-secret-1', 1, true),
    ':CairnRunInfo shows run, thread and checkpoint ids: ' .. info)
  T.truthy(info:find('10 in / 2 out', 1, true), 'and the tokens: ' .. info)
  vim.cmd('close')
end)

T.test('shown_proposed puts a rejected hunk back to its old lines', function()
  local f = { path = 'two.go', proposed = 'a\nB\nc\nD1\nD2\ne\n' }
  local hunks = {
    { index = 0, path = 'two.go', startLine = 1, endLine = 2, proposedStartLine = 1, proposedEndLine = 2, state = 'accepted',
      diff = '--- a/two.go\n+++ b/two.go\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n' },
    { index = 1, path = 'two.go', startLine = 3, endLine = 4, proposedStartLine = 3, proposedEndLine = 5, state = 'rejected',
      diff = '--- a/two.go\n+++ b/two.go\n@@ -3,3 +3,4 @@\n c\n-d\n+D1\n+D2\n e\n' },
  }
  T.eq(table.concat(util.shown_proposed(f, hunks), '\n'), 'a\nB\nc\nd\ne', 'hunk 2 rejected')
  hunks[2].state = 'pending'
  T.eq(table.concat(util.shown_proposed(f, hunks), '\n'), 'a\nB\nc\nD1\nD2\ne', 'nothing rejected')
  T.eq(util.hunk_name(hunks[2]), 'hunk 2 of two.go (line 4)')
end)

T.finish()
