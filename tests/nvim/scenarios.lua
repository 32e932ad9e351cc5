-- The scenarios of tests/test_nvim.py: $LODE_TEST_SCENARIO names one; $LODE_TEST_REPO is
-- the indexed fixture repository. Each fills H.out with what it saw.
local H = dofile(vim.env.LODE_NVIM_TESTS .. "/harness.lua")
local repo = vim.env.LODE_TEST_REPO
local S = {}

local function picker_settled(query)
  local state = require("lode.picker").state()
  return state and state.query == query and state.answered == state.asked and state.answered > 0
end

--- Capture vim.ui.select's items and choose the first.
local function capture_select()
  local seen = {}
  vim.ui.select = function(items, opts, on_choice)
    seen.prompt = opts.prompt
    seen.items = vim.tbl_map(opts.format_item, items)
    on_choice(items[1], 1)
  end
  return seen
end

function S.picker()
  vim.cmd("Lode search")
  H.must(function()
    return require("lode.picker").state() ~= nil and vim.api.nvim_get_mode().mode == "i"
  end, "the picker")
  H.type("apply discount", 5)
  H.must(function()
    return picker_settled("apply discount")
  end, "the results")
  local state = require("lode.picker").state()
  H.out.items = state.items
  H.out.preview = state.preview
  H.out.asked = state.asked
  H.out.timings = require("lode").timings("search")
  -- a trailing space makes the same query: not asked again
  H.type(" ", 0)
  H.sleep(150)
  H.out.asked_after_space = require("lode.picker").state().asked
  -- the second result, then back to the first: the preview follows the selection
  vim.api.nvim_input("<C-n>")
  H.must(function()
    return require("lode.picker").state().selected == 2
  end, "the second result")
  H.out.second_preview = require("lode.picker").state().preview
  vim.api.nvim_input("<C-p><CR>")
  H.must(function()
    return require("lode.picker").state() == nil and vim.api.nvim_buf_get_name(0) ~= ""
  end, "the jump")
  H.out.cursor = H.cursor()
  H.out.mode = vim.api.nvim_get_mode().mode
  H.out.windows = #vim.api.nvim_list_wins()
end

function S.select()
  local seen = capture_select()
  vim.cmd("Lode search apply discount")
  H.must(function()
    return vim.api.nvim_buf_get_name(0) ~= ""
  end, "the jump")
  H.out.select = seen
  H.out.cursor = H.cursor()
end

function S.files()
  local seen = capture_select()
  vim.cmd("Lode files shopping cart items")
  H.must(function()
    return vim.api.nvim_buf_get_name(0) ~= ""
  end, "the jump")
  H.out.select = seen
  H.out.cursor = H.cursor()
  -- and the live picker at document granularity
  vim.cmd("Lode files")
  H.must(function()
    return require("lode.picker").state() ~= nil and vim.api.nvim_get_mode().mode == "i"
  end, "the picker")
  H.type("discount", 5)
  H.must(function()
    return picker_settled("discount")
  end, "the results")
  H.out.live_items = require("lode.picker").state().items
  H.out.timings = require("lode").timings("files")
  vim.api.nvim_input("<C-q>")
  H.must(function()
    return require("lode.picker").state() == nil and vim.fn.getqflist({ title = 1 }).title == "lode: discount"
  end, "the quickfix list")
  H.out.quickfix = H.quickfix()
end

function S.def()
  H.at(repo .. "/src/shop/cart.py", 38, "apply_discount")
  vim.cmd("Lode def")
  H.must(function()
    return vim.api.nvim_buf_get_name(0):match("pricing%.py$")
  end, "the jump")
  H.out.cursor = H.cursor()
  H.out.jumped_back = (function()
    vim.cmd([[execute "normal! \<C-o>"]])
    return H.cursor()
  end)()
  -- a name with two definitions: the quickfix list
  H.at(repo .. "/src/shop/pricing.py", 13, "add_tax")
  vim.cmd("Lode def")
  H.must(function()
    return vim.fn.getqflist({ title = 1 }).title:match("definitions")
  end, "the quickfix list")
  H.out.several = H.quickfix()
  -- no identifier under the cursor
  H.at(repo .. "/src/shop/pricing.py", 2, "")
  vim.cmd("Lode def")
  H.must(function()
    return #H.notes > 0
  end, "the message")
  H.out.timings = require("lode").timings("def")
end

