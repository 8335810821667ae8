#!/usr/bin/env bash
# End-to-end test of the Memory Lens VS Code extension in a real VS Code: code-server 4.100.3
# (VS Code 1.100.3) with the freshly packaged .vsix installed, driven by headless Chromium
# through playwright-core. Idempotent: installs what is missing into a cache directory, builds
# the .vsix, runs the test in a fresh, isolated HOME/XDG/TMPDIR, and stops everything it started.
#
# Usage:   client-vscode/e2e/run.sh            (exit 0 = passed)
# Needs:   Node 20 + npm, git, curl, python3 (>= 3.10, runs the bundled server), a C/C++
#          toolchain (build-essential) and, from Debian: chromium libkrb5-dev ripgrep
#          (apt-get install -y chromium libkrb5-dev ripgrep). The registries npm and PyPI.
# Env:     E2E_CACHE      installs and per-run state   (default /tmp/memory-lens-e2e)
#          E2E_ARTIFACTS  screenshots, logs, result.json (default <repo>/test-artifacts/vscode)
#          E2E_PORT       code-server port               (default 18123)
#          E2E_SERVER     bundled (default: the server inside the .vsix, run by python3 on PATH)
#                         or venv (memoryLens.server.command = <repo>/.venv/bin/memory-lens serve)
#          E2E_SKIP_PACKAGE=1  reuse client-vscode/memory-lens.vsix instead of rebuilding it
#          CHROMIUM       browser binary                 (default /usr/bin/chromium)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CLIENT="$(dirname "$HERE")"
REPO="$(dirname "$CLIENT")"
CACHE="${E2E_CACHE:-/tmp/memory-lens-e2e}"
ARTIFACTS="${E2E_ARTIFACTS:-$REPO/test-artifacts/vscode}"
PORT="${E2E_PORT:-18123}"
SERVER_MODE="${E2E_SERVER:-bundled}"
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
CS_VERSION=4.100.3
PLAYWRIGHT_VERSION=1.65.1
RIPGREP_CACHE=vscode-ripgrep-cache-1.15.11
RIPGREP_TARBALL=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz
VSIX="$CLIENT/memory-lens.vsix"
RUN="$CACHE/run"
CS_BIN="$CACHE/cs/node_modules/.bin/code-server"
export npm_config_loglevel=error npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false

