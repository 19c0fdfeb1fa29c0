-- The plugin's options (setup() merges the user's over the defaults) and the
-- small helpers every part of the plugin shares.
local M = {}

M.defaults = {
  cmd = { 'cairn', 'serve' },
  -- Sent as initializationOptions and workspace/didChangeConfiguration (section cairn):
  -- { model = { provider, name, baseURL, contextWindow, maxOutputTokens },
  --   scripted = { path }, approval = { mode }, mcpServers = {}, trace = { otlpEndpoint } }
  settings = {},
  -- A directory, or function(bufnr) -> directory; default: nearest .git/go.mod, else cwd.
  -- Each root gets a server of its own.
  root_dir = nil,
  root_markers = { '.git', 'go.mod', 'package.json', 'Cargo.toml', 'pyproject.toml' },
  -- File types to attach to; empty: every normal file buffer.
  filetypes = {},
  diagnostics_debounce_ms = 300,
  answer_height = 12,
  -- In the diff tab: accept/reject the whole edit, or the hunk under the cursor.
  keymaps = { accept = 'ga', reject = 'gx', accept_hunk = 'gh', reject_hunk = 'gH', close = 'q' },
  -- Echo what a run is doing (tool calls, waiting) in the command line.
  progress_echo = true,
  -- Seconds an approval waits for an asynchronous vim.ui.select (Neovim 0.9+).
  approval_timeout = 120,
}

-- The options in force; replaced (not mutated) by setup(), so read it through
-- this table every time.
M.options = vim.deepcopy(M.defaults)

function M.has(feature)
  return vim.fn.has(feature) == 1
end

function M.notify(msg, level)
  vim.notify('Cairn: ' .. msg, level or vim.log.levels.INFO)
end

return M
