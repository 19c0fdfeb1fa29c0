-- Proposed edits: a diff tab per file, accept/reject whole or hunk by hunk,
-- re-rendering when the user types into a waiting edit, redo, undo. Every
-- function takes the session (one server's root) the edit belongs to.
local answers = require('cairn.answers')
local config = require('cairn.config')
local sessions = require('cairn.sessions')
local util = require('cairn.util')

local M = {}

local notify = config.notify

function M.pending(s)
  local out = {}
  for _, id in ipairs(s and s.edit_order or {}) do
    if s.edits[id].state == 'pending' then
      table.insert(out, id)
    end
  end
  return out
end

local hunk_ns = vim.api.nvim_create_namespace('cairn_hunk_actions')

-- The hunk actions as virtual text on the first line of each pending hunk of
-- the proposed buffer b (file path): inline text on Neovim 0.10+, at the end
-- of the line before (0.7 has no inline virtual text).
local function mark_hunks(b, path, hunks)
  vim.api.nvim_buf_clear_namespace(b, hunk_ns, 0, -1)
  local km = config.options.keymaps
  local n = vim.api.nvim_buf_line_count(b)
  local inline = config.has('nvim-0.10')
  for _, h in ipairs(hunks or {}) do
    if h.path == path and (h.state == 'pending' or h.state == 'conflict') and type(h.proposedStartLine) == 'number' then
      local row = math.min(h.proposedStartLine, n - 1)
      local label = ('  %s accept · %s reject hunk %d'):format(km.accept_hunk, km.reject_hunk, h.index + 1)
      local opts = { virt_text = { { label, 'Comment' } }, virt_text_pos = 'eol', hl_mode = 'combine' }
      local col = 0
      if inline then
        opts.virt_text_pos = 'inline'
        col = #(vim.api.nvim_buf_get_lines(b, row, row + 1, false)[1] or '')
      end
      vim.api.nvim_buf_set_extmark(b, hunk_ns, row, col, opts)
    end
  end
end
M.hunk_ns = hunk_ns

local function buf_keymap(b, lhs, rhs, desc)
  if lhs and lhs ~= '' then
    vim.api.nvim_buf_set_keymap(b, 'n', lhs, rhs, { noremap = true, silent = true, desc = desc })
  end
end

local function open_file_diff(edit_id, f, idx, hunks)
  local fname = vim.uri_to_fname(f.uri)
  vim.cmd('tabnew')
  local tab = vim.api.nvim_get_current_tabpage()
  -- Left: the file as it is (a scratch copy of `current` for new files).
  if f.create then
    local cb = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(cb, 0, -1, false, {})
    vim.api.nvim_buf_set_name(cb, ('cairn://current/%s/%d/%s'):format(edit_id, idx, f.path))
    vim.api.nvim_win_set_buf(0, cb)
  else
    vim.cmd('edit ' .. vim.fn.fnameescape(fname))
  end
  local left_win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_var(left_win, 'cairn_edit_id', edit_id)
  vim.api.nvim_win_set_var(left_win, 'cairn_side', 'old')
  vim.api.nvim_win_set_var(left_win, 'cairn_path', f.path)
  local ft = vim.bo.filetype
  vim.cmd('diffthis')
  -- Right: the proposed text.
  vim.cmd('rightbelow vnew')
  local pb = vim.api.nvim_get_current_buf()
  vim.bo[pb].buftype = 'nofile'
  vim.bo[pb].bufhidden = 'wipe'
  vim.bo[pb].swapfile = false
  -- The tab line shows this name: the file's name first, not a shortened
  -- path (cairn://proposed/e1/1/pkg/x.go used to read c//p/e/1/p/x.go).
  vim.api.nvim_buf_set_name(pb, ('%s (Cairn proposed %s)'):format(vim.fn.fnamemodify(f.path, ':t'), edit_id))
  vim.api.nvim_buf_set_var(pb, 'cairn_proposed', { edit_id = edit_id, file = idx, path = f.path })
  vim.api.nvim_win_set_var(0, 'cairn_edit_id', edit_id)
  vim.api.nvim_win_set_var(0, 'cairn_side', 'new')
  vim.api.nvim_win_set_var(0, 'cairn_path', f.path)
  vim.api.nvim_tabpage_set_var(tab, 'cairn_title', 'Cairn: ' .. f.path)
  vim.api.nvim_buf_set_lines(pb, 0, -1, false, util.shown_proposed(f, hunks))
  mark_hunks(pb, f.path, hunks)
  vim.bo[pb].modifiable = false
  if ft and ft ~= '' then
    vim.bo[pb].filetype = ft
  end
  vim.api.nvim_buf_set_var(pb, 'cairn_edit_id', edit_id)
  vim.cmd('diffthis')
  local km = config.options.keymaps
  buf_keymap(pb, km.accept, ('<Cmd>lua require("cairn").accept(%q)<CR>'):format(edit_id), 'Cairn: accept the proposed edit')
  buf_keymap(pb, km.reject, ('<Cmd>lua require("cairn").reject(%q)<CR>'):format(edit_id), 'Cairn: reject the proposed edit')
  buf_keymap(pb, km.close, '<Cmd>tabclose<CR>', 'Cairn: close the diff (the edit stays pending)')
  -- Hunk keys on both sides of the diff (the left buffer is the real file: only while the tab lives).
  for _, b in ipairs({ pb, vim.api.nvim_win_get_buf(left_win) }) do
    buf_keymap(b, km.accept_hunk, '<Cmd>lua require("cairn").accept_hunk()<CR>', 'Cairn: accept the hunk under the cursor')
    buf_keymap(b, km.reject_hunk, '<Cmd>lua require("cairn").reject_hunk()<CR>', 'Cairn: reject the hunk under the cursor')
  end
  pcall(function()
    vim.wo.statusline = ('Cairn proposed: %s   %s/%s hunk  %s/%s all'):format(f.path, km.accept_hunk, km.reject_hunk, km.accept, km.reject)
  end)
  -- The run's answer below the diff, so it can be read while reviewing.
  local pw = vim.api.nvim_get_current_win()
  vim.cmd(('botright %dsplit'):format(math.max(4, math.floor(config.options.answer_height / 2))))
  local ab = answers.buf()
  vim.api.nvim_win_set_buf(0, ab)
  vim.wo.wrap = true
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(ab), 0 })
  vim.api.nvim_set_current_win(pw)
  return tab, left_win
