--- The plugin's own latency records, kept per query in memory (the last 10,000), so a
--- benchmark or a curious user can read them: `require("lode").timings()`.
---
--- A "search" or "files" record is one query of the live picker: `keystroke_to_results_ms` is
--- from the keystroke that made the query (its text change) to the results drawn in the list
--- (the debounce wait included), `keystroke_to_preview_ms` to the first result's preview drawn,
--- `request_ms` curl's round trip, `server_ms` the server's own `took_ms`. A "def" or "refs"
--- record is one command: `ms` from the command to the cursor moved or the quickfix list filled.
local M = {}

local MAX = 10000
local records = {}

--- Milliseconds between two `vim.uv.hrtime()` readings.
---@param from integer
---@param to integer|nil  default: now
---@return number
function M.ms(from, to)
  return ((to or vim.uv.hrtime()) - from) / 1e6
end

--- Keep one record of `kind`.
---@param kind string
---@param record table
function M.add(kind, record)
  record.kind = kind
  records[#records + 1] = record
  if #records > MAX then
    table.remove(records, 1)
  end
end

--- Copies of the records, of one kind or all.
---@param kind string|nil
---@return table[]
function M.list(kind)
  local out = {}
  for _, r in ipairs(records) do
    if kind == nil or r.kind == kind then
      out[#out + 1] = vim.deepcopy(r)
    end
  end
  return out
end

--- Forget every record.
function M.clear()
  records = {}
end

--- Nearest-rank percentile `p` (0..1) of a list of numbers.
---@param values number[]
---@param p number
---@return number|nil
function M.percentile(values, p)
  if #values == 0 then
    return nil
  end
  local sorted = vim.deepcopy(values)
  table.sort(sorted)
  return sorted[math.max(1, math.ceil(p * #sorted))]
end

--- p50 and p95 of a field over the records of one kind.
---@param kind string
---@param field string
---@return {count: integer, p50: number|nil, p95: number|nil}
function M.summary(kind, field)
  local values = {}
  for _, r in ipairs(records) do
    if r.kind == kind and type(r[field]) == "number" then
      values[#values + 1] = r[field]
    end
  end
  return { count = #values, p50 = M.percentile(values, 0.5), p95 = M.percentile(values, 0.95) }
end

return M
