-- lode.nvim: the :Lode command. Nothing else is loaded until it is used.
if vim.g.loaded_lode then
  return
end
vim.g.loaded_lode = 1

if vim.fn.has("nvim-0.10") == 0 then
  vim.api.nvim_create_user_command("Lode", function()
    vim.notify("lode: lode.nvim needs Neovim 0.10 or newer", vim.log.levels.ERROR)
  end, { nargs = "*" })
  return
end

vim.api.nvim_create_user_command("Lode", function(opts)
  require("lode").command(opts.args)
end, {
  nargs = "*",
  desc = "lode: search, files, def, refs, status, health",
  complete = function(arglead, cmdline)
    if cmdline:match("^%s*%S+%s+%S+%s") then
      return {}
    end
    return vim.tbl_filter(function(name)
      return name:sub(1, #arglead) == arglead
    end, require("lode").subcommands())
  end,
})
