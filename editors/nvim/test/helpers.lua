-- A tiny test runner for headless Neovim: out() to stdout, ok/fail counts,
-- finish() exits with qall! or cquit 1.
local T = { passed = 0, failed = 0, skipped = 0, name = 'tests' }

function T.out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end

function T.eq(a, b, msg)
  if not vim.deep_equal(a, b) then
    error((msg and (msg .. ': ') or '') .. 'expected ' .. vim.inspect(b) .. ', got ' .. vim.inspect(a), 2)
  end
end

function T.truthy(v, msg)
  if not v then
    error(msg or 'expected a true value', 2)
  end
  return v
end

function T.test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    T.passed = T.passed + 1
    T.out('ok - ' .. name)
    return true
  end
  T.failed = T.failed + 1
  T.out('FAIL - ' .. name .. '\n' .. tostring(err))
  return false
end

function T.skip(name, why)
  T.skipped = T.skipped + 1
  T.out('skip - ' .. name .. ' (' .. why .. ')')
end

--- Waits for cond() to be true, processing events; errors with what on timeout.
function T.wait(what, cond, ms)
  local last
  local okw = vim.wait(ms or 30000, function()
    local ok, v = pcall(cond)
    if not ok then
      last = v
      return false
    end
    return v
  end, 50)
  if not okw then
    error('timed out waiting for ' .. what .. (last and (': ' .. tostring(last)) or ''), 2)
  end
end

function T.finish()
  T.out(('%s: %d passed, %d failed'):format(T.name, T.passed, T.failed) .. (T.skipped > 0 and (', ' .. T.skipped .. ' skipped') or ''))
  if T.failed > 0 then
    vim.cmd('cquit 1')
  else
    vim.cmd('qall!')
  end
end

return T
