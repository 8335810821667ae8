#!/usr/bin/env bash
# Install the Debian/Ubuntu packages the test suite drives: Neovim and Emacs+eglot (real LSP
# clients), Chromium, ripgrep and the Kerberos headers (to build and drive a real VS Code via
# code-server), Node.js and npm (tests/fidelity runs Gemini CLI's own loader; it needs Node.js 20
# or later, newer than some distributions ship). Skips what is already there; needs root or
# passwordless sudo for apt-get.
set -euo pipefail
old_node() {
  if command -v node >/dev/null && [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
    echo "memory-lens: warning: Node.js $(node --version) is older than 20, which Gemini CLI needs" \
         "(tests/fidelity): install Node.js 20 or later" >&2
  fi
}
need=()
command -v nvim >/dev/null || need+=(neovim)
command -v emacs >/dev/null || need+=(emacs-nox)
[ -d /usr/share/emacs/site-lisp/elpa/eglot-1.9 ] || ls -d /usr/share/emacs/site-lisp/elpa/eglot-* >/dev/null 2>&1 || need+=(elpa-eglot)
command -v chromium >/dev/null || need+=(chromium fonts-dejavu-core)
command -v rg >/dev/null || need+=(ripgrep)
command -v curl >/dev/null || need+=(curl)
[ -e /usr/include/gssapi/gssapi.h ] || need+=(libkrb5-dev)
command -v g++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
command -v node >/dev/null || need+=(nodejs npm)
[ ${#need[@]} -eq 0 ] && { old_node; exit 0; }
if ! command -v apt-get >/dev/null; then
  echo "memory-lens: warning: install ${need[*]} to run every test (no apt-get here)" >&2
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if sudo -n true 2>/dev/null; then SUDO="sudo"; else
    echo "memory-lens: warning: run 'sudo apt-get install ${need[*]}' to run every test" >&2
    exit 0
  fi
fi
echo "memory-lens: installing ${need[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
old_node
