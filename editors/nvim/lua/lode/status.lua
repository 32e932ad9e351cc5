--- `:Lode status`: the server, its projects (files, chunks, semantic coverage, watcher, the
--- task running) and its queue, from `GET /api/v1/status`.
local config = require("lode.config")
local http = require("lode.http")

local M = {}
local count = require("lode.locations").count

local function percent(value)
  return ("%d%%"):format(math.floor((value or 0) * 100 + 0.5))
end

local function task_text(task)
  if type(task) ~= "table" then
    return "idle"
  end
  return ("%s %s %s%%"):format(task.status or "", task.phase or "", tostring(task.percent or 0))
end

--- The lines `:Lode status` shows for a status answer.
---@param data table  the answer of GET /api/v1/status
---@param server lode.Server
---@return string[]
function M.lines(data, server)
  local embedded = data.chunks and data.chunks > 0 and (data.chunks_embedded or 0) / data.chunks or 0
  local out = {
    ("lode %s at %s (%s): %s, %s, %s, %s embedded"):format(
      data.version or "?",
      server.url,
      server.source,
      count(#(data.projects or {}), "project"),
      count(data.documents or 0, "file"),
      count(data.chunks or 0, "chunk"),
      percent(embedded)
    ),
  }
  for _, p in ipairs(data.projects or {}) do
    local watch = type(p.watch) == "table" and p.watch.state or "off"
    out[#out + 1] = ("  %s  %s  %s, %s, semantic %s, watcher %s, %s"):format(
      p.name,
      p.root,
      count(p.files or 0, "file"),
      count(p.chunks or 0, "chunk"),
      percent(p.semantic_coverage),
      watch,
      task_text(p.current_task)
    )
  end
  local queue = {}
  for state, count in pairs(data.queue or {}) do
    queue[#queue + 1] = ("%s %d"):format(state, count)
  end
  table.sort(queue)
  out[#out + 1] = ("  queue: %s; model %s; index %s"):format(
    #queue > 0 and table.concat(queue, ", ") or "empty",
    data.model_id or "?",
    data.db or "?"
  )
  return out
end

--- Show the status in the message area (and its history).
function M.show()
  local server = config.resolve()
  http.request(server, { method = "GET", path = "/api/v1/status" }, function(res)
    if not res.ok then
      return vim.notify(res.message, vim.log.levels.WARN)
    end
    local chunks = {}
    for i, line in ipairs(M.lines(res.data, server)) do
      chunks[#chunks + 1] = { (i > 1 and "\n" or "") .. line, i == 1 and "Title" or "Normal" }
    end
    vim.api.nvim_echo(chunks, true, {})
  end)
end

return M
