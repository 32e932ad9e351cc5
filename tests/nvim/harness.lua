-- Drives Neovim as a user would, from inside it: keys go through nvim_input (the main loop
-- reads them as typed), steps wait on timers in a coroutine, and what a scenario finds is
-- written as JSON to $LODE_TEST_OUT before Neovim quits. vim.notify is recorded.
local H = { out = {}, notes = {} }

vim.notify = function(msg, level)
  H.notes[#H.notes + 1] = { msg = msg, level = level }
end

--- Wait (in the scenario's coroutine) until `cond()` is true; false after `timeout` ms.
function H.wait(cond, timeout)
  local co = coroutine.running()
  local deadline = vim.uv.now() + (timeout or 15000)
  local function poll()
    local ok, value = pcall(cond)
    if ok and value then
      coroutine.resume(co, true)
    elseif vim.uv.now() > deadline then
      coroutine.resume(co, false)
    else
      vim.defer_fn(poll, 5)
    end
  end
  vim.defer_fn(poll, 0)
  return coroutine.yield()
end

function H.must(cond, what, timeout)
  if not H.wait(cond, timeout) then
    error("timed out waiting for " .. what, 2)
  end
end

function H.sleep(ms)
  local co = coroutine.running()
  vim.defer_fn(function()
    coroutine.resume(co)
  end, ms)
  coroutine.yield()
end

--- Type `text` one key at a time, `gap` ms apart.
function H.type(text, gap)
  for i = 1, #text do
    vim.api.nvim_input(text:sub(i, i))
    H.sleep(gap or 10)
  end
end

function H.cursor()
  local pos = vim.api.nvim_win_get_cursor(0)
  return { file = vim.api.nvim_buf_get_name(0), line = pos[1], col = pos[2] }
end

function H.quickfix()
  local info = vim.fn.getqflist({ title = 1, items = 1 })
  local items = {}
  for _, item in ipairs(info.items) do
    items[#items + 1] = { file = vim.api.nvim_buf_get_name(item.bufnr), lnum = item.lnum, col = item.col, text = item.text }
  end
  return { title = info.title, items = items }
end

--- Put the cursor on the first `word` of line `lnum` of `file` (opened), on its second
--- character or `offset` bytes into it.
function H.at(file, lnum, word, offset)
  vim.cmd.edit(vim.fn.fnameescape(file))
  local line = vim.api.nvim_buf_get_lines(0, lnum - 1, lnum, false)[1]
  local col = assert(line:find(word, 1, true), word .. " not on line " .. lnum) - 1
  vim.api.nvim_win_set_cursor(0, { lnum, col + (offset or 1) })
end

function H.messages()
  return vim.api.nvim_exec2("messages", { output = true }).output
end

--- Run `fn` as a coroutine; write H.out (with the notes and any error) and quit.
function H.run(fn)
  local co = coroutine.create(function()
    local ok, err = xpcall(fn, debug.traceback)
    H.out.notes = H.notes
    H.out.error = (not ok) and tostring(err) or vim.NIL
    local fd = assert(io.open(assert(vim.env.LODE_TEST_OUT), "w"))
    fd:write(vim.json.encode(H.out))
    fd:close()
    vim.cmd("qa!")
  end)
  vim.schedule(function()
    local ok, err = coroutine.resume(co)
    if not ok then
      io.stderr:write(tostring(err))
      vim.cmd("cquit 3")
    end
  end)
end

return H
