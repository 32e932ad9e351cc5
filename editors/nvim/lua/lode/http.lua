--- HTTP to lode. Plain `http://` URLs (every local server) go over a TCP socket of Neovim's
--- event loop (vim.uv): about 2 ms a request on loopback where starting curl costs about
--- 15-20 ms, which matters for results as you type. `https://` URLs, or `transport = "curl"`,
--- go through curl (`vim.system`), its whole configuration (URL, headers, token, body) written
--- to its stdin (`curl -q --config -`) so the token never shows in the process list. Either
--- way, cancelling a request closes its connection, and the server then stops the search it
--- was running.
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

local function failure(kind, ms, detail)
  local msg = kind == "no_server" and M.NO_SERVER
    or kind == "timeout" and "lode: the server did not answer in time"
    or ("lode: %s"):format(detail or "the request failed")
  return { ok = false, status = 0, kind = kind, message = msg, ms = ms }
end

--- Turn curl's result into a response.
---@param res vim.SystemCompleted
---@param ms number
---@return lode.Response
function M.parse(res, ms)
  local out = res.stdout or ""
  if res.code ~= 0 then
    local kind = UNREACHABLE[res.code] and "no_server" or res.code == 28 and "timeout" or "curl"
    return failure(kind, ms, ("curl failed: %s"):format(vim.trim(res.stderr or ("exit " .. res.code))))
  end
  local body, code = out:match("^(.*)\n(%d%d%d)$")
  return M.response(tonumber(code) or 0, body or "", ms)
end

--- Turn an HTTP status and body into a response (errors as one line for the user).
---@param status integer
---@param body string
---@param ms number
---@return lode.Response
function M.response(status, body, ms)
  local ok, data = pcall(vim.json.decode, body, { luanil = { object = true, array = true } })
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
    message = ("lode: %s not found — lode.nvim needs curl on PATH for an https:// server"):format(curl),
    ms = 0,
  }
end

---@class lode.Request
---@field cancel fun()   stop the request: its callback is not called

local function curl_request(server, req, on_done)
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

--- Whether a request to this server goes through curl.
---@param server lode.Server
---@return boolean
function M.uses_curl(server)
  return require("lode.config").options.transport == "curl" or not server.url:match("^http://")
end

--- Send a request; `on_done(response)` runs on the main loop (not for a cancelled request).
---@param server lode.Server
---@param req {method: string, path: string, query: table|nil, body: table|nil, timeout_ms: integer|nil}
---@param on_done fun(res: lode.Response)
---@return lode.Request
function M.request(server, req, on_done)
  if M.uses_curl(server) then
    return curl_request(server, req, on_done)
  end
  return require("lode.socket").request(server, req, on_done)
end

--- Send a request and wait for its answer (the health check).
---@param server lode.Server
---@param req {method: string, path: string, query: table|nil, body: table|nil, timeout_ms: integer|nil}
---@return lode.Response
function M.request_sync(server, req)
  local timeout = req.timeout_ms or require("lode.config").options.timeout_ms
  local result
  local handle = M.request(server, req, function(res)
    result = res
  end)
  vim.wait(timeout + 1000, function()
    return result ~= nil
  end, 2)
  if not result then
    handle.cancel()
    return failure("timeout", timeout + 1000)
  end
  return result
end

M.failure = failure

return M