function S.refs()
  H.at(repo .. "/src/shop/pricing.py", 6, "apply_discount")
  vim.cmd("Lode refs")
  H.must(function()
    return vim.fn.getqflist({ title = 1 }).title:match("reference")
  end, "the quickfix list")
  H.out.quickfix = H.quickfix()
  H.out.qf_open = vim.bo.buftype == "quickfix"
  H.out.timings = require("lode").timings("refs")
end

function S.status()
  vim.cmd("Lode status")
  H.must(function()
    return H.messages():match("lode ")
  end, "the status")
  H.out.messages = H.messages()
  H.out.server = require("lode").server()
end

function S.health()
  vim.cmd("checkhealth lode")
  H.out.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
end

function S.no_server()
  vim.cmd("Lode status")
  H.must(function()
    return #H.notes >= 1
  end, "the message")
  H.sleep(50)
  H.out.status_notes = #H.notes
  vim.cmd("Lode search anything")
  H.must(function()
    return #H.notes >= 2
  end, "the message")
  vim.cmd("Lode search")
  H.must(function()
    return require("lode.picker").state() ~= nil and vim.api.nvim_get_mode().mode == "i"
  end, "the picker")
  H.type("abc", 60) -- three queries, one message
  H.must(function()
    return #H.notes >= 3 and require("lode.picker").state().asked >= 2
  end, "the picker's message")
  H.sleep(100)
  H.out.picker_list = require("lode.picker").state().list
  vim.api.nvim_input("<Esc>")
  H.at(repo .. "/src/shop/cart.py", 38, "apply_discount")
  vim.cmd("Lode def")
  H.must(function()
    return #H.notes >= 4
  end, "the message")
  vim.cmd("checkhealth lode")
  H.out.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  H.out.server = require("lode").server()
end

function S.server()
  H.out.server = require("lode").server()
  vim.cmd("Lode status")
  H.must(function()
    return #H.notes > 0 or H.messages():match("lode ")
  end, "the status")
  H.out.messages = H.messages()
end

