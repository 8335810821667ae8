#!/usr/bin/env bash
# Run the whole Memory Lens test suite from a fresh clone: set up, install the editors the
# tests drive, run the Python suite (core, CLI, LSP end-to-end, Neovim and Emacs sessions), then
# the VS Code client's checks and its end-to-end test in a real VS Code (code-server + Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/system-deps.sh
scripts/agent-clis.sh || [ "${CI:-}" != true ]  # the real agents tests/fidelity drives; on CI a failed install fails
echo "== Python suite" >&2
.venv/bin/pytest tests "$@"  # `tests`: every layer (with no path pytest runs the fast ones only)
echo "== Malformed LSP traffic (10,000 messages, fixed seed; ~15 s)" >&2
.venv/bin/python tests/fuzz/lsp_traffic.py
echo "== Concurrent writers (5 runs of each race, 5 adds per writer)" >&2
.venv/bin/python tests/stress/races.py --runs 5 --adds 5
if [ -f client-vscode/scripts/test.sh ]; then
  echo "== VS Code client" >&2
  bash client-vscode/scripts/test.sh
fi
