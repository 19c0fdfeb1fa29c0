-- :checkhealth cairn — the binary, a server start (initialize handshake), the model settings.
local M = {}

-- vim.health (0.10: start/ok/...; 0.8-0.9: report_*) or 0.7's require('health').
local h = vim.health or require('health')
local start = h.start or h.report_start
local ok = h.ok or h.report_ok
local warn = h.warn or h.report_warn
local err = h.error or h.report_error
local info = h.info or h.report_info

--- Starts cmd, sends initialize, waits for the reply. Returns result or nil, error.
function M.handshake(cmd, settings, timeout_ms)
  local uv = vim.uv or vim.loop
  local stdin, stdout, stderr = uv.new_pipe(false), uv.new_pipe(false), uv.new_pipe(false)
  local args = {}
  for i = 2, #cmd do
    args[#args + 1] = cmd[i]
  end
  local handle, pid_or_err = uv.spawn(cmd[1], { args = args, stdio = { stdin, stdout, stderr } }, function() end)
  if not handle then
    return nil, 'cannot start ' .. cmd[1] .. ': ' .. tostring(pid_or_err)
  end
  local buf, result, rerr, errtext = '', nil, nil, ''
  stdout:read_start(function(_, data)
    if not data then
      return
    end
    buf = buf .. data
    while true do
      local hdr_end = buf:find('\r\n\r\n', 1, true)
      if not hdr_end then
        return
      end
      local len = tonumber(buf:sub(1, hdr_end):match('Content%-Length: *(%d+)'))
      if not len or #buf < hdr_end + 3 + len then
        return
      end
      local body = buf:sub(hdr_end + 4, hdr_end + 3 + len)
      buf = buf:sub(hdr_end + 4 + len)
      local okd, msg = pcall(vim.json and vim.json.decode or vim.fn.json_decode, body)
      if okd and type(msg) == 'table' and msg.id == 1 then
        result = msg.result or vim.NIL
        rerr = msg.error
      end
    end
  end)
  stderr:read_start(function(_, data)
    if data and #errtext < 4000 then
      errtext = errtext .. data
    end
  end)
  local root = vim.fn.getcwd()
  local function send(msg)
    local body = vim.fn.json_encode(msg)
    stdin:write(('Content-Length: %d\r\n\r\n%s'):format(#body, body))
  end
  send({
    jsonrpc = '2.0',
    id = 1,
    method = 'initialize',
    params = {
      processId = vim.fn.getpid(),
      rootUri = vim.uri_from_fname(root),
      workspaceFolders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ':t') } },
      initializationOptions = settings or vim.empty_dict(),
      capabilities = vim.empty_dict(),
      clientInfo = { name = 'cairn-checkhealth' },
    },
  })
  vim.wait(timeout_ms or 10000, function()
    return result ~= nil or rerr ~= nil
  end, 20)
  if result ~= nil then
    send({ jsonrpc = '2.0', id = 2, method = 'shutdown' })
    send({ jsonrpc = '2.0', method = 'exit' })
    vim.wait(500, function()
      return not handle:is_active()
    end, 20)
  end
  if handle:is_active() then
    handle:kill('sigterm')
  end
  for _, p in ipairs({ stdin, stdout, stderr }) do
    if not p:is_closing() then
      p:close()
    end
  end
  if not handle:is_closing() then
    handle:close()
  end
  if rerr then
    return nil, 'initialize failed: ' .. vim.inspect(rerr)
  end
  if result == nil then
    return nil, 'no reply to initialize within ' .. (timeout_ms or 10000) .. ' ms' .. (errtext ~= '' and ('; stderr: ' .. errtext) or '')
  end
  return result
end

--- Splits an http(s) URL into scheme, host, port, path.
function M.parse_url(url)
  local scheme, rest = tostring(url or ''):match('^(https?)://(.+)$')
  if not scheme then
    return nil
  end
  local hostport, path = rest:match('^([^/]+)(.*)$')
  local host, port = hostport:match('^%[(.+)%]:?(%d*)$')
  if not host then
    host, port = hostport:match('^([^:]+):?(%d*)$')
  end
  port = tonumber(port) or (scheme == 'https' and 443 or 80)
  return { scheme = scheme, host = host, port = port, path = (path ~= '' and path or '/') }
end

--- Probes a model endpoint: connects, and for plain http sends GET <base>/models
--- and reads the status line. Returns true, what or false, why.
function M.probe(base, timeout_ms)
  local u = M.parse_url(base)
  if not u then
    return false, 'not an http(s) URL: ' .. tostring(base)
  end
  local uv = vim.uv or vim.loop
  local addrs = uv.getaddrinfo(u.host, tostring(u.port), { socktype = 'stream' })
  if not addrs or #addrs == 0 then
    return false, ('cannot resolve %s'):format(u.host)
  end
  local tcp = uv.new_tcp()
  local done, result, why = false, false, nil
  local got = ''
  tcp:connect(addrs[1].addr, u.port, function(cerr)
    if cerr then
      done, why = true, ('cannot connect to %s:%d: %s'):format(u.host, u.port, cerr)
      return
    end
    if u.scheme == 'https' then
      done, result, why = true, true, ('%s:%d accepts connections (TLS not checked)'):format(u.host, u.port)
      return
    end
    local path = u.path:gsub('/$', '') .. '/models'
    tcp:write(('GET %s HTTP/1.0\r\nHost: %s\r\nAccept: application/json\r\n\r\n'):format(path, u.host))
    tcp:read_start(function(rerr, data)
      if rerr or not data then
        done = true
        why = why or ('the connection closed before an HTTP answer' .. (rerr and (': ' .. rerr) or ''))
        return
      end
      got = got .. data
      local status = got:match('^HTTP/%d[%.%d]* (%d%d%d)')
      if status then
        done, result = true, true
        why = ('GET %s answered HTTP %s'):format(path, status)
      end
    end)
  end)
  vim.wait(timeout_ms or 5000, function()
    return done
  end, 20)
  if not tcp:is_closing() then
    tcp:close()
  end
  if not done then
    return false, ('no answer from %s:%d within %d ms'):format(u.host, u.port, timeout_ms or 5000)
  end
  return result, why
