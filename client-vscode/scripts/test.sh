#!/usr/bin/env bash
# Every check of the VS Code client, from a fresh clone: install its npm dependencies, type-check
# (strict), lint, run the unit tests, then package the .vsix and run the end-to-end test in a
# real VS Code (e2e/run.sh; its prerequisites are listed there). E2E_* variables go to
# e2e/run.sh. Set SKIP_E2E=1 to stop after the unit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false npm_config_loglevel=error
t0=$(date +%s)
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "== client-vscode: npm ci" >&2
  npm ci >/dev/null
fi
echo "== client-vscode: typecheck, lint, unit tests" >&2
npm run -s typecheck
npm run -s lint
log="$(mktemp)"
if ! npm test --silent >"$log" 2>&1; then
  cat "$log"; rm -f "$log"; exit 1
fi
grep -E '^# (tests|pass|fail)' "$log" | tr '\n' ' ' >&2; echo >&2
rm -f "$log"
echo "== client-vscode: checks passed in $(( $(date +%s) - t0 ))s" >&2
if [ "${SKIP_E2E:-}" = 1 ]; then
  exit 0
fi
echo "== client-vscode: end-to-end test in code-server + Chromium" >&2
exec bash e2e/run.sh
