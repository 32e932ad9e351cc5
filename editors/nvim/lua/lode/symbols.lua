--- `:Lode def` and `:Lode refs`: the identifier under the cursor as lode's index sees it
--- (`GET /api/v1/symbols/at`), its definitions (one: jump; several: the quickfix list) and
--- the lines using it (`GET /api/v1/symbols/references`, into the quickfix list).
local config = require("lode.config")
local http = require("lode.http")
local loc = require("lode.locations")
local timing = require("lode.timing")

local M = {}

local function warn(message)
  vim.notify(message, vim.log.levels.WARN)
end

--- The request for the symbol at the cursor of the current window; nil and a message when
--- the buffer is no file.
---@return table|nil, string|nil
function M.position_query()
  local name = vim.api.nvim_buf_get_name(0)
  if name == "" or vim.bo.buftype ~= "" then
    return nil, "lode: this buffer is not a file"
  end
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local line = vim.api.nvim_get_current_line()
  return {
    path = vim.uri_from_fname(vim.fn.fnamemodify(name, ":p")),
    line = row - 1,
    column = loc.to_utf16(line, col),
  }
end

--- Ask for the symbol under the cursor; `done(answer)` with lode's answer when there is an
--- identifier there (otherwise one line is shown).
local function symbol_at(server, done)
  local query, problem = M.position_query()
  if not query then
    return warn(problem)
  end
  http.request(server, { method = "GET", path = "/api/v1/symbols/at", query = query }, function(res)
    if not res.ok then
      return warn(res.message)
    end
    if (res.data.name or "") == "" then
      return warn("lode: no identifier under the cursor")
    end
    done(res.data, query, res.ms)
  end)
end

local function definition_place(def, name)
  return { uri = def.uri, lnum = def.start_line, name = name }
end

local function definition_text(def)
  local text = def.signature ~= "" and def.signature or def.qualified_name
  return ("[%s] %s"):format(def.kind or "", text or "")
end

--- `:Lode def`: jump to the definition of the name under the cursor; several go to the
--- quickfix list, nearest first.
function M.definition()
  local started = vim.uv.hrtime()
  local server = config.resolve()
  symbol_at(server, function(at, _, request_ms)
    local defs = at.definitions or {}
    if #defs == 0 then
      return warn(("lode: no definition of %s in the index"):format(at.name))
    end
    if #defs == 1 then
      loc.open(definition_place(defs[1], at.name))
    else
      local cache, items = {}, {}
      for _, def in ipairs(defs) do
        items[#items + 1] = loc.qf_item(definition_place(def, at.name), definition_text(def), cache)
      end
      local more = at.truncated and (", first %d"):format(#defs) or ""
      loc.set_quickfix(("lode: %s of %s%s"):format(loc.count(at.total or #defs, "definition"), at.name, more), items)
    end
    timing.add("def", { name = at.name, definitions = #defs, request_ms = request_ms, ms = timing.ms(started) })
  end)
end

local function reference_items(answer)
  local cache, items = {}, {}
  for _, caller in ipairs(answer.callers or {}) do
    local where = caller.container ~= "" and (caller.container .. ": ") or ""
    for _, site in ipairs(caller.sites or {}) do
      local range = (site.ranges or {})[1]
      local place = { uri = caller.uri, lnum = site.line, utf16 = range and range.start.character or nil }
      if not range then
        place.name = answer.name
      end
      items[#items + 1] = loc.qf_item(place, where .. vim.trim(site.text or ""), cache)
    end
  end
  return items
end

--- `:Lode refs`: every line using the name under the cursor, in its file's project, into the
--- quickfix list (callers nearest to this file first).
function M.references()
  local started = vim.uv.hrtime()
  local server = config.resolve()
  symbol_at(server, function(at, query)
    local req = {
      method = "GET",
      path = "/api/v1/symbols/references",
      query = { name = at.name, from_path = query.path, project = at.project_id },
    }
    http.request(server, req, function(res)
      if not res.ok then
        return warn(res.message)
      end
      local items = reference_items(res.data)
      if #items == 0 then
        return warn(("lode: no references to %s in the index"):format(at.name))
      end
      local more = res.data.truncated and " (truncated)" or ""
      local title = ("lode: %s to %s in %s%s"):format(
        loc.count(res.data.total_sites or #items, "reference"),
        at.name,
        loc.count(res.data.total_callers or 0, "place"),
        more
      )
      loc.set_quickfix(title, items)
      timing.add("refs", { name = at.name, sites = #items, ms = timing.ms(started) })
    end)
  end)
end

return M
