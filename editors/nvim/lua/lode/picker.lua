--- lode's own live picker: a prompt, a result list and a preview in floating windows. Each
--- keystroke restarts a debounce timer; when it fires, the request still running (if any) is
--- cancelled and the prompt's text is asked for. Only the latest answer is drawn.
---
--- Keys (prompt, insert mode): <CR> open, <C-n>/<Down>/<Tab> next, <C-p>/<Up>/<S-Tab> previous,
--- <C-q> all results to the quickfix list, <Esc>/<C-c> close. In normal mode: <CR>, j/k, q, <Esc>.
local timing = require("lode.timing")

local M = {}

local NS = vim.api.nvim_create_namespace("lode_picker")

---@class lode.Entry
---@field display string       the list's line
---@field place lode.Place     where <CR> goes
---@field preview string[]     the preview's lines
---@field preview_first integer the file line (1-based) of the preview's first line
---@field filename string      for the preview's filetype
---@field highlights table[]|nil {line (0-based in preview), start byte, end byte}
---@field qf_text string       the quickfix list's text

---@class lode.PickerSpec
---@field title string
---@field kind string           the timing records' kind ("search", "files")
---@field query string|nil      the prompt's first text
---@field debounce_ms integer
---@field source fun(query: string, done: fun(entries: lode.Entry[]|nil, err: lode.Response|nil, meta: table|nil)): lode.Request
---@field on_error fun(res: lode.Response)  told once a picker about a failure

---@type table|nil the open picker (one at a time)
local current = nil

local function layout()
  local columns, lines = vim.o.columns, vim.o.lines - vim.o.cmdheight
  local width = math.max(40, math.floor(columns * 0.9))
  local height = math.max(8, math.floor(lines * 0.8))
  local row = math.max(0, math.floor((lines - height) / 2) - 1)
  local col = math.max(0, math.floor((columns - width) / 2))
  local list_width = math.floor(width * 0.45)
  return {
    prompt = { row = row, col = col, width = list_width, height = 1 },
    list = { row = row + 3, col = col, width = list_width, height = math.max(1, height - 5) },
    preview = { row = row, col = col + list_width + 2, width = math.max(10, width - list_width - 4), height = height - 2 },
  }
end

local function float(buf, box, title, enter)
  return vim.api.nvim_open_win(buf, enter, {
    relative = "editor",
    row = box.row,
    col = box.col,
    width = box.width,
    height = box.height,
    style = "minimal",
    border = "rounded",
    title = " " .. title .. " ",
    title_pos = "left",
    zindex = 60,
  })
end

local function scratch()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  return buf
end

local function set_lines(buf, lines)
  if vim.api.nvim_buf_is_valid(buf) then
    vim.bo[buf].modifiable = true
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.bo[buf].modifiable = false
  end
end

