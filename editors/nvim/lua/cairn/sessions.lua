-- One server per workspace root. A session is a root, its client, and what
-- this editor knows of the runs, threads, edits and checkpoints of that
-- server. A buffer belongs to the session of its root (root markers, or the
-- root_dir option); a command acts on the session of the current buffer; ids
-- (runs, edits) lead back to the session that made them.
local config = require('cairn.config')

local M = {}

local has, notify = config.has, config.notify

local by_root = {} -- root -> session
local by_client = {} -- client id -> session
local by_buf = {} -- bufnr -> session its client is attached to
local owner_run = {} -- runId -> session
local owner_edit = {} -- editId -> session
local order = {} -- sessions in the order they were made
local last -- the session a command or an event used last
local warned_missing = false

-- Handlers of every client (filled by init: cairn/runEvent, showMessageRequest).
M.handlers = {}

local function new_session(root)
  return {
    root = root,
    client_id = nil,
    runs = {}, -- runId -> { question, where, status, last_seq, edits = {} }
    run_order = {},
    edits = {}, -- editId -> { result = getEdit result, state = 'pending'|'accepted'|'rejected', tabs = {} }
    edit_order = {},
    checkpoints = {}, -- stack of { checkpointId, editId, files }
    thread = nil, -- the current thread: follow-ups go there
    threads = {}, -- threadId -> { title, runs = {runId}, uri }
    progress = nil, -- { run_id, what, since } while a run works
  }
end

--- The session of root (made, without a client, when there is none yet).
function M.get(root)
  local s = by_root[root]
  if not s then
    s = new_session(root)
    by_root[root] = s
    table.insert(order, s)
  end
  return s
end

function M.all()
  return order
end

function M.touch(s)
  if s then
    last = s
  end
  return s
end

function M.find_root(bufnr)
  local rd = config.options.root_dir
  if type(rd) == 'function' then
    rd = rd(bufnr)
  end
  if type(rd) == 'string' and rd ~= '' then
    return rd
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = name ~= '' and vim.fn.fnamemodify(name, ':p:h') or vim.fn.getcwd()
  for _, marker in ipairs(config.options.root_markers) do
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

function M.attachable(bufnr)
  if vim.bo[bufnr].buftype ~= '' then
    return false
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return false
  end
  local fts = config.options.filetypes
  if fts and #fts > 0 then
    return vim.tbl_contains(fts, vim.bo[bufnr].filetype)
  end
  return true
end

--- The running client of session s, or nil.
function M.client(s)
  if not s or not s.client_id then
    return nil
  end
  local c = vim.lsp.get_client_by_id(s.client_id)
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

function M.for_client(client_id)
  return client_id and by_client[client_id] or nil
end

function M.of_run(run_id)
  return run_id and owner_run[run_id] or nil
end

function M.of_edit(edit_id)
  return edit_id and owner_edit[edit_id] or nil
end

function M.own_run(s, run_id)
  owner_run[run_id] = s
end

function M.own_edit(s, edit_id)
  owner_edit[edit_id] = s
end

--- The session bufnr belongs to: the one it is attached to; for a Cairn
--- diff buffer or window, the edit's; for a file, its root's (nil before
--- its server started); else the session used last (the answer buffer).
function M.for_buf(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if by_buf[bufnr] then
    return by_buf[bufnr]
  end
  local ok, id = pcall(vim.api.nvim_buf_get_var, bufnr, 'cairn_edit_id')
  if ok and owner_edit[id] then
    return owner_edit[id]
  end
  if bufnr == vim.api.nvim_get_current_buf() then
    local okw, wid = pcall(vim.api.nvim_win_get_var, 0, 'cairn_edit_id')
    if okw and owner_edit[wid] then
      return owner_edit[wid]
    end
  end
  if vim.api.nvim_buf_is_valid(bufnr) and M.attachable(bufnr) then
    -- Never another root's session: a command here must not act there.
    return by_root[M.find_root(bufnr)]
  end
  return last or order[#order]
end

--- The session of the current buffer, made for its root if need be (so a
--- command there can start its server).
function M.current()
  local s = M.for_buf(0)
  if s then
    return s
  end
  local b = vim.api.nvim_get_current_buf()
  return M.get(M.attachable(b) and M.find_root(b) or vim.fn.getcwd())
end

--- The session whose root holds the file of uri (the deepest), else the current one.
function M.for_uri(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri or '')
  local best
  if ok and fname then
    for root, s in pairs(by_root) do
      local r = root:sub(-1) == '/' and root or (root .. '/')
      if fname:sub(1, #r) == r and (not best or #root > #best.root) then
        best = s
      end
    end
  end
  return best or M.current()
end

function M.request(c, method, params, handler, bufnr)
  if has('nvim-0.11') then
    return c:request(method, params, handler, bufnr)
  end
  return c.request(method, params, handler, bufnr)
end

function M.notify_client(c, method, params)
  if has('nvim-0.11') then
    return c:notify(method, params)
  end
  return c.notify(method, params)
end

local function client_config(root)
  return {
    name = 'cairn',
    cmd = config.options.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ':t') } },
    init_options = config.options.settings,
    settings = { cairn = config.options.settings },
    -- A Cairn client: the server streams cairn/runEvent (not showDocument).
    capabilities = vim.tbl_deep_extend('force', vim.lsp.protocol.make_client_capabilities(), {
      experimental = { cairn = { runEvents = true } },
    }),
    handlers = M.handlers,
    on_exit = function(code, signal)
      vim.schedule(function()
        if code ~= 0 and signal == 0 then
          notify(('server for %s exited with code %d (see :lua vim.cmd("edit " .. vim.lsp.get_log_path()))'):format(root, code), vim.log.levels.WARN)
        end
      end)
    end,
  }
