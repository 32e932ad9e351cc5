--- lode.nvim settings and the server it talks to.
---
--- The server is found as lode's other clients find it: a URL or token given to
--- `setup()` > the environment (`LODE_URL`, `LODE_API_KEY`) > the discovery file a running
--- `lode serve` writes (ignored when its pid is not alive) > http://127.0.0.1:7370, no token.
local M = {}

M.DEFAULT_URL = "http://127.0.0.1:7370"

---@class lode.Options
---@field url string|nil        server URL (overrides LODE_URL and the discovery file)
---@field token string|nil      bearer token (overrides LODE_API_KEY and the discovery file)
---@field timeout_ms integer    a request's whole time limit
---@field debounce_ms integer   the live picker waits this long after a keystroke before asking
---@field limit integer         results per search
---@field mode string           "hybrid" | "semantic" | "lexical"
---@field projects string[]|nil search only these projects (names or ids); nil: all
---@field picker string         "float" (lode's own) | "select" (vim.ui.select) | "telescope" | "fzf-lua"
---@field transport string      "auto" (a socket for http://, curl for https://) | "curl"
---@field curl string           the curl executable
M.defaults = {
  url = nil,
  token = nil,
  timeout_ms = 10000,
  debounce_ms = 30,
  limit = 30,
  mode = "hybrid",
  projects = nil,
  picker = "float",
  transport = "auto",
  curl = "curl",
}

---@type lode.Options
M.options = vim.deepcopy(M.defaults)

local PICKERS = { float = true, select = true, telescope = true, ["fzf-lua"] = true }
local MODES = { hybrid = true, semantic = true, lexical = true }

--- Merge `opts` over the defaults; a bad value is an error naming the option.
---@param opts lode.Options|nil
function M.setup(opts)
  local o = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  local function check(name, ok, expected)
    if not ok then
      error(("lode: setup: %s must be %s, got %s"):format(name, expected, vim.inspect(o[name])), 0)
    end
  end
  check("url", o.url == nil or (type(o.url) == "string" and o.url:match("^https?://") ~= nil), "an http(s) URL")
  check("token", o.token == nil or type(o.token) == "string", "a string")
  for _, name in ipairs({ "timeout_ms", "debounce_ms", "limit" }) do
    check(name, type(o[name]) == "number" and o[name] >= 0 and o[name] % 1 == 0, "a whole number >= 0")
  end
  check("limit", o.limit >= 1 and o.limit <= 1000, "between 1 and 1000")
  check("mode", MODES[o.mode] ~= nil, "hybrid, semantic or lexical")
  check("picker", PICKERS[o.picker] ~= nil, "float, select, telescope or fzf-lua")
  check("projects", o.projects == nil or vim.islist(o.projects), "a list of project names or ids")
  check("transport", o.transport == "auto" or o.transport == "curl", '"auto" or "curl"')
  check("curl", type(o.curl) == "string" and o.curl ~= "", "an executable name")
  M.options = o
end

local function env(name)
  local value = vim.env[name]
  if value == nil or value == "" then
    return nil
  end
  return value
end

--- Where the discovery file may be, in the order lode's server writes it (the spec of issue 43:
--- $LODE_RUNTIME_DIR, else $XDG_RUNTIME_DIR/lode, else platformdirs' user_runtime_dir("lode")).
---@return string[]
function M.discovery_paths()
  local runtime = env("LODE_RUNTIME_DIR")
  if runtime then
    return { runtime .. "/server.json" }
  end
  local out = {}
  local xdg = env("XDG_RUNTIME_DIR")
  if xdg then
    out[#out + 1] = xdg .. "/lode/server.json"
  end
  if vim.fn.has("mac") == 1 then
    out[#out + 1] = vim.fn.expand("~/Library/Caches/TemporaryItems/lode/server.json")
  elseif vim.fn.has("win32") == 1 then
    local base = env("LOCALAPPDATA")
    if base then
      out[#out + 1] = base .. "\\lode\\Temp\\server.json"
    end
  else
    local uid = vim.uv.getuid()
    out[#out + 1] = ("/run/user/%d/lode/server.json"):format(uid)
    out[#out + 1] = ("%s/runtime-%d/lode/server.json"):format((env("TMPDIR") or "/tmp"):gsub("/$", ""), uid)
  end
  return out
end

local function read_file(path)
  local fd = io.open(path, "rb")
  if not fd then
    return nil
  end
  local text = fd:read("*a")
  fd:close()
  return text
end

--- Whether a process with this id runs on this machine (one of another user counts).
---@param pid integer
---@return boolean
function M.pid_alive(pid)
  if type(pid) ~= "number" or pid <= 0 or pid % 1 ~= 0 then
    return false
  end
  local ok, _, name = vim.uv.kill(pid, 0)
  return ok == 0 or name == "EPERM"
end

---@class lode.Discovery
---@field path string          the file read
---@field data table|nil       its JSON object
---@field alive boolean        its pid runs
---@field error string|nil     why it was not used

--- The first discovery file found, read and checked; nil when there is none.
---@return lode.Discovery|nil
function M.read_discovery()
  for _, path in ipairs(M.discovery_paths()) do
    local text = read_file(path)
    if text then
      local ok, data = pcall(vim.json.decode, text)
      if not ok or type(data) ~= "table" or type(data.url) ~= "string" then
        return { path = path, alive = false, error = "not a lode discovery file (no url)" }
      end
      local alive = M.pid_alive(data.pid)
      return {
        path = path,
        data = data,
        alive = alive,
        error = not alive and ("its server (pid %s) is not running"):format(tostring(data.pid)) or nil,
      }
    end
  end
  return nil
end

local function same_url(a, b)
  return a:gsub("/+$", "") == b:gsub("/+$", "")
end

---@class lode.Server
---@field url string            base URL, no trailing slash
---@field token string|nil
---@field source string         where the URL came from: "setup", "LODE_URL", "discovery" or "default"
---@field token_source string|nil "setup", "LODE_API_KEY" or "discovery"
---@field discovery lode.Discovery|nil

--- The server to talk to and its token, by the precedence above.
---@return lode.Server
function M.resolve()
  local o = M.options
  local discovery = M.read_discovery()
  local live = discovery and discovery.alive and discovery.data or nil
  local url, source
  if o.url then
    url, source = o.url, "setup"
  elseif env("LODE_URL") then
    url, source = env("LODE_URL"), "LODE_URL"
  elseif live then
    url, source = live.url, "discovery"
  else
    url, source = M.DEFAULT_URL, "default"
  end
  url = url:gsub("/+$", "")
  local token, token_source
  if o.token then
    token, token_source = o.token, "setup"
  elseif env("LODE_API_KEY") then
    token, token_source = env("LODE_API_KEY"), "LODE_API_KEY"
  elseif live and type(live.token_file) == "string" and same_url(live.url, url) then
    local text = read_file(live.token_file)
    if text then
      token, token_source = vim.trim(text), "discovery"
    end
  end
  if token == "" then
    token, token_source = nil, nil
  end
  return { url = url, token = token, source = source, token_source = token_source, discovery = discovery }
end

return M
