-- window/showMessageRequest: approvals of risky tool calls (and the server's
-- other questions) through vim.ui.select, Deny first.
--
-- The reply is the handler's return value. From Neovim 0.9 on the handler
-- runs in a coroutine of the RPC layer: it yields while an asynchronous
-- picker is open and the picker's answer resumes it, so nothing blocks and no
-- nested event loop runs. Before 0.9 a request can only be answered before
-- the handler returns: vim.ui.select must answer at once (the built-in one
-- does); an asynchronous picker there is told the question was denied.
local answers = require('cairn.answers')
local config = require('cairn.config')
local util = require('cairn.util')

local M = {}

local notify = config.notify

-- The running coroutine when the handler may yield in it (not the main one).
local function yieldable()
  local co, main = coroutine.running()
  if co == nil or main then
    return nil
  end
  if coroutine.isyieldable and not coroutine.isyieldable() then
    return nil
  end
  return co
end

function M.handler(_, params)
  params = params or {}
  local actions = params.actions or {}
  if #actions == 0 then
    notify(params.message or '')
    return vim.NIL
  end
  local approval = util.is_approval(actions)
  if approval then
    local msg = vim.trim((params.message or ''):gsub('%s+', ' '))
    answers.append('\n> approval asked: ' .. msg .. '\n')
    -- Deny first: the default choice of a picker denies.
    actions = util.deny_first(actions)
  end
  local co = yieldable()
  local st = { answered = false, choice = nil, waiting = false, replied = false }
  local timer
  local function wake()
    if timer then
      timer:stop()
      timer:close()
      timer = nil
    end
    if st.waiting then
      st.waiting = false
      -- Resumed from the event loop, never from inside the picker's callback.
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end
  vim.ui.select(actions, {
    prompt = (approval and 'Cairn asks: ' or '') .. (params.message or ''),
    format_item = function(a)
      return a.title
    end,
  }, function(item)
    if st.replied then
      notify('that answer came after the question was answered (' .. (approval and 'denied' or 'dismissed') .. ')', vim.log.levels.WARN)
      return
    end
    st.answered, st.choice = true, item
    wake()
  end)
  if not st.answered then
    if not co then
      st.replied = true
      notify('the picker answers later, and Neovim before 0.9 cannot answer the server later: '
        .. (approval and 'denied' or 'dismissed') .. ' (use the built-in vim.ui.select, or Neovim 0.9+)', vim.log.levels.WARN)
      return approval and { title = 'Deny' } or vim.NIL
    end
    st.waiting = true
    local uv = vim.uv or vim.loop
    timer = uv.new_timer()
    timer:start(config.options.approval_timeout * 1000, 0, function()
      st.answered = true -- unanswered: as if dismissed
      wake()
    end)
    coroutine.yield()
  end
  st.replied = true
  if not st.choice and approval then
    return { title = 'Deny' } -- dismissed: Deny, said explicitly
  end
  return st.choice or vim.NIL
end

return M
