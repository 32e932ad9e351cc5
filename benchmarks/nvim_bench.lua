-- The Neovim side of benchmarks/bench_nvim.py: types each query of $LODE_BENCH_PLAN into
-- lode.nvim's live picker one key at a time (through nvim_input, as typed keys), then runs
-- `:Lode def` at each sampled position; writes the plugin's own timing records and what went
-- wrong to $LODE_BENCH_OUT, and quits.
local function read(path)
  local fd = assert(io.open(path, "r"))
  local text = fd:read("*a")
  fd:close()
  return text
end

local plan = vim.json.decode(read(assert(vim.env.LODE_BENCH_PLAN)))
local notes = {}
vim.notify = function(msg)
  notes[#notes + 1] = msg
end

local co

local function sleep(ms)
  vim.defer_fn(function()
    coroutine.resume(co)
  end, ms)
  coroutine.yield()
end

local function wait(cond, timeout)
  local deadline = vim.uv.now() + timeout
  while vim.uv.now() < deadline do
    local ok, value = pcall(cond)
    if ok and value then
      return true
    end
    sleep(2)
  end
  return false
end

local function type_query(query)
  vim.api.nvim_input("<C-u>")
  sleep(plan.gap_ms)
  for i = 1, #query do
    vim.api.nvim_input((query:sub(i, i):gsub("<", "<lt>")))
    sleep(plan.gap_ms)
  end
end

local function searches(out)
  local lode, picker = require("lode"), require("lode.picker")
  vim.cmd("Lode search")
  assert(wait(function()
    return picker.state() ~= nil and vim.api.nvim_get_mode().mode == "i"
  end, 5000), "the picker did not open")
  out.unsettled = {}
  for i, query in ipairs(plan.queries) do
    if i == plan.warmup + 1 then
      lode.clear_timings()
      out.superseded_before = picker.state().superseded
    end
    type_query(query)
    local settled = wait(function()
      local state = picker.state()
      return state.query == vim.trim(query) and state.answered == state.asked
    end, plan.timeout_ms)
    if not settled then
      out.unsettled[#out.unsettled + 1] = query
    end
    sleep(plan.pause_ms)
  end
  out.superseded = picker.state().superseded - (out.superseded_before or 0)
  out.search = lode.timings("search")
  vim.api.nvim_input("<Esc>")
  assert(wait(function()
    return picker.state() == nil
  end, 5000), "the picker did not close")
end

local function definitions(out)
  local lode, loc = require("lode"), require("lode.locations")
  lode.clear_timings()
  out.def_failed = {}
  for _, pos in ipairs(plan.positions) do
    vim.cmd("silent! cclose | silent! only | silent! %bwipeout!")
    vim.cmd.edit(vim.fn.fnameescape(vim.uri_to_fname(pos.path)))
    local text = vim.api.nvim_buf_get_lines(0, pos.line, pos.line + 1, false)[1] or ""
    vim.api.nvim_win_set_cursor(0, { pos.line + 1, loc.from_utf16(text, pos.column) })
    local before, told = #lode.timings("def"), #notes
    vim.cmd("Lode def")
    local done = wait(function()
      return #lode.timings("def") > before or #notes > told
    end, plan.timeout_ms)
    if not done or #notes > told then
      out.def_failed[#out.def_failed + 1] = { pos = pos, note = notes[#notes] }
    end
  end
  out.def = lode.timings("def")
end

co = coroutine.create(function()
  local out = {}
  local ok, err = xpcall(function()
    require("lode").setup({ debounce_ms = plan.debounce_ms, limit = plan.limit })
    searches(out)
    definitions(out)
  end, debug.traceback)
  out.error = (not ok) and tostring(err) or vim.NIL
  out.notes = notes
  local fd = assert(io.open(assert(vim.env.LODE_BENCH_OUT), "w"))
  fd:write(vim.json.encode(out))
  fd:close()
  vim.cmd("qa!")
end)
vim.schedule(function()
  coroutine.resume(co)
end)
