--- `:Lode search` (chunks) and `:Lode files` (documents): lode's hybrid search as picker
--- entries, asked for through `POST /api/v1/search`.
local config = require("lode.config")
local http = require("lode.http")
local loc = require("lode.locations")

local M = {}

--- The optional pickers: the `picker` option's value -> the extra's module.
local EXTRAS = { telescope = "lode.extras.telescope", ["fzf-lua"] = "lode.extras.fzf_lua" }

local function split_lines(text)
  local trimmed = (text or ""):gsub("\n$", "")
  return vim.split(trimmed, "\n", { plain = true })
end

--- The byte ranges of a hit's `matches` (file coordinates) on its preview's lines.
local function highlights(matches, first, lines)
  local out = {}
  for _, m in ipairs(matches or {}) do
    local row = m.start.line - (first - 1)
    local text = lines[row + 1]
    if text and m["end"].line == m.start.line then
      out[#out + 1] = { row, loc.from_utf16(text, m.start.character), loc.from_utf16(text, m["end"].character) }
    end
  end
  return out
end

--- Where a chunk hit is opened: its first match (the query's word), else its first line.
local function place_of(chunk)
  local first = (chunk.matches or {})[1]
  if first then
    return { uri = chunk.uri, lnum = first.start.line + 1, utf16 = first.start.character }
  end
  return { uri = chunk.uri, lnum = chunk.start_line }
end

local function chunk_entry(chunk)
  local preview = split_lines(chunk.content)
  local name = chunk.node_name ~= "" and chunk.node_name or chunk.node_type
  return {
    display = ("%s:%d  %s"):format(chunk.file_path, chunk.start_line, name or ""),
    place = place_of(chunk),
    preview = preview,
    preview_first = chunk.start_line,
    filename = chunk.file_path,
    highlights = highlights(chunk.matches, chunk.start_line, preview),
    qf_text = ("%s %s"):format(chunk.node_type or "", name or ""),
  }
end

local function document_entry(doc)
  local top = (doc.chunks or {})[1]
  local entry = top and chunk_entry(top)
    or {
      place = { uri = doc.uri, lnum = 1 },
      preview = {},
      preview_first = 1,
      filename = doc.file_path,
      qf_text = "",
    }
  entry.display = ("%s  %s"):format(doc.file_path, doc.primary_language or "")
  entry.qf_text = doc.primary_language or ""
  return entry
end

--- Picker entries of a search answer (chunk hits in rank order, or documents).
---@param data table  the answer of POST /api/v1/search
---@return lode.Entry[]
function M.entries(data)
  local out = {}
  if data.granularity == "document" then
    for _, doc in ipairs(data.documents or {}) do
      out[#out + 1] = document_entry(doc)
    end
    return out
  end
  for _, group in ipairs(data.groups or {}) do
    for _, chunk in ipairs(group.chunks or {}) do
      out[#out + 1] = chunk_entry(chunk)
    end
  end
  return out
end

--- The body of a search request.
---@param query string
---@param granularity "chunk"|"document"
---@return table
function M.body(query, granularity)
  local o = config.options
  return { query = query, granularity = granularity, mode = o.mode, limit = o.limit, projects = o.projects }
end

--- Ask `server` for `query`; `done(entries, err, meta)`.
---@param server lode.Server
---@param query string
---@param granularity "chunk"|"document"
---@param done fun(entries: lode.Entry[]|nil, err: lode.Response|nil, meta: table|nil)
---@return lode.Request
function M.ask(server, query, granularity, done)
  return http.request(server, { method = "POST", path = "/api/v1/search", body = M.body(query, granularity) }, function(res)
    if not res.ok then
      done(nil, res)
      return
    end
    done(M.entries(res.data), nil, { took_ms = res.data.took_ms, total = res.data.total })
  end)
end

local function notify(res)
  vim.notify(res.message, vim.log.levels.WARN)
end

--- One search shown through vim.ui.select; the chosen entry is opened.
local function select(server, query, granularity)
  M.ask(server, query, granularity, function(entries, err)
    if not entries then
      notify(err)
      return
    end
    if #entries == 0 then
      vim.notify(("lode: nothing found for %q"):format(query), vim.log.levels.INFO)
      return
    end
    vim.ui.select(entries, {
      prompt = ("lode %s: %s"):format(granularity == "document" and "files" or "search", query),
      kind = "lode",
      format_item = function(entry)
        return entry.display
      end,
    }, function(choice)
      if choice then
        loc.open(choice.place)
      end
    end)
  end)
end

--- `:Lode search [query]` (granularity "chunk") and `:Lode files [query]` ("document"): with a
--- query, one search through vim.ui.select; without, the live picker (the `picker` option
--- chooses which: lode's own float, or Telescope or fzf-lua when installed; "select" asks the query
--- first, then uses vim.ui.select).
---@param query string|nil
---@param granularity "chunk"|"document"
function M.run(query, granularity)
  local server = config.resolve()
  local kind = granularity == "document" and "files" or "search"
  local picker = config.options.picker
  if (query and query ~= "") or picker == "select" then
    if query and query ~= "" then
      return select(server, query, granularity)
    end
    return vim.ui.input({ prompt = "lode " .. kind .. ": " }, function(input)
      if input and input ~= "" then
        select(server, input, granularity)
      end
    end)
  end
  local spec = {
    title = "lode " .. kind,
    kind = kind,
    debounce_ms = config.options.debounce_ms,
    source = function(q, done)
      return M.ask(server, q, granularity, done)
    end,
    on_error = notify,
  }
  local extra_module = EXTRAS[picker]
  if extra_module then
    local extra = require(extra_module)
    if extra.available() then
      return extra.open(spec)
    end
    vim.notify(("lode: %s is not installed; using lode's own picker"):format(picker), vim.log.levels.WARN)
  end
  require("lode.picker").open(spec)
end

return M
