-- Shared by the Neovim scripts of tests/editor/test_neovim.py: open FLOPKB_RECORD of FLOPKB_ROOT in Neovim's own LSP
-- client (0.7 and later) attached to `flopkb lsp` (run by FLOPKB_PYTHON); `finish` writes the lines to FLOPKB_OUT,
-- stops the server and quits.
local root = vim.env.FLOPKB_ROOT
vim.cmd("edit " .. vim.fn.fnameescape(root .. "/" .. vim.env.FLOPKB_RECORD))
local client_id = vim.lsp.start_client({
  name = "flopkb",
  cmd = { vim.env.FLOPKB_PYTHON, "-m", "flopkb", "lsp" },
  root_dir = root,
})
vim.lsp.buf_attach_client(0, client_id)

local function finish(lines)
  vim.fn.writefile(lines, vim.env.FLOPKB_OUT)
  vim.lsp.stop_client(client_id)
  vim.wait(10000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 50)
  vim.cmd("qall!")
end

return { finish = finish }
