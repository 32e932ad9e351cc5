-- The minimal init of the headless Neovim tests: lode.nvim from this repository, nothing else.
local plugin = assert(vim.env.LODE_NVIM_PLUGIN, "LODE_NVIM_PLUGIN names editors/nvim")
vim.opt.runtimepath:prepend(plugin)
-- other plugins (Telescope and plenary for the optional picker), ":"-separated folders
for _, dir in ipairs(vim.split(vim.env.LODE_NVIM_EXTRA_RTP or "", ":", { trimempty = true })) do
  vim.opt.runtimepath:append(dir)
end
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"
vim.opt.more = false
-- Opening a Python file runs Neovim's Python ftplugin, which probes for a Python provider
-- (seconds, on every start): nothing lode.nvim uses.
vim.g.loaded_python3_provider = 0
-- the HTTP transport under test ("auto": a socket for http://; "curl")
if vim.env.LODE_TEST_TRANSPORT then
  require("lode").setup({ transport = vim.env.LODE_TEST_TRANSPORT })
end
