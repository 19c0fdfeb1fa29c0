-- What a run is doing, for the statusline (status()) and echoed in the
-- command line: per session, ticking every second while a run works.
local config = require('cairn.config')

local M = {}

local uv = vim.uv or vim.loop
local timer
local working = {} -- sessions with a run at work
local latest -- the session whose progress changed last: the echo shows it

function M.text(s)
  local p = s and s.progress
  if not p then
    return nil
  end
  local secs = math.floor((uv.now() - p.since) / 1000)
  return ('Cairn: %s%s'):format(p.what, secs >= 2 and (' (%ds)'):format(secs) or '')
end

local function echo()
  if config.options.progress_echo then
    pcall(vim.api.nvim_echo, { { M.text(latest) or '', 'Comment' } }, false, {})
  end
end

--- Session s's run run_id is doing what (nil: it ended).
function M.set(s, run_id, what)
  if what then
    s.progress = { run_id = run_id, what = what, since = uv.now() }
    working[s] = true
    latest = s
    if not timer then
      -- Ticks while a run works, so a long tool (a 100 s `go test`) visibly counts up.
      timer = uv.new_timer()
      timer:start(1000, 1000, vim.schedule_wrap(function()
        if not next(working) then
          return
        end
        pcall(vim.cmd, 'redrawstatus')
        echo()
      end))
    end
  elseif s.progress and s.progress.run_id == run_id then
    s.progress = nil
    working[s] = nil
    if latest == s then
      latest = next(working)
    end
    if timer and not next(working) then
      timer:stop()
      timer:close()
      timer = nil
    end
  end
  echo()
  pcall(vim.cmd, 'redrawstatus')
end

return M
