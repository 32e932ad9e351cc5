--- Positions as lode sends them (LSP's: 0-based lines, UTF-16 columns) to Neovim's (1-based
--- lines, byte columns), opening a file at a place, and the quickfix list.
local M = {}

local function char_length(byte)
  if byte < 0x80 or byte >= 0xF8 or (byte >= 0x80 and byte < 0xC0) then
    return 1
  end
  return byte < 0xE0 and 2 or byte < 0xF0 and 3 or 4
end

--- UTF-16 code units in the first `byte_col` bytes of `line`.
---@param line string
---@param byte_col integer 0-based byte offset
---@return integer
function M.to_utf16(line, byte_col)
  local units, i = 0, 1
  while i - 1 < byte_col and i <= #line do
    local len = char_length(line:byte(i))
    units = units + (len == 4 and 2 or 1)
    i = i + len
  end
  return units
end

--- The byte offset in `line` of UTF-16 column `units` (the line's end when past it).
---@param line string
---@param units integer
---@return integer 0-based byte offset
function M.from_utf16(line, units)
  local seen, i = 0, 1
  while seen < units and i <= #line do
    local len = char_length(line:byte(i))
    seen = seen + (len == 4 and 2 or 1)
    i = i + len
  end
  return math.min(i - 1, #line)
end

--- Line `lnum` (1-based) of a file: from its buffer when loaded, else from disk; reads are
--- kept in `cache` (one table per quickfix list being built).
---@param fname string
---@param lnum integer
---@param cache table|nil
---@return string
function M.file_line(fname, lnum, cache)
  cache = cache or {}
  local lines = cache[fname]
  if lines == nil then
    local bufnr = vim.fn.bufnr(fname)
    if bufnr > 0 and vim.api.nvim_buf_is_loaded(bufnr) then
      lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    else
      local ok, read = pcall(vim.fn.readfile, fname)
      lines = ok and read or {}
    end
    cache[fname] = lines
  end
  return lines[lnum] or ""
end

---@class lode.Place
---@field uri string         the file's file:// URI
---@field lnum integer       1-based line
---@field utf16 integer|nil  UTF-16 column (LSP), or
---@field name string|nil    put the cursor on this name's first use on the line

--- The 0-based byte column of a place on its line's text.
local function byte_col(place, text)
  if place.utf16 then
    return M.from_utf16(text, place.utf16)
  end
  if place.name and place.name ~= "" then
    -- the name as a whole word first (`get` in `def get_all(): return get()` is the last
    -- one), then anywhere (a name with other characters than word ones)
    local word = "%f[%w_]" .. vim.pesc(place.name) .. "%f[^%w_]"
    local at = text:find(word) or text:find(place.name, 1, true)
    if at then
      return at - 1
    end
  end
  return (text:find("%S") or 1) - 1
end

--- Open a place in the current window (adding the jump to the jumplist).
---@param place lode.Place
function M.open(place)
  local fname = vim.uri_to_fname(place.uri)
  local bufnr = vim.uri_to_bufnr(place.uri)
  vim.cmd("normal! m'")
  vim.bo[bufnr].buflisted = true
  vim.api.nvim_win_set_buf(0, bufnr)
  local count = vim.api.nvim_buf_line_count(bufnr)
  local lnum = math.max(1, math.min(place.lnum, count))
  local text = vim.api.nvim_buf_get_lines(bufnr, lnum - 1, lnum, false)[1] or M.file_line(fname, lnum)
  vim.api.nvim_win_set_cursor(0, { lnum, byte_col(place, text) })
  pcall(vim.cmd, "normal! zv")
end

--- A quickfix item for a place, `text` shown beside it.
---@param place lode.Place
---@param text string
---@param cache table  file lines read so far (see file_line)
---@return table
function M.qf_item(place, text, cache)
  local fname = vim.uri_to_fname(place.uri)
  local line = M.file_line(fname, place.lnum, cache)
  return { filename = fname, lnum = place.lnum, col = byte_col(place, line) + 1, text = text }
end

--- "1 place", "2 places".
---@param count integer
---@param noun string
---@return string
function M.count(count, noun)
  return ("%d %s%s"):format(count, noun, count == 1 and "" or "s")
end

--- Fill the quickfix list and open its window.
---@param title string
---@param items table[]
function M.set_quickfix(title, items)
  vim.fn.setqflist({}, " ", { title = title, items = items })
  vim.cmd("botright copen")
end

return M
