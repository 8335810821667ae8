#!/usr/bin/env bash
# Build the VS Code extension from a fresh clone in one command: install the npm dependencies
# (npm ci, when node_modules is missing or older than package-lock.json), bundle the client and
# the server, and pack client-vscode/memory-lens.vsix. Needs Node >= 20 with npm, and Python
# >= 3.10 with pip (to vendor the server's pure-Python dependencies). Output of the build goes
# to stderr; the path of the .vsix is printed on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false npm_config_loglevel=error
command -v npm >/dev/null || { echo "memory-lens: error: npm is missing; install Node.js 20 or newer with npm" >&2; exit 1; }
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "memory-lens: npm ci (client-vscode)" >&2
  npm ci >&2
fi
npm run -s package >&2
echo "$PWD/memory-lens.vsix"