T0=$(date +%s)
# code-server writes ~/.config/code-server/config.yaml when run: never let it see the real HOME.
cs() {
  HOME="${CS_HOME:-$CACHE/cs-home}" XDG_CONFIG_HOME="${CS_HOME:-$CACHE/cs-home}/.config" \
    XDG_DATA_HOME="${CS_HOME:-$CACHE/cs-home}/.local/share" "$CS_BIN" "$@"
}
say() { printf '[e2e %4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*"; }
die() { say "ERROR: $*"; exit 1; }

check_prerequisites() {
  command -v node >/dev/null || die "node is missing (Node 20 is needed for code-server $CS_VERSION)"
  local major; major="$(node -p 'process.versions.node.split(".")[0]')"
  [ "$major" = 20 ] || die "code-server $CS_VERSION needs Node 20; found $(node --version)"
  [ -x "$CHROMIUM" ] || die "$CHROMIUM is missing: apt-get install -y chromium (or set CHROMIUM)"
  command -v rg >/dev/null || die "ripgrep is missing: apt-get install -y ripgrep"
  command -v git >/dev/null || die "git is missing"
  command -v curl >/dev/null || die "curl is missing"
  if [ "$SERVER_MODE" = bundled ]; then
    python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null \
      || die "the bundled server needs python3 >= 3.10 on PATH"
  fi
}

install_code_server() {
  if [ -x "$CS_BIN" ] && cs --version 2>/dev/null | grep -q "^$CS_VERSION "; then
    say "code-server $CS_VERSION already installed in $CACHE/cs"
    return
  fi
  say "installing code-server $CS_VERSION into $CACHE/cs (takes a few minutes)"
  pkg-config --exists krb5-gssapi 2>/dev/null || [ -f /usr/include/gssapi/gssapi.h ] \
    || die "libkrb5-dev is missing: apt-get install -y libkrb5-dev"
  # @vscode/ripgrep's postinstall downloads rg from outside the registries: seed its cache with Debian's rg.
  local seed="$CACHE/tmp/rgseed"
  mkdir -p "$CACHE/tmp/$RIPGREP_CACHE" "$seed"
  cp "$(command -v rg)" "$seed/rg"
  tar czf "$CACHE/tmp/$RIPGREP_CACHE/$RIPGREP_TARBALL" -C "$seed" rg
  rm -rf "$CACHE/cs"; mkdir -p "$CACHE/cs"
  echo '{"name":"memory-lens-e2e-code-server","private":true}' > "$CACHE/cs/package.json"
  # yes: node-pty's postinstall runs `npx node-gyp`; unsafe_perm: code-server's postinstall refuses root otherwise.
  (cd "$CACHE/cs" && TMPDIR="$CACHE/tmp" npm_config_yes=true npm_config_unsafe_perm=true \
    npm install "code-server@$CS_VERSION" --foreground-scripts >"$CACHE/cs-install.log" 2>&1) \
    || { tail -40 "$CACHE/cs-install.log"; die "code-server install failed (log: $CACHE/cs-install.log)"; }
  cs --version | head -1
}

install_playwright() {
  if [ -f "$CACHE/pw/node_modules/playwright-core/package.json" ] \
    && [ "$(node -p "require('$CACHE/pw/node_modules/playwright-core/package.json').version")" = "$PLAYWRIGHT_VERSION" ]; then
    return
  fi
  say "installing playwright-core $PLAYWRIGHT_VERSION into $CACHE/pw (no browser download)"
  rm -rf "$CACHE/pw"; mkdir -p "$CACHE/pw"
  echo '{"name":"memory-lens-e2e-driver","private":true}' > "$CACHE/pw/package.json"
  (cd "$CACHE/pw" && npm install --no-save "playwright-core@$PLAYWRIGHT_VERSION" >/dev/null)
}

build_vsix() {
  if [ "${E2E_SKIP_PACKAGE:-}" = 1 ] && [ -f "$VSIX" ]; then
    say "reusing $VSIX"
    return
  fi
  say "packaging the extension (client-vscode/scripts/package.sh)"
  bash "$CLIENT/scripts/package.sh" >"$CACHE/package.log" 2>&1 \
    || { tail -30 "$CACHE/package.log"; die "client-vscode/scripts/package.sh failed"; }
}

start_code_server() {
  local cfg="$RUN/config.yaml"
  printf 'bind-addr: 127.0.0.1:%s\nauth: none\ncert: false\n' "$PORT" >"$cfg"
  CS_ARGS=(--config "$cfg" --user-data-dir "$USER_DATA" --extensions-dir "$RUN/extensions")
  cs "${CS_ARGS[@]}" --force --install-extension "$VSIX" >"$ARTIFACTS/install-extension.log" 2>&1 \
    || { cat "$ARTIFACTS/install-extension.log"; die "installing the .vsix failed"; }
  if curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz"; then
    die "port $PORT is already in use (set E2E_PORT)"
  fi
  # setsid: its own process group, so code-server, extension hosts, watchers and the language
  # server all stop together.
  setsid "$CS_BIN" "${CS_ARGS[@]}" --bind-addr "127.0.0.1:$PORT" --auth none --disable-telemetry \
    --disable-update-check --disable-workspace-trust --disable-getting-started-override \
    "$WORKSPACE" >"$ARTIFACTS/code-server.log" 2>&1 &
  CS_PID=$!
  for _ in $(seq 1 150); do
    curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && { say "code-server is up on port $PORT"; return; }
    kill -0 "$CS_PID" 2>/dev/null || { cat "$ARTIFACTS/code-server.log"; die "code-server exited"; }
    sleep 0.2
  done
  die "code-server did not answer on port $PORT"
}

stop_code_server() {
  if [ -n "${CS_PID:-}" ]; then
    kill -TERM -- "-$CS_PID" 2>/dev/null || true
    for _ in $(seq 1 25); do kill -0 "$CS_PID" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$CS_PID" 2>/dev/null || true
    CS_PID=
  fi
}

collect_logs() {
  # The extension's output channel (client log + LSP trace) as VS Code wrote it to disk.
  find "$USER_DATA/logs" -name '*Memory Lens*.log' -exec cp {} "$ARTIFACTS/memory-lens-output.log" \; 2>/dev/null || true
  find "$USER_DATA/logs" -name 'exthost.log' -exec cp {} "$ARTIFACTS/exthost.log" \; 2>/dev/null || true
}

main() {
  check_prerequisites
  mkdir -p "$CACHE/tmp" "$ARTIFACTS"
  find "$ARTIFACTS" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
  install_code_server
  install_playwright
  build_vsix

  local server_command=""
  if [ "$SERVER_MODE" = venv ]; then
    [ -x "$REPO/.venv/bin/memory-lens" ] || die "E2E_SERVER=venv needs $REPO/.venv/bin/memory-lens"
    server_command="[\"$REPO/.venv/bin/memory-lens\", \"serve\"]"
  fi
  node "$HERE/fixture.cjs" "$RUN" "$server_command"
  WORKSPACE="$RUN/workspace"
  USER_DATA="$RUN/user-data"

  # Everything code-server, the extension host, the language server and Chromium write stays in $RUN.
  export HOME="$RUN/home" XDG_CONFIG_HOME="$RUN/home/.config" XDG_DATA_HOME="$RUN/home/.local/share"
  export XDG_CACHE_HOME="$RUN/home/.cache" XDG_STATE_HOME="$RUN/home/.local/state"
  export TMPDIR="$RUN/tmp" XDG_RUNTIME_DIR="$RUN/tmp/run"
  unset MEMORY_LENS_GLOBAL_DIR MEMORY_LENS_FILENAMES MEMORY_LENS_BUDGET MEMORY_LENS_NOTES_DIR MEMORY_LENS_NOTES_LAYOUT \
    VSCODE_IPC_HOOK_CLI || true

  trap 'stop_code_server; collect_logs' EXIT
  start_code_server
  say "driving VS Code with headless Chromium"
  local rc=0
  NODE_PATH="$CACHE/pw/node_modules" E2E_RUN="$RUN" E2E_ARTIFACTS="$ARTIFACTS" E2E_SERVER="$SERVER_MODE" \
    CHROMIUM="$CHROMIUM" timeout 600 node "$HERE/drive.cjs" "http://127.0.0.1:$PORT" || rc=$?
  stop_code_server
  collect_logs
  trap - EXIT
  if [ "$rc" = 0 ]; then
    say "PASSED in $(( $(date +%s) - T0 ))s; screenshots and logs in $ARTIFACTS"
  else
    say "FAILED (rc=$rc) after $(( $(date +%s) - T0 ))s; see $ARTIFACTS (result.json, failure.png, logs)"
  fi
  return "$rc"
}

main "$@"
