--- lode.nvim: lode's search, definitions and references in Neovim, over lode's HTTP API.
--- See `:help lode`.
local M = {}

--- Change the settings (see `:help lode-setup`); optional: the defaults need no call.
---@param opts lode.Options|nil
function M.setup(opts)
  require("lode.config").setup(opts)
end

--- Search chunks: a live picker, or with `query` one search through vim.ui.select.
---@param query string|nil
function M.search(query)
  require("lode.search").run(query, "chunk")
end

--- Search files (document granularity): as `search`.
---@param query string|nil
function M.files(query)
  require("lode.search").run(query, "document")
end

--- Go to the definition of the name under the cursor.
function M.definition()
  require("lode.symbols").definition()
end

--- The references of the name under the cursor into the quickfix list.
function M.references()
  require("lode.symbols").references()
end

--- Show the server's projects, coverage and watchers.
function M.status()
  require("lode.status").show()
end

--- The server the plugin talks to now, and where its URL and token came from.
---@return lode.Server
function M.server()
  return require("lode.config").resolve()
end

--- The plugin's latency records (see `:help lode-timings`), of one kind or all.
---@param kind string|nil  "search", "files", "def" or "refs"
---@return table[]
function M.timings(kind)
  return require("lode.timing").list(kind)
end

--- Forget the latency records.
function M.clear_timings()
  require("lode.timing").clear()
end

local SUBCOMMANDS = {
  search = function(rest)
    M.search(rest)
  end,
  files = function(rest)
    M.files(rest)
  end,
  def = M.definition,
  refs = M.references,
  status = M.status,
  health = function()
    vim.cmd("checkhealth lode")
  end,
}

--- The names `:Lode` takes, for completion.
---@return string[]
function M.subcommands()
  local names = vim.tbl_keys(SUBCOMMANDS)
  table.sort(names)
  return names
end

--- Run `:Lode {args}`.
---@param args string
function M.command(args)
  local name, rest = args:match("^%s*(%S*)%s*(.-)%s*$")
  local run = SUBCOMMANDS[name]
  if not run then
    local hint = ("lode: :Lode takes %s"):format(table.concat(M.subcommands(), ", "))
    vim.notify(name == "" and hint or ("lode: unknown command %q; %s"):format(name, hint:sub(7)), vim.log.levels.WARN)
    return
  end
  run(rest ~= "" and rest or nil)
end

return M