end

local function probe_check(base)
  local up, what = M.probe(base, 5000)
  if up then
    ok('model endpoint reachable: ' .. what)
  else
    err('model endpoint ' .. base .. ' is down: ' .. tostring(what), {
      'start the model server, or fix settings.model.baseURL / $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL',
    })
  end
end

local function model_checks(settings)
  local model = settings.model or {}
  local provider = model.provider or vim.env.CAIRN_PROVIDER
  if not provider or provider == '' then
    warn('no model provider: set settings.model.provider (openai, anthropic, scripted) or $CAIRN_PROVIDER')
    return
  end
  ok(('model provider: %s%s'):format(provider, (model.name or vim.env.CAIRN_MODEL) and (', model ' .. (model.name or vim.env.CAIRN_MODEL)) or ''))
  if provider == 'scripted' then
    local path = (settings.scripted or {}).path or vim.env.CAIRN_SCRIPT
    if not path or path == '' then
      err('the scripted provider needs settings.scripted.path or $CAIRN_SCRIPT')
    elseif vim.fn.filereadable(path) ~= 1 then
      err('script file not readable: ' .. path)
    else
      ok('script: ' .. path)
    end
  elseif provider == 'openai' then
    local base = model.baseURL or vim.env.OPENAI_BASE_URL
    info('endpoint: ' .. (base or 'https://api.openai.com/v1 (default)'))
    probe_check(base or 'https://api.openai.com/v1')
    if (vim.env.OPENAI_API_KEY or '') == '' then
      if base and (base:match('127%.0%.0%.1') or base:match('localhost')) then
        info('OPENAI_API_KEY is empty (fine for a local endpoint)')
      else
        warn('OPENAI_API_KEY is not set in the environment Neovim was started from')
      end
    else
      ok('OPENAI_API_KEY is set')
    end
  elseif provider == 'anthropic' then
    probe_check(model.baseURL or vim.env.ANTHROPIC_BASE_URL or 'https://api.anthropic.com')
    if (vim.env.ANTHROPIC_API_KEY or '') == '' then
      err('ANTHROPIC_API_KEY is not set in the environment Neovim was started from')
    else
      ok('ANTHROPIC_API_KEY is set')
    end
  else
    warn('unknown provider ' .. provider .. ' (expected openai, anthropic or scripted)')
  end
  local mode = (settings.approval or {}).mode or vim.env.CAIRN_APPROVAL or 'ask'
  info('approval mode: ' .. mode .. (mode == 'ask' and ' (approvals through vim.ui.select)' or ''))
end

function M.check()
  local cairn = require('cairn')
  local cfg = cairn.config
  start('cairn: Neovim')
  local v = vim.version()
  local vs = ('%d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.7') == 1 then
    ok('Neovim ' .. vs .. (vim.lsp.start and ' (vim.lsp.start)' or ' (vim.lsp.start_client)'))
  else
    err('Neovim ' .. vs .. ' is too old: Cairn needs 0.7 or newer')
  end
  if vim.fn.exists(':CairnAsk') == 2 then
    ok("setup() was called: :CairnAsk and friends are defined")
  else
    warn("require('cairn').setup{} has not been called")
  end

  start('cairn: binary')
  local cmd = cfg.cmd or { 'cairn', 'serve' }
  local bin = cmd[1]
  if vim.fn.executable(bin) ~= 1 then
    err(('`%s` is not executable or not on PATH'):format(bin), {
      'go install ./cmd/cairn (in a clone of Cairn)',
      "or require('cairn').setup{ cmd = { '/path/to/cairn', 'serve' } }",
    })
    return
  end
  local path = vim.fn.exepath(bin)
  local out = vim.fn.system({ bin, '--version' })
  if vim.v.shell_error == 0 then
    ok(('%s: %s'):format(path ~= '' and path or bin, (out:gsub('%s+$', ''))))
  else
    warn(('`%s --version` exited %d: %s'):format(bin, vim.v.shell_error, out))
  end

  start('cairn: server')
  local res, e = M.handshake(cmd, cfg.settings, 10000)
  if not res then
    err('the server did not start: ' .. tostring(e))
  else
    local caps = type(res) == 'table' and res.capabilities or {}
    local cmds = (type(caps) == 'table' and type(caps.executeCommandProvider) == 'table' and caps.executeCommandProvider.commands) or {}
    local name = type(res) == 'table' and type(res.serverInfo) == 'table' and res.serverInfo.name or 'server'
    if vim.tbl_contains(cmds, 'cairn.ask') then
      ok(('%s started and answered initialize (%d commands)'):format(name, #cmds))
    else
      err('the server answered initialize but does not advertise cairn.ask')
    end
  end
  local roots = cairn.roots()
  for _, r in ipairs(roots) do
    ok(('client %d is running (root %s)'):format(r.client_id, r.root))
  end
  if #roots == 0 then
    info('no Cairn client is running in this session yet (one starts per workspace root, with its first file)')
  end

  start('cairn: model')
  model_checks(cfg.settings or {})
end

return M
