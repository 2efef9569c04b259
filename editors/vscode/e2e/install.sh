#!/usr/bin/env bash
# Installs what vscode.test.mjs needs on Debian 12 with Node.js 20, from Debian's packages and the
# npm registry alone: Chromium, and code-server (VS Code's workbench served to a browser), whose
# native modules build here. Takes about 5 minutes on 2 cores, most of it compiling.
set -euo pipefail
cd "$(dirname "$0")"

# Chromium for playwright-core; compilers and headers for code-server's native modules (kerberos
# needs krb5, native-keymap X11 and xkbfile, keytar libsecret); ripgrep, see below.
{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium ripgrep \
    build-essential pkg-config python3 libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev; } > /dev/null

# code-server depends on @vscode/ripgrep 1.15.11, whose install script downloads ripgrep from
# GitHub, out of this machine's reach, unless it finds that download in its cache: Debian's rg,
# packed under the name it looks for, is that download.
cache="$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-1.15.11"
mkdir -p "$cache"
staging="$(mktemp -d)"
cp "$(command -v rg)" "$staging/rg"
tar czf "$cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$staging" rg
rm -rf "$staging"

# package.json's allowScripts names the two packages whose install scripts must run (code-server's
# builds its VS Code, argon2's its native module): npm 11 warns of every unnamed one, and newer npm
# skips them. As root, code-server's install script asks for unsafe-perm; node-pty's runs `npx node-gyp`,
# which must not stop to ask; node-gyp takes Node's headers from the nodejs package instead of
# downloading them.
npm_config_unsafe_perm=true npm_config_yes=true npm_config_nodedir=/usr \
    npm ci --no-fund --no-audit
node_modules/.bin/code-server --version
