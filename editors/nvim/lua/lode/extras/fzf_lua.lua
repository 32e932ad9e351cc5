--- The live search in fzf-lua (`picker = "fzf-lua"`), used only when fzf-lua is installed.
--- fzf reloads on each prompt change (after `debounce_ms`, fzf-lua's `query_delay`); the request
--- still running is cancelled and lode is asked; fzf does no filtering of its own, so the
--- server's order is kept. The preview is the chunk, <CR> opens it as lode's own picker does.
--- Timing records are lode's own picker's only.
local M = {}

--- Whether fzf-lua can be loaded.
---@return boolean
function M.available()
  return (pcall(require, "fzf-lua"))
end

--- Open the live search of `spec` (see lode.picker) in fzf-lua.
---@param spec lode.PickerSpec
function M.open(spec)
  -- each line is "<key>\t<display>"; fzf shows the display only, the key finds the entry
  local entries, asked, inflight = {}, 0, nil
  local function entry_of(line)
    return line and entries[line:match("^([^\t]+)\t")]
  end
  local function cancel()
    if inflight then
      inflight.cancel()
      inflight = nil
    end
  end
  local function contents(args)
    cancel()
    local query = vim.trim(args[1] or "")
    return function(write)
      if query == "" then
        return write(nil)
      end
      asked = asked + 1
      local seq = asked
      inflight = spec.source(query, function(found, err)
        inflight = nil
        if not found then
          spec.on_error(err)
        else
          for index, entry in ipairs(found) do
            local key = seq .. "." .. index
            entries[key] = entry
            write(key .. "\t" .. entry.display)
          end
        end
        write(nil)
      end)
    end
  end
  require("fzf-lua").fzf_live(contents, {
    prompt = spec.title .. "> ",
    query = spec.query,
    query_delay = spec.debounce_ms > 0 and spec.debounce_ms or nil,
    fzf_opts = { ["--delimiter"] = "\t", ["--with-nth"] = "2..", ["--no-multi"] = true },
    preview = function(items)
      local entry = entry_of(items[1])
      return entry and table.concat(entry.preview, "\n") or ""
    end,
    actions = {
      ["default"] = function(selected)
        cancel()
        local entry = entry_of(selected[1])
        if entry then
          require("lode.locations").open(entry.place)
        end
      end,
    },
  })
end

return M