end

--- Fetches an edit (cairn.getEdit: files and hunks) into s; cb(res, e).
function M.fetch(s, edit_id, cb)
  sessions.own_edit(s, edit_id)
  sessions.exec(s, 'cairn.getEdit', { editId = edit_id }, function(err, res)
    if err or type(res) ~= 'table' then
      notify(('cannot fetch edit %s: %s'):format(edit_id, err and err.message or 'no result'), vim.log.levels.ERROR)
      return
    end
    local e = s.edits[edit_id]
    if not e then
      e = { state = 'pending', tabs = {} }
      s.edits[edit_id] = e
      table.insert(s.edit_order, edit_id)
    end
    -- Answers to concurrent fetches (one per editUpdated while typing) can
    -- arrive out of order: the larger seq is the newer state.
    if e.result and (tonumber(e.result.seq) or 0) > (tonumber(res.seq) or 0) then
      res = e.result
    end
    e.result = res
    if type(res.state) == 'string' and res.state ~= 'pending' and res.state ~= '' then
      e.state = res.state
    end
    cb(res, e)
  end)
end

function M.open(s, edit_id, cb)
  M.fetch(s, edit_id, function(res, e)
    for i, f in ipairs(res.files or {}) do
      local tab = open_file_diff(edit_id, f, i, res.hunks)
      table.insert(e.tabs, tab)
    end
    if cb then
      cb(res)
    end
  end)
end

