--- HTTP/1.1 over a TCP socket of Neovim's event loop (vim.uv), for plain `http://` servers:
--- one connection a request (`Connection: close`), the answer read to its `Content-Length`
--- (or its last chunk, or the connection's end). Closing the socket cancels the request.
local M = {}

--- Host, port and path prefix of an `http://` URL; nil when it is not one.
---@param url string
---@return {host: string, port: integer, authority: string, prefix: string}|nil
function M.parse_url(url)
  local host, port, prefix = url:match("^http://%[([^%]]+)%]:?(%d*)(.*)$")
  if not host then
    host, port, prefix = url:match("^http://([^/:?#]+):?(%d*)(.*)$")
  end
  if not host then
    return nil
  end
  local authority = host:find(":", 1, true) and ("[" .. host .. "]") or host
  if port ~= "" then
    authority = authority .. ":" .. port
  end
  return { host = host, port = tonumber(port) or 80, authority = authority, prefix = prefix:gsub("/+$", "") }
end

local function dechunk(body)
  local out, at = {}, 1
  while true do
    local line_end = body:find("\r\n", at, true)
    if not line_end then
      return nil
    end
    local size = tonumber(body:sub(at, line_end - 1):match("^%x+"), 16)
    if not size then
      return nil
    end
    if size == 0 then
      return table.concat(out)
    end
    local data_start = line_end + 2
    if #body < data_start + size + 1 then
      return nil
    end
    out[#out + 1] = body:sub(data_start, data_start + size - 1)
    at = data_start + size + 2
  end
end

--- The status and body of a raw answer; nil while it is incomplete (unless `eof`).
---@param raw string
---@param eof boolean  the connection has ended
---@return integer|nil, string|nil
function M.parse_answer(raw, eof)
  local head_end = raw:find("\r\n\r\n", 1, true)
  if not head_end then
    return nil
  end
  local head, body = raw:sub(1, head_end - 1), raw:sub(head_end + 4)
  local status = tonumber(head:match("^HTTP/[%d.]+ (%d%d%d)"))
  local headers = {}
  for line in head:gmatch("\r\n([^\r\n]+)") do
    local key, value = line:match("^([^:]+):%s*(.-)%s*$")
    if key then
      headers[key:lower()] = value
    end
  end
  if (headers["transfer-encoding"] or ""):lower():find("chunked", 1, true) then
    local whole = dechunk(body)
    if whole then
      return status, whole
    end
    return nil
  end
  local length = tonumber(headers["content-length"] or "")
  if length then
    if #body >= length then
      return status, body:sub(1, length)
    end
    return nil
  end
  if eof then
    return status, body
  end
  return nil
end

local function payload(target, req)
  local http = require("lode.http")
  local server_token = req.token
  local body = req.body and vim.json.encode(req.body) or nil
  local lines = {
    ("%s %s%s%s HTTP/1.1"):format(req.method, target.prefix, req.path, http.query_string(req.query)),
    "Host: " .. target.authority,
    "Accept: application/json",
    "User-Agent: lode.nvim",
    "Connection: close",
  }
  if server_token then
    lines[#lines + 1] = "Authorization: Bearer " .. server_token
  end
  if body then
    lines[#lines + 1] = "Content-Type: application/json"
    lines[#lines + 1] = "Content-Length: " .. #body
  end
  return table.concat(lines, "\r\n") .. "\r\n\r\n" .. (body or "")
end

--- Send a request (see lode.http.request).
---@param server lode.Server
---@param req table
---@param on_done fun(res: lode.Response)
---@return lode.Request
function M.request(server, req, on_done)
  local http = require("lode.http")
  local started = vim.uv.hrtime()
  local timeout = req.timeout_ms or require("lode.config").options.timeout_ms
  local target = assert(M.parse_url(server.url), "not an http:// URL")
  local message = payload(target, vim.tbl_extend("force", req, { token = server.token }))
  local tcp, timer = nil, vim.uv.new_timer()
  local finished, cancelled = false, false
  local chunks = {}

  local function close()
    if not timer:is_closing() then
      timer:stop()
      timer:close()
    end
    if tcp and not tcp:is_closing() then
      tcp:close()
    end
  end

  -- runs in the event loop's callbacks; the answer is decoded and handed over on the main loop
  local function finish(kind, status, body)
    if finished then
      return
    end
    finished = true
    close()
    local ms = (vim.uv.hrtime() - started) / 1e6
    vim.schedule(function()
      if cancelled then
        return
      end
      if kind then
        on_done(http.failure(kind, ms, body))
      else
        on_done(http.response(status, body, ms))
      end
    end)
  end

  local function read(err, chunk)
    if err then
      return finish("no_server")
    end
    if chunk then
      chunks[#chunks + 1] = chunk
    end
    local status, body = M.parse_answer(table.concat(chunks), chunk == nil)
    if status then
      finish(nil, status, body)
    elseif chunk == nil then
      finish(#chunks == 0 and "no_server" or "broken", nil, "the server closed the connection mid-answer")
    end
  end

  local function connect(addresses, index)
    if finished then
      return
    end
    local address = addresses[index]
    if not address then
      return finish("no_server")
    end
    tcp = vim.uv.new_tcp()
    tcp:connect(address, target.port, function(err)
      if finished then
        return
      end
      if err then
        tcp:close()
        return connect(addresses, index + 1) -- localhost: ::1 refused, 127.0.0.1 next
      end
      tcp:write(message)
      tcp:read_start(read)
    end)
  end

  timer:start(timeout, 0, function()
    finish("timeout")
  end)
  if target.host:match("^[%d.]+$") or target.host:find(":", 1, true) then
    connect({ target.host }, 1)
  else
    vim.uv.getaddrinfo(target.host, nil, { socktype = "stream" }, function(err, found)
      local addresses = {}
      for _, info in ipairs(found or {}) do
        addresses[#addresses + 1] = info.addr
      end
      if err or #addresses == 0 then
        return finish("no_server")
      end
      connect(addresses, 1)
    end)
  end

  return {
    cancel = function()
      cancelled = true
      finished = true
      close()
    end,
  }
end

return M
