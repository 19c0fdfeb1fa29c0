-- The answer buffer (cairn://answers): one for every root. Runs can stream
-- at the same time (one still answering after its edit was decided, another
-- started from a code action, another in a second root): each run's output
-- goes to the end of its own section, marked by an extmark, so deltas never mix.
local config = require('cairn.config')

local M = {}

local ns = vim.api.nvim_create_namespace('cairn_answers')

local state = {
  buf = nil,
  sections = {}, -- runId -> extmark id: where the run's next output goes
  last_section = nil, -- the run whose section ends the buffer
  tail = nil, -- who appended last at the end of the buffer (a runId or false)
}

function M.buf()
  local b = state.buf
  if b and vim.api.nvim_buf_is_valid(b) then
    return b
  end
  b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(b, 'cairn://answers')
  vim.bo[b].buftype = 'nofile'
  vim.bo[b].bufhidden = 'hide'
  vim.bo[b].swapfile = false
  vim.bo[b].filetype = 'markdown'
  state.buf = b
  return b
end

--- Shows the answer buffer in a split of this tab (unless one shows it); returns its window.
function M.show()
  local b = M.buf()
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(w) == b then
      return w
    end
  end
  local cur = vim.api.nvim_get_current_win()
  vim.cmd('botright ' .. config.options.answer_height .. 'split')
  local w = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(w, b)
  vim.wo[w].wrap = true
  vim.api.nvim_set_current_win(cur)
  return w
end

-- Inserts text at (row, col) of b; returns the position just after it.
local function insert_text(b, row, col, text)
  local parts = vim.split(text, '\n', { plain = true })
  vim.api.nvim_buf_set_text(b, row, col, row, col, parts)
  if #parts == 1 then
    return row, col + #parts[1]
  end
  return row + #parts - 1, #parts[#parts]
end

--- Appends text: at the end, or, for a run whose section another run's
--- section has followed since, at the end of its own section.
function M.append(text, run_id)
  if text == nil or text == '' then
    return
  end
  local api = vim.api
  local b = M.buf()
  local mark = run_id and state.sections[run_id]
  local row, col
  if mark and state.last_section ~= run_id then
    local pos = api.nvim_buf_get_extmark_by_id(b, ns, mark, {})
    if pos and pos[1] then
      row, col = pos[1], pos[2]
    end
  end
  local at_end = row == nil
  if at_end then
    local n = api.nvim_buf_line_count(b)
    local last = api.nvim_buf_get_lines(b, n - 1, n, false)[1] or ''
    if n == 1 and last == '' then
      text = text:gsub('^\n', '')
    elseif last ~= '' and state.tail ~= (run_id or false) and text:sub(1, 1) ~= '\n' then
      text = '\n' .. text -- someone else's line is open: start a new one
    end
    row, col = n - 1, #last
    state.tail = run_id or false
    if run_id then
      state.last_section = run_id
    end
  end
  if text == '' then
    return
  end
  local erow, ecol = insert_text(b, row, col, text)
  if run_id then
    -- Left gravity: text another run appends right here goes after the mark.
    state.sections[run_id] = api.nvim_buf_set_extmark(b, ns, erow, ecol, { id = mark or nil, right_gravity = false })
  end
  if at_end then
    local count = api.nvim_buf_line_count(b)
    for _, w in ipairs(api.nvim_list_wins()) do
      if api.nvim_win_get_buf(w) == b then
        api.nvim_win_set_cursor(w, { count, 0 })
      end
    end
  end
end

return M