local function draw_preview(p)
  local entry = p.entries[p.selected]
  if not entry then
    set_lines(p.preview_buf, {})
    return
  end
  set_lines(p.preview_buf, entry.preview)
  vim.api.nvim_buf_clear_namespace(p.preview_buf, NS, 0, -1)
  for _, h in ipairs(entry.highlights or {}) do
    pcall(vim.api.nvim_buf_set_extmark, p.preview_buf, NS, h[1], h[2], { end_col = h[3], hl_group = "Search" })
  end
  -- syntax only: a filetype would run its ftplugin (python's probes for a Python provider,
  -- seconds on the first file), which a preview does not need
  local ft = vim.filetype.match({ filename = entry.filename }) or ""
  if vim.bo[p.preview_buf].syntax ~= ft then
    vim.bo[p.preview_buf].syntax = ft
  end
  local target = math.max(1, entry.place.lnum - entry.preview_first + 1)
  if vim.api.nvim_win_is_valid(p.preview_win) then
    vim.w[p.preview_win].lode_first = entry.preview_first -- the file's line numbers (statuscolumn)
    pcall(vim.api.nvim_win_set_cursor, p.preview_win, { math.min(target, #entry.preview), 0 })
    vim.api.nvim_win_set_config(p.preview_win, { title = " " .. entry.filename .. " ", title_pos = "left" })
  end
end

local function select(p, index)
  if #p.entries == 0 then
    return
  end
  p.selected = ((index - 1) % #p.entries) + 1
  if vim.api.nvim_win_is_valid(p.list_win) then
    vim.api.nvim_win_set_cursor(p.list_win, { p.selected, 0 })
  end
  draw_preview(p)
end

local function draw(p, entries, message)
  p.entries = entries
  p.selected = 1
  local lines = {}
  for i, entry in ipairs(entries) do
    lines[i] = entry.display
  end
  if #lines == 0 then
    lines = { message or (p.query == "" and "" or "no results") }
  end
  set_lines(p.list_buf, lines)
  if vim.api.nvim_win_is_valid(p.list_win) then
    vim.api.nvim_win_set_cursor(p.list_win, { 1, 0 })
  end
end

--- Close the open picker, if any.
function M.close()
  local p = current
  if not p then
    return
  end
  current = nil
  p.closed = true
  if p.timer then
    p.timer:stop()
    p.timer:close()
  end
  if p.inflight then
    p.inflight.cancel()
  end
  for _, win in ipairs({ p.prompt_win, p.list_win, p.preview_win }) do
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_close(win, true)
    end
  end
  vim.cmd("stopinsert")
  if p.origin and vim.api.nvim_win_is_valid(p.origin) then
    vim.api.nvim_set_current_win(p.origin)
  end
end

local function run(p)
  if p.closed then
    return
  end
  local query = vim.trim(vim.api.nvim_buf_get_lines(p.prompt_buf, 0, 1, false)[1] or "")
  if p.seq > 0 and query == p.query then
    return -- a space typed: the same query, asked or answered already
  end
  if p.inflight then
    p.inflight.cancel()
    p.inflight = nil
    p.superseded = p.superseded + 1
  end
  p.query = query
  p.seq = p.seq + 1
  local seq, keystroke, sent = p.seq, p.keystroke, vim.uv.hrtime()
  if query == "" then
    draw(p, {})
    draw_preview(p)
    return
  end
  p.inflight = p.spec.source(query, function(entries, err, meta)
    if p.closed or seq ~= p.seq then
      return
    end
    p.inflight = nil
    local received = vim.uv.hrtime()
    if not entries then
      draw(p, {}, err and err.message or "lode: the search failed")
      if not p.told and err then
        p.told = true
        p.spec.on_error(err)
      end
      return
    end
    draw(p, entries)
    local listed = vim.uv.hrtime()
    draw_preview(p)
    timing.add(p.spec.kind, {
      query = query,
      results = #entries,
      debounce_ms = p.spec.debounce_ms,
      keystroke_to_results_ms = timing.ms(keystroke, listed),
      keystroke_to_preview_ms = timing.ms(keystroke),
      request_ms = timing.ms(sent, received),
      server_ms = meta and meta.took_ms or nil,
    })
    p.results_seq = seq
  end)
end

local function on_change(p)
  p.keystroke = vim.uv.hrtime()
  p.timer:stop()
  p.timer:start(p.spec.debounce_ms, 0, function()
    vim.schedule(function()
      run(p)
    end)
  end)
end

local function choose(p)
  local entry = p.entries[p.selected]
  M.close()
  if entry then
    -- after Insert mode is left (leaving it moves the cursor one column left)
    vim.schedule(function()
      require("lode.locations").open(entry.place)
    end)
  end
end

local function to_quickfix(p)
  local entries = p.entries
  M.close()
  vim.schedule(function()
    M.fill_quickfix(p.query, entries)
  end)
end

--- The entries of a query into the quickfix list.
---@param query string
---@param entries lode.Entry[]
function M.fill_quickfix(query, entries)
  local loc, cache, items = require("lode.locations"), {}, {}
  for _, entry in ipairs(entries) do
    items[#items + 1] = loc.qf_item(entry.place, entry.qf_text, cache)
  end
  loc.set_quickfix(("lode: %s"):format(query), items)
end

local function map(p)
  local buf = p.prompt_buf
  local function both(lhs, fn)
    vim.keymap.set({ "i", "n" }, lhs, fn, { buffer = buf, nowait = true })
  end
  local function next()
    select(p, p.selected + 1)
  end
  local function prev()
    select(p, p.selected - 1)
  end
  both("<CR>", function()
    choose(p)
  end)
  both("<C-n>", next)
  both("<Down>", next)
  both("<Tab>", next)
  both("<C-p>", prev)
  both("<Up>", prev)
  both("<S-Tab>", prev)
  both("<C-q>", function()
    to_quickfix(p)
  end)
  both("<C-c>", M.close)
  vim.keymap.set("i", "<Esc>", M.close, { buffer = buf, nowait = true })
  vim.keymap.set("n", "<Esc>", M.close, { buffer = buf, nowait = true })
  vim.keymap.set("n", "q", M.close, { buffer = buf, nowait = true })
  vim.keymap.set("n", "j", next, { buffer = buf, nowait = true })
  vim.keymap.set("n", "k", prev, { buffer = buf, nowait = true })
end

--- Open a live picker (closing one already open).
---@param spec lode.PickerSpec
function M.open(spec)
  M.close()
  local box = layout()
  local p = {
    spec = spec,
    entries = {},
    selected = 1,
    seq = 0,
    superseded = 0,
    query = "",
    origin = vim.api.nvim_get_current_win(),
    timer = vim.uv.new_timer(),
    keystroke = vim.uv.hrtime(),
  }
  p.list_buf, p.preview_buf, p.prompt_buf = scratch(), scratch(), scratch()
  vim.bo[p.list_buf].modifiable = false
  vim.bo[p.preview_buf].modifiable = false
  p.list_win = float(p.list_buf, box.list, "results", false)
  p.preview_win = float(p.preview_buf, box.preview, "preview", false)
  p.prompt_win = float(p.prompt_buf, box.prompt, spec.title, true)
  vim.wo[p.list_win].cursorline = true
  vim.wo[p.preview_win].cursorline = true
  vim.wo[p.preview_win].wrap = false
  vim.wo[p.preview_win].number = true
  vim.w[p.preview_win].lode_first = 1
  vim.wo[p.preview_win].statuscolumn = "%=%{v:lnum + w:lode_first - 1} "
  current = p
  map(p)
  vim.api.nvim_create_autocmd("WinLeave", {
    buffer = p.prompt_buf,
    once = true,
    callback = function()
      vim.schedule(function()
        if current == p then
          M.close()
        end
      end)
    end,
  })
  if spec.query and spec.query ~= "" then
    vim.api.nvim_buf_set_lines(p.prompt_buf, 0, -1, false, { spec.query })
  end
  vim.api.nvim_buf_attach(p.prompt_buf, false, {
    on_lines = function()
      if p.closed then
        return true
      end
      on_change(p)
    end,
  })
  vim.cmd("startinsert!")
  if spec.query and spec.query ~= "" then
    on_change(p)
  end
end

--- The open picker's state, for tests and benchmarks: its query, its entries, the lines of
--- its list and preview, the selected line; nil when none is open.
--- `asked` counts the queries sent, `answered` is the number of the last one drawn, `superseded`
--- the requests cancelled by a later keystroke before their answer.
---@return {query: string, items: string[], list: string[], preview: string[], selected: integer, answered: integer, asked: integer, superseded: integer}|nil
function M.state()
  local p = current
  if not p then
    return nil
  end
  return {
    query = p.query,
    items = vim.tbl_map(function(e)
      return e.display
    end, p.entries),
    list = vim.api.nvim_buf_get_lines(p.list_buf, 0, -1, false),
    preview = vim.api.nvim_buf_get_lines(p.preview_buf, 0, -1, false),
    selected = p.selected,
    answered = p.results_seq or 0,
    asked = p.seq,
    superseded = p.superseded,
  }
end

return M
