-- Neovim's own LSP client (0.7 and later) on flopkb lsp: open a record, wait for its diagnostics, write them out.
-- Run by tests/editor/test_neovim.py with FLOPKB_PYTHON, FLOPKB_ROOT, FLOPKB_RECORD and FLOPKB_OUT set.
local session = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/neovim_start.lua")
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
session.finish(lines)
