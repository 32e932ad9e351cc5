--- The live search in Telescope (`picker = "telescope"`), used only when Telescope is
--- installed. Each prompt change (Telescope debounces it) cancels the request still running
--- and asks lode; the server's order is kept (no client-side filtering); the preview is the
--- chunk, <CR> opens it as lode's own picker does, Telescope's <C-q> sends to quickfix.
--- Timing records are lode's own picker's only.
local M = {}

--- Whether Telescope can be loaded.
---@return boolean
function M.available()
  return (pcall(require, "telescope.pickers"))
end

local function finder(spec)
  local obj = { inflight = nil }
  function obj.close()
    if obj.inflight then
      obj.inflight.cancel()
      obj.inflight = nil
    end
  end
  return setmetatable(obj, {
    __call = function(_, prompt, process_result, process_complete)
      obj.close()
      prompt = vim.trim(prompt or "")
      if prompt == "" then
        return process_complete()
      end
      obj.inflight = spec.source(prompt, function(entries, err)
        obj.inflight = nil
        if not entries then
          spec.on_error(err)
          return process_complete()
        end
        for index, entry in ipairs(entries) do
          local target = entry.place
          local item = {
            value = entry,
            display = entry.display,
            ordinal = prompt,
            index = index,
            filename = vim.uri_to_fname(target.uri),
            lnum = target.lnum,
          }
          if process_result(item) then
            return
          end
        end
        process_complete()
      end)
    end,
  })
end

--- Open the live search of `spec` (see lode.picker) in Telescope.
---@param spec lode.PickerSpec
function M.open(spec)
  local pickers = require("telescope.pickers")
  local previewers = require("telescope.previewers")
  local sorters = require("telescope.sorters")
  local actions = require("telescope.actions")
  local state = require("telescope.actions.state")
  pickers
    .new({}, {
      prompt_title = spec.title,
      default_text = spec.query,
      finder = finder(spec),
      debounce = spec.debounce_ms,
      sorter = sorters.Sorter:new({
        scoring_function = function(_, _, _, entry)
          return entry.index
        end,
      }),
      previewer = previewers.new_buffer_previewer({
        title = "lode",
        define_preview = function(self, item)
          local entry = item.value
          vim.api.nvim_buf_set_lines(self.state.bufnr, 0, -1, false, entry.preview)
          vim.bo[self.state.bufnr].syntax = vim.filetype.match({ filename = entry.filename }) or ""
        end,
      }),
      attach_mappings = function(bufnr)
        actions.select_default:replace(function()
          local item = state.get_selected_entry()
          actions.close(bufnr)
          if item then
            vim.schedule(function()
              require("lode.locations").open(item.value.place)
            end)
          end
        end)
        return true
      end,
    })
    :find()
end

return M