local function close_tabs(s, edit_id)
  local e = s.edits[edit_id]
  if not e then
    return
  end
  for _, tab in ipairs(e.tabs) do
    if vim.api.nvim_tabpage_is_valid(tab) then
      local wins = vim.api.nvim_tabpage_list_wins(tab)
      for _, w in ipairs(wins) do
        if vim.api.nvim_win_is_valid(w) then
          vim.api.nvim_win_call(w, function()
            vim.cmd('diffoff')
          end)
          local okv, side = pcall(vim.api.nvim_win_get_var, w, 'cairn_side')
          if okv and side == 'old' then
            local b = vim.api.nvim_win_get_buf(w)
            for _, lhs in ipairs({ config.options.keymaps.accept_hunk, config.options.keymaps.reject_hunk }) do
              pcall(vim.api.nvim_buf_del_keymap, b, 'n', lhs)
            end
          end
        end
      end
      if #vim.api.nvim_list_tabpages() > 1 then
        vim.cmd('tabclose ' .. vim.api.nvim_tabpage_get_number(tab))
      end
    end
  end
  e.tabs = {}
end

--- Which edit a command means, and its session: the id given, the diff tab's,
--- else the newest pending edit of the current buffer's session.
function M.pick(edit_id)
  if edit_id and edit_id ~= '' then
    return edit_id, sessions.of_edit(edit_id) or sessions.current()
  end
  local ok, id = pcall(vim.api.nvim_buf_get_var, 0, 'cairn_edit_id')
  local owner = ok and sessions.of_edit(id)
  if owner and owner.edits[id] and owner.edits[id].state == 'pending' then
    return id, owner
  end
  local s = sessions.current()
  local p = M.pending(s)
  return p[#p], s
end

--- The loaded buffers of these file URIs that have unsaved changes: an
--- accept or undo leaves them unsaved (the user's own text is not saved for
--- them).
local function dirty_buffers(uris)
  local out = {}
  for _, u in ipairs(uris or {}) do
    local b = vim.uri_to_bufnr(u)
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].modified then
      -- 'modified' stays set after a change and its reverse: compare with the disk.
      local f = io.open(vim.api.nvim_buf_get_name(b), 'rb')
      local disk = f and f:read('*a')
      if f then
        f:close()
      end
      local text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n')
      if vim.bo[b].eol or vim.bo[b].fixeol then
        text = text .. '\n'
      end
      if text ~= disk then
        out[b] = true
      end
    end
  end
  return out
end

--- Writes the buffers of these file URIs that an accept or undo changed: the
--- checkpoint describes the disk, so nothing is left unsaved. A buffer that
--- had unsaved changes before (keep: from dirty_buffers) stays unsaved. No
--- autocmds: a format-on-save must not change what was accepted.
function M.save_files(uris, keep)
  keep = keep or {}
  for _, u in ipairs(uris or {}) do
    local b = vim.uri_to_bufnr(u)
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].modified and not keep[b] then
      local okw, werr = pcall(vim.api.nvim_buf_call, b, function()
        vim.cmd('silent noautocmd write')
      end)
      if not okw then
        notify('could not save ' .. vim.uri_to_fname(u) .. ': ' .. tostring(werr), vim.log.levels.WARN)
      end
    end
  end
end

-- The files of an edit, for people: "hello.go", "a.go and b.go".
local function edit_files(s, edit_id)
  local e = s.edits[edit_id]
  local names = {}
  for _, f in ipairs(e and e.result and e.result.files or {}) do
    table.insert(names, f.path)
  end
  if #names == 0 then
    return 'a file'
  end
  return table.concat(names, ', ')
end

local function hunk_of(s, edit_id, index)
  local e = s.edits[edit_id]
  for _, h in ipairs(e and e.result and e.result.hunks or {}) do
    if h.index == index then
      return h
    end
  end
end

local function edit_uris(s, edit_id)
  local e = s.edits[edit_id]
  local files = {}
  for _, f in ipairs(e and e.result and e.result.files or {}) do
    table.insert(files, f.uri)
  end
  return files
end

-- Re-renders the proposed side of e's open diff tabs from res (cairn.getEdit).
local function render_tabs(e, res)
  for _, tab in ipairs(e.tabs or {}) do
    if vim.api.nvim_tabpage_is_valid(tab) then
      for _, w in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
        local b = vim.api.nvim_win_get_buf(w)
        local okp, p = pcall(vim.api.nvim_buf_get_var, b, 'cairn_proposed')
        local f = okp and type(p) == 'table' and (res.files or {})[p.file]
        if f then
          vim.bo[b].modifiable = true
          vim.api.nvim_buf_set_lines(b, 0, -1, false, util.shown_proposed(f, res.hunks))
          vim.bo[b].modifiable = false
          mark_hunks(b, f.path, res.hunks)
          pcall(vim.api.nvim_win_call, w, function()
            vim.cmd('diffupdate')
          end)
        end
      end
    end
  end
