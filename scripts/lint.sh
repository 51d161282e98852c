#!/usr/bin/env bash
# Style checks of the repository's code; exits non-zero if any fails.
# Python: black (pyproject.toml: line length 100) formats every .py file, flake8 (.flake8) checks
# them; `black .` rewrites what --check reports. Both are Debian packages (scripts/install_deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
status=0

echo "== Python: black --check, flake8"
mapfile -t python_files < <(git ls-files '*.py')
black --check --quiet "${python_files[@]}" || status=1
flake8 "${python_files[@]}" || status=1

exit $status
