-- Neovim's own LSP client (0.7 and later) on flopkb lsp: open a record, wait for its diagnostics, write them out.
-- Run by tests/editor/test_neovim.py with FLOPKB_PYTHON, FLOPKB_ROOT, FLOPKB_RECORD and FLOPKB_OUT set.
local root = vim.env.FLOPKB_ROOT
vim.cmd("edit " .. vim.fn.fnameescape(root .. "/" .. vim.env.FLOPKB_RECORD))
local client_id = vim.lsp.start_client({
  name = "flopkb",
  cmd = { vim.env.FLOPKB_PYTHON, "-m", "flopkb", "lsp" },
  root_dir = root,
})
vim.lsp.buf_attach_client(0, client_id)
local found = vim.wait(120000, function() return #vim.diagnostic.get(0) > 0 end, 50)
local lines = {}
if found then
  for _, item in ipairs(vim.diagnostic.get(0)) do
    local lsp = item.user_data and item.user_data.lsp or {}
    local code = item.code or lsp.code or ""
    table.insert(lines, string.format("%d:%d:%s:%s", item.lnum, item.col, code, item.message:gsub("\n", " | ")))
  end
else
  table.insert(lines, "no diagnostics")
end
vim.fn.writefile(lines, vim.env.FLOPKB_OUT)
vim.lsp.stop_client(client_id)
vim.wait(10000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 50)
vim.cmd("qall!")
