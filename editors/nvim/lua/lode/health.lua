--- `:checkhealth lode`: Neovim's version, curl, the server found (and how), its answer and key.
local M = {}

local function check_neovim(h)
  if vim.fn.has("nvim-0.10") == 1 then
    local v = vim.version()
    h.ok(("Neovim %d.%d.%d"):format(v.major, v.minor, v.patch))
  else
    h.error("Neovim 0.10 or newer is needed (vim.system)")
  end
end

local function check_curl(h, curl, needed)
  if vim.fn.executable(curl) ~= 1 then
    local say = needed and h.error or h.info
    say(("%s is not on PATH (needed for an https:// server or transport = \"curl\")"):format(curl))
    return not needed
  end
  local res = vim.system({ curl, "--version" }, { text = true }):wait(5000)
  local version = (res.stdout or ""):match("^curl (%S+)") or "?"
  h.ok(("curl %s (%s)"):format(version, vim.fn.exepath(curl)))
  return true
end

local function check_discovery(h, found)
  local paths = require("lode.config").discovery_paths()
  if not found then
    h.info(("no discovery file (looked for %s)"):format(table.concat(paths, ", ")))
  elseif found.error then
    h.warn(("discovery file %s ignored: %s"):format(found.path, found.error))
  else
    h.ok(("discovery file %s: %s, pid %s, auth %s"):format(
      found.path,
      found.data.url,
      tostring(found.data.pid),
      tostring(found.data.auth)
    ))
  end
end

local function check_server(h, http, server)
  local health = http.request_sync(server, { method = "GET", path = "/health", timeout_ms = 3000 })
  if health.kind == "no_server" or health.kind == "timeout" then
    h.error(health.message, { "start one with `lode serve <folder>`, or set LODE_URL / setup({ url = ... })" })
    return
  end
  if not health.ok and health.status ~= 503 then
    h.error(health.message)
    return
  end
  local d = health.data or {}
  local say = d.status == "ok" and h.ok or h.warn
  say(("server answers: status %s, version %s, %s, model loaded: %s%s"):format(
    tostring(d.status),
    tostring(d.version),
    tostring(d.role),
    tostring(d.model_loaded),
    d.reason and (", " .. d.reason) or ""
  ))
  local status = http.request_sync(server, { method = "GET", path = "/api/v1/status", timeout_ms = 5000 })
  if status.kind == "auth" then
    h.error(status.message)
  elseif not status.ok then
    h.error(status.message)
  else
    local count = require("lode.locations").count
    h.ok(("%s, %s (key: %s)"):format(
      count(#(status.data.projects or {}), "project"),
      count(status.data.chunks or 0, "chunk"),
      server.token and ("from " .. server.token_source) or "none"
    ))
  end
end

--- Run the checks (called by `:checkhealth lode`).
function M.check()
  local h = vim.health
  local config = require("lode.config")
  h.start("lode: Neovim and curl")
  check_neovim(h)
  local server = config.resolve()
  local http = require("lode.http")
  local usable = check_curl(h, config.options.curl, http.uses_curl(server))
  h.start("lode: server")
  h.info(("URL %s (from %s), through %s"):format(
    server.url,
    server.source,
    http.uses_curl(server) and "curl" or "a socket"
  ))
  check_discovery(h, server.discovery)
  if usable then
    check_server(h, http, server)
  end
  h.start("lode: pickers")
  h.info(("picker = %q"):format(config.options.picker))
  for _, extra in ipairs({ { "telescope", "lode.extras.telescope" }, { "fzf-lua", "lode.extras.fzf_lua" } }) do
    local name = extra[1]
    if require(extra[2]).available() then
      h.ok(('%s is installed (picker = "%s" uses it)'):format(name, name))
    elseif config.options.picker == name then
      h.warn(('picker = "%s" but %s is not installed: lode\'s own picker is used'):format(name, name))
    else
      h.info(("%s is not installed (optional)"):format(name))
    end
  end
end

return M