end

--- Starts the server of bufnr's root if need be and attaches bufnr; returns
--- the client id (nil when the buffer is not a file or the binary is missing)
--- and the session.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not M.attachable(bufnr) then
    local s = M.for_buf(bufnr)
    return s and s.client_id, s
  end
  local s = M.touch(M.get(M.find_root(bufnr)))
  if M.client(s) then
    if not vim.lsp.buf_is_attached(bufnr, s.client_id) then
      vim.lsp.buf_attach_client(bufnr, s.client_id)
    end
    by_buf[bufnr] = s
    return s.client_id, s
  end
  if vim.fn.executable(config.options.cmd[1]) ~= 1 then
    if not warned_missing then
      warned_missing = true
      notify(('`%s` not found. Install it with `go install ./cmd/cairn` in a clone of Cairn, or pass cmd to setup(). See :checkhealth cairn.'):format(config.options.cmd[1]), vim.log.levels.ERROR)
    end
    return nil, s
  end
  local cfg = client_config(s.root)
  local id
  if vim.lsp.start then
    -- reuse_client: vim.lsp.start's default also matches the name and root.
    id = vim.lsp.start(cfg, { bufnr = bufnr })
  else
    id = vim.lsp.start_client(cfg)
    if id then
      vim.lsp.buf_attach_client(bufnr, id)
    end
  end
  if id then
    s.client_id = id
    by_client[id] = s
    by_buf[bufnr] = s
  end
  return id, s
end

vim.api.nvim_create_autocmd('BufWipeout', {
  group = vim.api.nvim_create_augroup('cairn_sessions', { clear = true }),
  callback = function(a)
    by_buf[a.buf] = nil
  end,
})

local function fail(cb, message)
  local e = { message = message }
  if cb then
    cb(e)
  else
    notify(message, vim.log.levels.ERROR)
  end
end

--- Calls a server command of session s: cb(err, result).
function M.exec(s, command, arg, cb, waited)
  local c = M.client(s)
  if not c then
    fail(cb, ('the server for %s is not running (see :checkhealth cairn)'):format(s and s.root or 'this buffer'))
    return
  end
  M.touch(s)
  -- Right after attach the client may still be initializing (a request sent
  -- before initialize is answered is refused): wait for it, without blocking
  -- the editor. `initialized` is set by every Neovim from 0.7 on.
  if c.initialized ~= true then
    waited = waited or 0
    if waited >= 30000 then
      fail(cb, 'the server did not finish initializing in 30 s (see :checkhealth cairn)')
      return
    end
    vim.defer_fn(function()
      M.exec(s, command, arg, cb, waited + 20)
    end, 20)
    return
  end
  -- bufnr nil: Neovim first flushes the pending (debounced) didChange of every
  -- buffer, so the server sees the text as it is now (0 would flush none).
  M.request(c, 'workspace/executeCommand', { command = command, arguments = { arg } }, function(err, result)
    if cb then
      cb(err, result)
    elseif err then
      notify(command .. ': ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
  end, nil)
end

--- Sends the settings in force to every running server.
function M.push_settings()
  for _, s in ipairs(order) do
    local c = M.client(s)
    if c then
      c.config.settings = { cairn = config.options.settings }
      M.notify_client(c, 'workspace/didChangeConfiguration', { settings = { cairn = config.options.settings } })
    end
  end
end

return M
