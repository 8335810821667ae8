#!/usr/bin/env bash
# Set up Memory Lens from a fresh clone: a virtual environment in .venv with the package
# (editable) and what it needs to run; `scripts/test.sh` adds the test tools. Idempotent. Needs
# Python >= 3.10.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
"$PYTHON" - <<'PY' || { echo "memory-lens: error: Python >= 3.10 is required (set PYTHON=/path/to/python3.x)" >&2; exit 1; }
import sys
sys.exit(0 if sys.version_info >= (3, 10) else 1)
PY
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e .
echo "memory-lens: set up in .venv ($(.venv/bin/memory-lens --version))" >&2
