--- HTTP to lode through curl (`vim.system`): one process a request, its whole configuration
--- (URL, headers, token, body) written to curl's stdin (`curl -q --config -`), so the token
--- never shows in the process list and no quoting reaches a shell. Killing the process cancels
--- the request; the server then stops the search it was running (a closed connection cancels it).
local M = {}

M.NO_SERVER = "lode: no server running — start one with `lode serve <folder>`"

--- curl's exit codes that mean nothing answered at the address.
local UNREACHABLE = { [7] = true, [6] = true, [52] = true, [56] = true }

local function quote(value)
  value = tostring(value)
  value = value:gsub("\\", "\\\\"):gsub('"', '\\"'):gsub("\n", "\\n"):gsub("\r", "\\r"):gsub("\t", "\\t")
  return '"' .. value .. '"'
end

local function encode(value)
  return (tostring(value):gsub("[^%w%-%._~]", function(c)
    return ("%%%02X"):format(c:byte())
  end))
end

--- `?a=1&b=x&b=y` from a table of values (lists repeat the parameter), keys sorted.
---@param query table<string, any>|nil
---@return string
function M.query_string(query)
  if not query then
    return ""
  end
  local keys = vim.tbl_keys(query)
  table.sort(keys)
  local parts = {}
  for _, key in ipairs(keys) do
    local value = query[key]
    for _, item in ipairs(type(value) == "table" and value or { value }) do
      parts[#parts + 1] = encode(key) .. "=" .. encode(item)
    end
  end
  return #parts > 0 and ("?" .. table.concat(parts, "&")) or ""
end

--- curl's configuration for one request.
---@param server lode.Server
---@param req {method: string, path: string, query: table|nil, body: table|nil, timeout_ms: integer|nil}
---@return string
function M.curl_config(server, req)
  local timeout = (req.timeout_ms or require("lode.config").options.timeout_ms) / 1000
  local lines = {
    "url = " .. quote(server.url .. req.path .. M.query_string(req.query)),
    "request = " .. quote(req.method),
    "silent",
    "show-error",
    ("max-time = %.3f"):format(timeout),
    ("connect-timeout = %.3f"):format(math.min(timeout, 3)),
    'noproxy = "*"',
    'write-out = "\\n%{http_code}"',
    'header = "Accept: application/json"',
  }
  if server.token then
    lines[#lines + 1] = "header = " .. quote("Authorization: Bearer " .. server.token)
  end
  if req.body then
    lines[#lines + 1] = 'header = "Content-Type: application/json"'
    lines[#lines + 1] = "data-binary = " .. quote(vim.json.encode(req.body))
  end
  return table.concat(lines, "\n") .. "\n"
end

---@class lode.Response
---@field ok boolean
---@field status integer        HTTP status (0 when nothing answered)
---@field data table|nil        the decoded JSON body
---@field kind string|nil       on failure: "no_server", "auth", "http", "timeout", "curl", "decode"
---@field message string|nil    on failure: one line for the user
---@field ms number             the request's wall time

local function error_line(status, data)
  if type(data) ~= "table" or type(data.detail) ~= "string" then
    return ("lode: the server answered HTTP %d"):format(status)
  end
  local line = "lode: " .. data.detail
  if type(data.extra) == "table" then
    for _, field in ipairs(data.extra) do
      if type(field) == "table" and field.key then
        line = line .. (" (%s: %s)"):format(field.key, tostring(field.message or ""))
      end
    end
  end
  return line
end

--- Turn curl's result into a response.
---@param res vim.SystemCompleted
---@param ms number
---@return lode.Response
function M.parse(res, ms)
  local out = res.stdout or ""
  if res.code ~= 0 then
    local kind = UNREACHABLE[res.code] and "no_server" or res.code == 28 and "timeout" or "curl"
    local msg = kind == "no_server" and M.NO_SERVER
      or kind == "timeout" and "lode: the server did not answer in time"
      or ("lode: curl failed: %s"):format(vim.trim(res.stderr or ("exit " .. res.code)))
    return { ok = false, status = 0, kind = kind, message = msg, ms = ms }
  end
  local body, code = out:match("^(.*)\n(%d%d%d)$")
  local status = tonumber(code) or 0
  local ok, data = pcall(vim.json.decode, body or "", { luanil = { object = true, array = true } })
  if not ok then
    data = nil
  end
  if status == 401 then
    local msg = "lode: the server needs a key — set LODE_API_KEY or setup({ token = ... })"
    if type(data) == "table" and type(data.detail) == "string" then
      msg = msg .. " (" .. data.detail .. ")"
    end
    return { ok = false, status = status, data = data, kind = "auth", message = msg, ms = ms }
  end
  if status < 200 or status >= 300 then
    return { ok = false, status = status, data = data, kind = "http", message = error_line(status, data), ms = ms }
  end
  if not ok or type(data) ~= "table" then
    return { ok = false, status = status, kind = "decode", message = "lode: the answer is not JSON", ms = ms }
  end
  return { ok = true, status = status, data = data, ms = ms }
end

local function spawn(server, req, on_exit)
  local cmd = { require("lode.config").options.curl, "-q", "--config", "-" }
  return pcall(vim.system, cmd, { stdin = M.curl_config(server, req), text = true }, on_exit)
end

local function not_found(curl)
  return {
    ok = false,
    status = 0,
    kind = "curl",
    message = ("lode: %s not found — lode.nvim needs curl on PATH"):format(curl),
    ms = 0,
  }
end

---@class lode.Request
---@field cancel fun()   stop the request: its callback is not called

--- Send a request; `on_done(response)` runs on the main loop (not for a cancelled request).
---@param server lode.Server
---@param req {method: string, path: string, query: table|nil, body: table|nil, timeout_ms: integer|nil}
---@param on_done fun(res: lode.Response)
---@return lode.Request
function M.request(server, req, on_done)
  local started = vim.uv.hrtime()
  local cancelled = false
  local ok, proc = spawn(server, req, function(res)
    local ms = (vim.uv.hrtime() - started) / 1e6
    vim.schedule(function()
      if not cancelled then
        on_done(M.parse(res, ms))
      end
    end)
  end)
  if not ok then
    local res = not_found(require("lode.config").options.curl)
    vim.schedule(function()
      on_done(res)
    end)
    return { cancel = function() end }
  end
  return {
    cancel = function()
      if not cancelled then
        cancelled = true
        pcall(proc.kill, proc, 15)
      end
    end,
  }
end

--- Send a request and wait for its answer (the health check).
---@param server lode.Server
---@param req {method: string, path: string, query: table|nil, body: table|nil, timeout_ms: integer|nil}
---@return lode.Response
function M.request_sync(server, req)
  local started = vim.uv.hrtime()
  local ok, proc = spawn(server, req, nil)
  if not ok then
    return not_found(require("lode.config").options.curl)
  end
  local res = proc:wait((req.timeout_ms or require("lode.config").options.timeout_ms) + 1000)
  return M.parse(res, (vim.uv.hrtime() - started) / 1e6)
end

return M
