#!/usr/bin/env bash
# Install the agent CLIs the real-agent suite (tests/fidelity/test_real_agents.py) drives, at the
# versions docs/agents.md was verified against, each into a folder of its own under
# $MEMORY_LENS_AGENT_CACHE (default ~/.cache/memory-lens-agents). Idempotent: an installed
# version is kept. Without node and npm it warns and exits 0 (the suite then skips, except on CI).
# Claude Code needs its install scripts: its postinstall links the native binary.
set -euo pipefail
CACHE="${MEMORY_LENS_AGENT_CACHE:-$HOME/.cache/memory-lens-agents}"
PINNED="@anthropic-ai/claude-code@2.1.328 @openai/codex@0.169.0 @google/gemini-cli@0.61.0 @github/copilot@1.0.102"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "memory-lens: warning: node and npm are needed to install the agent CLIs (tests/fidelity)" >&2
  exit 0
fi
for spec in $PINNED; do
  dir="$CACHE/$(echo "${spec#@}" | tr '/@' '--')"
  [ -f "$dir/.installed" ] && continue
  rm -rf "$dir" && mkdir -p "$dir"
  echo '{"private": true}' > "$dir/package.json"
  echo "memory-lens: installing $spec into $dir" >&2
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "$spec" >/dev/null)
  touch "$dir/.installed"
done