function S.telescope()
  require("lode").setup({ picker = "telescope" })
  vim.cmd("Lode search")
  H.must(function()
    return vim.bo.filetype == "TelescopePrompt" and vim.api.nvim_get_mode().mode == "i"
  end, "Telescope")
  local prompt = vim.api.nvim_get_current_buf()
  H.type("apply discount", 5)
  local state = require("telescope.actions.state")
  H.must(function()
    local picker = state.get_current_picker(prompt)
    return picker.manager and picker.manager:num_results() == 30
  end, "Telescope's results")
  H.sleep(100)
  local items = {}
  for entry in state.get_current_picker(prompt).manager:iter() do
    items[#items + 1] = entry.display
  end
  H.out.items = items
  H.out.selected = state.get_selected_entry().display
  vim.api.nvim_input("<CR>")
  H.must(function()
    return vim.bo.filetype ~= "TelescopePrompt" and vim.api.nvim_buf_get_name(0) ~= ""
  end, "the jump")
  H.out.cursor = H.cursor()
end

function S.fzf_lua()
  require("lode").setup({ picker = "fzf-lua" })
  vim.o.lines = 80 -- room for all 30 results above the preview
  -- which queries lode answered (fzf's screen is what the user sees; this says when to look)
  local search, answered = require("lode.search"), {}
  local ask = search.ask
  search.ask = function(server, query, granularity, done)
    return ask(server, query, granularity, function(...)
      answered[#answered + 1] = query
      done(...)
    end)
  end
  vim.cmd("Lode search")
  H.must(function()
    return vim.bo.buftype == "terminal" and vim.bo.filetype == "fzf"
  end, "fzf-lua")
  local term = vim.api.nvim_get_current_buf()
  local function screen()
    return vim.api.nvim_buf_get_lines(term, 0, -1, false)
  end
  H.type("apply discount", 5)
  H.must(function()
    return answered[#answered] == "apply discount" and table.concat(screen(), "\n"):find(" 30/30 ", 1, true)
  end, "fzf's results", 15000)
  H.sleep(300)
  H.out.answered = answered
  H.out.screen = screen()
  vim.api.nvim_input("<CR>")
  H.must(function()
    return vim.bo.buftype == "" and vim.api.nvim_buf_get_name(0) ~= ""
  end, "the jump")
  H.out.cursor = H.cursor()
  H.out.term_open = vim.api.nvim_buf_is_valid(term) and #vim.fn.win_findbuf(term) > 0
end

function S.units()
  local loc, socket = require("lode.locations"), require("lode.socket")
  local line = vim.env.LODE_TEST_LINE
  local to, from = {}, {}
  for byte = 0, #line do
    to[#to + 1] = loc.to_utf16(line, byte)
  end
  for units = 0, loc.to_utf16(line, #line) + 2 do
    from[#from + 1] = loc.from_utf16(line, units)
  end
  H.out.to_utf16, H.out.from_utf16 = to, from
  -- a definition's name on its line: as a whole word first, then anywhere
  local fname = "/tmp/lode-units.py"
  local cache = { [fname] = { "def forget_get(get): return get", "x = a.b-c + 1", "@property" } }
  local uri = vim.uri_from_fname(fname)
  H.out.name_cols = {
    loc.qf_item({ uri = uri, lnum = 1, name = "get" }, "", cache).col,
    loc.qf_item({ uri = uri, lnum = 2, name = "b-c" }, "", cache).col,
    loc.qf_item({ uri = uri, lnum = 3, name = "absent" }, "", cache).col,
  }
  local function answer(raw, eof)
    local status, body = socket.parse_answer(raw, eof)
    return { status = status or vim.NIL, body = body or vim.NIL }
  end
  local chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\n\r\n"
  H.out.answers = {
    chunked = answer(chunked, false),
    chunked_part = answer(chunked:sub(1, 60), false),
    length = answer("HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\nX: y\r\n\r\n{}", false),
    length_part = answer("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n{}", false),
    eof = answer("HTTP/1.0 200 OK\r\n\r\n[1]", true),
    head_part = answer("HTTP/1.1 200 OK\r\nContent-", false),
  }
  H.out.urls = {
    socket.parse_url("http://127.0.0.1:7370"),
    socket.parse_url("http://[::1]:8080/lode/"),
    socket.parse_url("http://localhost"),
    socket.parse_url("https://example.com") or vim.NIL,
  }
  H.out.query = require("lode.http").query_string({ name = "a b&c", kind = { "function", "method" } })
  -- every module loads (the optional Telescope and fzf-lua ones too, without either)
  local modules = {}
  for _, file in ipairs(vim.fn.globpath(vim.env.LODE_NVIM_PLUGIN .. "/lua", "**/*.lua", false, true)) do
    local name = file:match("/lua/(.+)%.lua$"):gsub("/init$", ""):gsub("/", ".")
    local loaded, problem = pcall(require, name)
    modules[name] = loaded or tostring(problem)
  end
  H.out.modules = modules
  H.out.telescope_available = require("lode.extras.telescope").available()
  H.out.fzf_lua_available = require("lode.extras.fzf_lua").available()
  H.out.completion = vim.fn.getcompletion("Lode ", "cmdline")
  H.out.completion_s = vim.fn.getcompletion("Lode s", "cmdline")
  vim.cmd("Lode nope")
  vim.cmd("Lode")
  local ok, err = pcall(require("lode").setup, { debounce_ms = "fast" })
  H.out.setup_error = not ok and err or vim.NIL
end

function S.help()
  local dir = vim.env.LODE_TEST_HELP
  vim.cmd("helptags " .. vim.fn.fnameescape(dir .. "/doc"))
  vim.opt.runtimepath:append(dir)
  local found = {}
  for _, tag in ipairs({ "lode", "lode-commands", ":Lode-def", "lode-timings", "lode-setup", "lode-server" }) do
    vim.cmd("help " .. tag)
    found[tag] = { file = vim.fn.expand("%:t"), line = vim.api.nvim_get_current_line() }
    vim.cmd("helpclose")
  end
  H.out.tags = found
  H.out.errors = vim.v.errmsg
end

function S.unicode()
  -- on the name's last character: a column counted in bytes would land on `len`
  H.at(repo .. "/src/shop/legacy.py", 7, "add_tax", 6)
  vim.cmd("Lode def")
  H.must(function()
    return vim.fn.getqflist({ title = 1 }).title:match("definitions")
  end, "the definitions")
  H.out.defs = H.quickfix()
  vim.cmd("cclose")
  H.at(repo .. "/src/shop/legacy.py", 7, "add_tax")
  vim.cmd("Lode refs")
  H.must(function()
    return vim.fn.getqflist({ title = 1 }).title:match("reference")
  end, "the references")
  H.out.refs = H.quickfix()
end

H.run(assert(S[vim.env.LODE_TEST_SCENARIO], "no such scenario"))
