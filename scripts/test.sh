#!/usr/bin/env bash
# Run the whole Memory Lens test suite from a fresh clone: set up, add the test tools, install
# the editors the tests drive, run the Python suite (core, CLI, LSP end-to-end, Neovim and Emacs
# sessions), the writer's tests and races again with the Linux-only calls off, the fast layer
# again on every other Python from 3.10 to 3.13 (one venv each, .venv-py3XX), then the VS Code
# client's checks and its end-to-end test in a real VS Code (code-server + Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
.venv/bin/python -m pip install --quiet -e '.[test]'
scripts/system-deps.sh
scripts/agent-clis.sh || [ "${CI:-}" != true ]  # the real agents tests/fidelity drives; on CI a failed install fails
echo "== Python suite" >&2
.venv/bin/pytest tests "$@"  # `tests`: every layer (with no path pytest runs the fast ones only)
echo "== Malformed LSP traffic (10,000 messages, fixed seed; ~15 s)" >&2
.venv/bin/python tests/fuzz/lsp_traffic.py
echo "== Concurrent writers (5 runs of each race, 5 adds per writer)" >&2
.venv/bin/python tests/stress/races.py --runs 5 --adds 5
echo "== The writer's tests and races with the Linux-only calls off (the path macOS and Windows take)" >&2
MEMORY_LENS_PORTABLE_WRITES=1 .venv/bin/pytest -q tests/unit/test_writer_races.py tests/unit/test_writer_and_entries.py \
  tests/cli/test_write_safety.py tests/cli/test_concurrency.py tests/e2e/test_write_safety.py
MEMORY_LENS_PORTABLE_WRITES=1 .venv/bin/python tests/stress/races.py --runs 5 --adds 5
echo "== Bounded work: an import cycle bomb and a 10 MB buffer's storm of changes (each step killed after 120 s)" >&2
.venv/bin/python tests/stress/bounded_work.py
python_for() {  # an interpreter for Python $1: python$1 on PATH, else pyenv's latest $1
  if "python$1" -c '' 2>/dev/null; then command -v "python$1"; return; fi
  local found
  found="$(pyenv root 2>/dev/null)/versions/$(pyenv latest "$1" 2>/dev/null)/bin/python$1"
  [ -x "$found" ] && echo "$found"
}
main="$(.venv/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
for version in 3.10 3.11 3.12 3.13; do
  [ "$version" = "$main" ] && continue
  venv=".venv-py${version/./}"
  if ! python="$(python_for "$version")"; then
    [ "${CI:-}" = true ] && { echo "memory-lens: error: no Python $version here (CI runs every version)" >&2; exit 1; }
    echo "memory-lens: warning: no Python $version here: its fast layer is skipped" >&2
    continue
  fi
  echo "== Fast layer on Python $version ($venv)" >&2
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet -e '.[test]'
  "$venv/bin/python" -m pytest -q -p no:cacheprovider
done
if [ -f client-vscode/scripts/test.sh ]; then
  echo "== VS Code client" >&2
  bash client-vscode/scripts/test.sh
fi
