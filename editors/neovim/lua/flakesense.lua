-- flakesense for Neovim: starts `flakesense serve` for Java, Python and Rust buffers.
--
-- Neovim 0.11 and later get a native configuration (`vim.lsp.config` and `vim.lsp.enable`);
-- 0.8 to 0.10 start the server with `vim.lsp.start`; 0.7 with `vim.lsp.start_client`.
--
--   vim.opt.runtimepath:append("/path/to/flakesense/editors/neovim")
--   require("flakesense").setup({ settings = { warningThreshold = 0.9 } })

local M = {}

M.filetypes = { "java", "python", "rust" }
M.root_markers = { "flakesense.toml", ".flakesense", ".git" }

-- The directory holding the nearest root marker above `path`, else the file's directory.
local function find_root(path)
  local directory = vim.fn.fnamemodify(path, ":p:h")
  local current = directory
  while true do
    for _, marker in ipairs(M.root_markers) do
      if vim.loop.fs_stat(current .. "/" .. marker) then
        return current
      end
    end
    local parent = vim.fn.fnamemodify(current, ":h")
    if parent == current then
      return directory
    end
    current = parent
  end
end

-- The client configuration shared by every Neovim version.
function M.config(opts)
  opts = opts or {}
  local settings = opts.settings or vim.empty_dict()
  return {
    name = "flakesense",
    cmd = opts.cmd or { "flakesense", "serve" },
    filetypes = M.filetypes,
    root_markers = M.root_markers,
    -- Sent at start, and again whenever the server asks for the `flakesense` section.
    init_options = settings,
    settings = { flakesense = settings },
  }
end

-- Clients started on Neovim 0.7, by root directory, so buffers of one workspace share one.
local started = {}

local function attach(bufnr, config)
  local path = vim.api.nvim_buf_get_name(bufnr)
  if path == "" then
    return
  end
  local root = find_root(path)
  local client_config = vim.tbl_extend("force", config, {
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") } },
  })
  client_config.root_markers = nil
  client_config.filetypes = nil
  if vim.lsp.start then
    vim.lsp.start(client_config, { bufnr = bufnr })
    return
  end
  local id = started[root]
  if not id or vim.lsp.client_is_stopped(id) then
    id = vim.lsp.start_client(client_config)
    started[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

function M.setup(opts)
  local config = M.config(opts)
  if vim.lsp.config and vim.lsp.enable then
    vim.lsp.config("flakesense", config)
    vim.lsp.enable("flakesense")
    return
  end
  local group = vim.api.nvim_create_augroup("flakesense", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = M.filetypes,
    callback = function(event)
      attach(event.buf, config)
    end,
  })
  -- Buffers opened before setup.
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.tbl_contains(M.filetypes, vim.bo[bufnr].filetype) then
      attach(bufnr, config)
    end
  end
end

return M
