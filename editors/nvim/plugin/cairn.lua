-- Cairn: nothing runs until require('cairn').setup{} is called (see :help cairn).
if vim.g.loaded_cairn then
  return
end
vim.g.loaded_cairn = 1
