-- flakesense for Neovim 0.11 and later: with this folder's parent on the runtimepath,
-- `vim.lsp.enable("flakesense")` is all it takes. Settings go in `settings.flakesense`.
local config = require("flakesense").config()
config.name = nil
return config
