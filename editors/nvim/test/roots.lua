-- Two workspace roots in one Neovim: each gets a server of its own (two
-- clients, two processes), and a command acts on the root of the buffer it is
-- run in: ask, accept, reject and undo in one root leave the other alone.
-- env: CAIRN_BIN, CAIRN_NVIM_DIR
local T = dofile(vim.env.CAIRN_NVIM_DIR .. '/test/helpers.lua')
T.name = 'nvim-roots'
local cairn = require('cairn')

local function read(p)
  local f = assert(io.open(p, 'r'))
  local s = f:read('*a')
  f:close()
  return s
end

-- Two roots, each a Go module with its own x.txt.
local base = vim.fn.tempname()
local roots = { a = base .. '/a', b = base .. '/b' }
for name, dir in pairs(roots) do
  vim.fn.mkdir(dir, 'p')
  vim.fn.writefile({ 'module example.com/' .. name }, dir .. '/go.mod')
  vim.fn.writefile({ 'ROOT ' .. name }, dir .. '/x.txt')
end
-- Every server reads this script from its first turn: the same question
-- proposes the same change, each in its own root.
local script = base .. '/script.yaml'
vim.fn.writefile({
  'turns:',
  '  - toolCalls:',
  '      - name: edit_file',
  '        arguments: {path: "x.txt", oldText: "ROOT", newText: "DONE"}',
  '  - text: "Proposed DONE."',
}, script)

local notes = {}
vim.notify = function(msg)
  table.insert(notes, msg)
  T.out('  notify: ' .. tostring(msg))
end

cairn.setup({
  -- run.sh sets CAIRN_STATE_DIR for the other suites; here each server keeps
  -- its state in the per-workspace directory under XDG_CACHE_HOME, as users' do.
  cmd = { 'env', '-u', 'CAIRN_STATE_DIR', vim.env.CAIRN_BIN, 'serve' },
  settings = { model = { provider = 'scripted' }, scripted = { path = script }, approval = { mode = 'policy' } },
})

local flow = true
local function step(name, fn)
  if not flow then
    T.skip(name, 'an earlier step failed')
    return
  end
  flow = T.test(name, fn)
end

local bufs, sess = {}, {}
local function focus(name)
  -- A tab of its own, showing the root's file: commands run there act on that root.
  vim.cmd('tabnew')
  vim.api.nvim_set_current_buf(bufs[name])
end

step('a file in each root: two clients, two server processes', function()
  for _, name in ipairs({ 'a', 'b' }) do
    vim.cmd('edit ' .. vim.fn.fnameescape(roots[name] .. '/x.txt'))
    bufs[name] = vim.api.nvim_get_current_buf()
  end
  local clients = {}
  T.wait('both clients to initialize', function()
    for _, name in ipairs({ 'a', 'b' }) do
      vim.api.nvim_set_current_buf(bufs[name])
      local c = cairn.client()
      if not (c and c.initialized and vim.lsp.buf_is_attached(bufs[name], c.id)) then
        return false
      end
      clients[name] = c
      sess[name] = cairn._session()
    end
    return true
  end, 30000)
  T.truthy(clients.a.id ~= clients.b.id, 'two client ids: ' .. clients.a.id .. ', ' .. clients.b.id)
  T.eq(clients.a.config.root_dir, roots.a, 'root of a')
  T.eq(clients.b.config.root_dir, roots.b, 'root of b')
  T.truthy(not vim.lsp.buf_is_attached(bufs.a, clients.b.id), "a's buffer is not attached to b's client")
  T.truthy(not vim.lsp.buf_is_attached(bufs.b, clients.a.id), "b's buffer is not attached to a's client")
  local pa, pb = clients.a.rpc and clients.a.rpc.pid, clients.b.rpc and clients.b.rpc.pid
  if pa and pb then
    T.out(('  server pids: %d, %d'):format(pa, pb))
    T.truthy(pa ~= pb, 'two processes: ' .. pa .. ', ' .. pb)
    T.eq(vim.fn.getpid() ~= pa, true)
  end
  T.eq(#cairn.roots(), 2, 'roots(): ' .. vim.inspect(cairn.roots()))
  T.truthy(sess.a ~= sess.b and sess.a.root == roots.a and sess.b.root == roots.b, 'a session per root')
end)

local function pending_edit(name)
  local s = sess[name]
  for _, id in ipairs(s.edit_order) do
    if s.edits[id].state == 'pending' and s.edits[id].result then
      return id, s.edits[id].result
    end
  end
end

step(':CairnAsk in each root proposes an edit of that root\'s file', function()
  for _, name in ipairs({ 'a', 'b' }) do
    focus(name)
    vim.cmd('CairnAsk Change it.')
    local id, res
    T.wait('the proposed edit in ' .. name, function()
      id, res = pending_edit(name)
      return id ~= nil
    end)
    T.eq(#res.files, 1)
    T.eq(vim.uri_to_fname(res.files[1].uri), roots[name] .. '/x.txt', 'the edit of ' .. name .. ' is in its root')
    T.eq(res.files[1].proposed, 'DONE ' .. name .. '\n')
  end
  T.truthy(pending_edit('a') ~= pending_edit('b'), 'two edits')
  T.eq(#sess.a.run_order, 1, "a's runs")
  T.eq(#sess.b.run_order, 1, "b's runs")
end)

step(':CairnAccept in a accepts a\'s edit only', function()
  local id_b = pending_edit('b')
  focus('a')
  vim.cmd('CairnAccept')
  T.wait('x.txt of a written', function()
    return read(roots.a .. '/x.txt') == 'DONE a\n'
  end)
  T.eq(read(roots.b .. '/x.txt'), 'ROOT b\n', "b's file")
  T.eq(sess.b.edits[id_b].state, 'pending', "b's edit still waits")
  T.eq(#sess.a.checkpoints, 1, "a's checkpoints")
end)

step(':CairnUndo in b has nothing to undo; :CairnReject in b rejects b\'s edit', function()
  focus('b')
  local before = #notes
  vim.cmd('CairnUndo')
  T.truthy((notes[before + 1] or ''):find('no accepted edit to undo', 1, true), vim.inspect(notes))
  T.eq(read(roots.a .. '/x.txt'), 'DONE a\n', "a's file is left alone")
  local id_b = pending_edit('b')
  focus('b')
  vim.cmd('CairnReject')
  T.wait("b's edit rejected", function()
    return sess.b.edits[id_b].state == 'rejected'
  end)
  T.eq(read(roots.b .. '/x.txt'), 'ROOT b\n', "b's file")
end)

step(':CairnUndo in a restores a\'s file', function()
  focus('a')
  vim.cmd('CairnUndo')
  T.wait('x.txt of a restored', function()
    return read(roots.a .. '/x.txt') == 'ROOT a\n'
  end)
  T.eq(#sess.a.checkpoints, 0)
end)

step('each root lists its own thread', function()
  local got = {}
  for _, name in ipairs({ 'a', 'b' }) do
    focus(name)
    cairn.threads(function(list)
      got[name] = list
    end)
    T.wait('threads of ' .. name, function()
      return got[name] ~= nil
    end)
    T.eq(#got[name], 1, 'threads of ' .. name .. ': ' .. vim.inspect(got[name]))
  end
  T.truthy(got.a[1].threadId ~= got.b[1].threadId, 'two threads')
  T.eq(got.a[1].threadId, sess.a.thread)
  T.eq(got.b[1].threadId, sess.b.thread)
end)

T.finish()
