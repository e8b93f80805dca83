-- Neovim's own LSP client on flopkb lsp: wait for the dangling link's diagnostic, type before the link on its line,
-- then at once ask for the code action with the line's diagnostics (what vim.lsp.buf.code_action() sends) and apply
-- the first "Write" fix. Run by tests/editor/test_neovim.py with FLOPKB_PYTHON, FLOPKB_ROOT, FLOPKB_RECORD and
-- FLOPKB_OUT set; writes the fix's title and the line after it.
local session = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/neovim_start.lua")
local out = {}
local found = vim.wait(120000, function()
  for _, item in ipairs(vim.diagnostic.get(0)) do
    if item.code == "dangling-link" then return true end
  end
  return false
end, 50)
table.insert(out, "diagnostics: " .. tostring(found))
vim.api.nvim_buf_set_text(0, 2, 15, 2, 15, { "the " })
vim.api.nvim_win_set_cursor(0, { 3, 20 })
local params = vim.lsp.util.make_range_params()
params.context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics() }
local results = vim.lsp.buf_request_sync(0, "textDocument/codeAction", params, 60000)
for _, result in pairs(results or {}) do
  for _, action in ipairs(result.result or {}) do
    if action.title:match("^Write") then
      table.insert(out, "action: " .. action.title)
      vim.lsp.util.apply_workspace_edit(action.edit, "utf-16")
      break
    end
  end
end
table.insert(out, "line: " .. vim.api.nvim_buf_get_lines(0, 2, 3, false)[1])
session.finish(out)