end

--- Accepts (how = 'accept') or rejects one hunk of an edit: index is 0-based
--- (cairn.getEdit's index); nil: the hunk under the cursor in the diff tab.
function M.settle_hunk(how, edit_id, index, cb)
  local s
  if not edit_id or index == nil then
    local okv, id = pcall(vim.api.nvim_win_get_var, 0, 'cairn_edit_id')
    local _, side = pcall(vim.api.nvim_win_get_var, 0, 'cairn_side')
    local _, path = pcall(vim.api.nvim_win_get_var, 0, 'cairn_path')
    s = okv and sessions.of_edit(id)
    local e = s and s.edits[id]
    local h = e and e.result and util.hunk_at(e.result.hunks, path, vim.api.nvim_win_get_cursor(0)[1], side)
    if not h then
      notify('no pending hunk under the cursor (use it in a Cairn diff tab, on or next to a change)', vim.log.levels.WARN)
      return
    end
    edit_id, index = id, h.index
  end
  s = s or sessions.of_edit(edit_id) or sessions.current()
  local method = how == 'accept' and 'cairn.acceptEdit' or 'cairn.rejectEdit'
  local keep = dirty_buffers(edit_uris(s, edit_id))
  local what = hunk_of(s, edit_id, index) and util.hunk_name(hunk_of(s, edit_id, index)) or ('hunk ' .. (index + 1) .. ' of ' .. edit_files(s, edit_id))
  sessions.exec(s, method, { editId = edit_id, hunks = { index } }, function(err, res)
    if err then
      notify(how .. ' hunk failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if how == 'accept' then
      if type(res) ~= 'table' or not res.applied then
        notify(what .. ' was not applied', vim.log.levels.ERROR)
        return
      end
      M.save_files(edit_uris(s, edit_id), keep)
      if res.checkpointId then
        table.insert(s.checkpoints, { checkpointId = res.checkpointId, editId = edit_id, files = edit_uris(s, edit_id), what = what })
      end
    end
    answers.append(('\n%s %s\n'):format(how == 'accept' and 'Accepted' or 'Rejected', what))
    M.fetch(s, edit_id, function(r2, e)
      local pending = false
      for _, h in ipairs(r2.hunks or {}) do
        pending = pending or h.state == 'pending' or h.state == 'conflict'
      end
      if not pending then
        if e.state == 'pending' then
          e.state = how == 'accept' and 'accepted' or 'rejected'
        end
        close_tabs(s, edit_id)
      else
        -- A rejected hunk leaves the diff: the proposed side gets its old lines back.
        render_tabs(e, r2)
      end
      if cb then
        cb(res, r2)
      end
    end)
  end)
end

--- Re-renders the proposed side of an edit's open diff tabs from the server's
--- view (the user's buffer plus the hunks carried onto it), and says which
--- hunks now conflict with the user's own edits.
function M.refresh(s, edit_id, cb)
  local e = s.edits[edit_id]
  if not e then
    return
  end
  local before = {}
  for _, h in ipairs(e.result and e.result.hunks or {}) do
    before[h.index] = h.state
  end
  M.fetch(s, edit_id, function(res)
    render_tabs(e, res)
    local clashes = {}
    for _, h in ipairs(res.hunks or {}) do
      if h.state == 'conflict' and before[h.index] ~= 'conflict' then
        table.insert(clashes, ('%s line %d'):format(h.path, h.startLine + 1))
      end
    end
    if #clashes > 0 then
      notify(('your edit overlaps the proposed change to %s: :CairnRedo redoes it against your text, :CairnRejectHunk drops it'):format(
        table.concat(clashes, ', ')), vim.log.levels.WARN)
    end
    if cb then
      cb(res)
    end
  end)
end

--- Runs command method on edit edit_id (nil: the one M.pick finds) and
--- hands its result to done(s, edit_id, res, prepared), where prepared is
--- what prepare(s, edit_id) returned before the request; a missing edit or
--- a failed request is one message naming verb.
local function on_edit(edit_id, method, verb, done, prepare)
  local s
  edit_id, s = M.pick(edit_id)
  if not edit_id then
    notify('no proposed edit is waiting')
    return
  end
  local prepared = prepare and prepare(s, edit_id)
  sessions.exec(s, method, { editId = edit_id }, function(err, res)
    if err then
      notify(verb .. ' failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    done(s, edit_id, res, prepared)
  end)
end

--- Asks Cairn to redo an edit's conflicting hunks against the current text
--- (cairn.redoHunks): merged where the user's change and Cairn's touch
--- different characters, else asked of the model again.
function M.redo(edit_id, cb)
  on_edit(edit_id, 'cairn.redoHunks', 'redo', function(s, id, res)
    if type(res) == 'table' and res.reason then
      notify(res.reason, vim.log.levels.WARN)
    end
    M.refresh(s, id, function()
      if cb then
        cb(res)
      end
    end)
  end)
end

function M.accept(edit_id, cb)
  on_edit(edit_id, 'cairn.acceptEdit', 'accept', function(s, id, res, keep)
    if type(res) ~= 'table' or not res.applied then
      notify('the edit was not applied' .. ((type(res) == 'table' and res.reason) and (': ' .. res.reason) or ''), vim.log.levels.ERROR)
      return
    end
    local e = s.edits[id] or { tabs = {} }
    e.state = 'accepted'
    local files = edit_uris(s, id)
    M.save_files(files, keep)
    local what = "Cairn's edit of " .. edit_files(s, id)
    if res.checkpointId then
      table.insert(s.checkpoints, { checkpointId = res.checkpointId, editId = id, files = files, what = what })
    end
    close_tabs(s, id)
    answers.append(('\nAccepted %s%s\n'):format(what, res.checkpointId and ' (:CairnUndo restores)' or ''))
    if cb then
      cb(res)
    end
  end, function(s, id)
    return dirty_buffers(edit_uris(s, id))
  end)
end

function M.reject(edit_id, cb)
  on_edit(edit_id, 'cairn.rejectEdit', 'reject', function(s, id)
    if s.edits[id] then
      s.edits[id].state = 'rejected'
    end
    close_tabs(s, id)
    answers.append(("\nRejected Cairn's edit of %s\n"):format(edit_files(s, id)))
    if cb then
      cb()
    end
  end)
end

--- Undoes the last edit accepted in session s.
function M.undo(s, cb)
  local last = s.checkpoints[#s.checkpoints]
  if not last then
    notify(('no accepted edit to undo in this session (root %s)'):format(s.root))
    return
  end
  local keep = dirty_buffers(last.files)
  sessions.exec(s, 'cairn.undo', { checkpointId = last.checkpointId }, function(err, res)
    if err then
      notify('undo refused: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if type(res) == 'table' and not res.applied and type(res.alreadyUndone) == 'table' and #res.alreadyUndone > 0 then
      -- The editor's own undo already put the text back; write it, so the disk is undone too.
      table.remove(s.checkpoints)
      -- The buffer holds exactly the text from before the accept: writing it is the undo.
      M.save_files(last.files)
      answers.append(('\n%s was already undone\n'):format(last.what or 'the edit'))
      notify(('already undone: %s (%s)'):format(last.what or 'the edit', table.concat(res.alreadyUndone, ', ')))
      if cb then
        cb(res)
      end
      return
    end
    if type(res) ~= 'table' or not res.applied then
      notify('the undo was not applied' .. ((type(res) == 'table' and res.reason) and (': ' .. res.reason) or ''), vim.log.levels.ERROR)
      return
    end
    table.remove(s.checkpoints)
    M.save_files(last.files, keep)
    answers.append(('\nUndid %s\n'):format(last.what or 'the edit'))
    notify('undid ' .. (last.what or 'the edit'))
    if cb then
      cb(res)
    end
  end)
end

return M
