#!/usr/bin/env bash
# The repository's static checks; exits non-zero if any finds something, after running them all.
#   JavaScript: Biome (format and lint, biome.json) over the hand-written JavaScript, and the
#     TypeScript compiler over the page (tsconfig.json: web/src checked against the wasm modules'
#     declarations, cpp/bindings/wasm/mha_wasm.d.ts). `npx biome check --write` applies Biome's
#     formatting and safe fixes. See docs/lint.md.
#   Python: black (pyproject.toml: line length 100) formats every .py file, flake8 (.flake8) checks
#     them; `black .` rewrites what --check reports. Both are Debian packages (scripts/install_deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
status=0

echo "== JS: biome check"
npx --no-install biome check || status=1

echo "== JS: tsc --checkJs"
npx --no-install tsc -p tsconfig.json || status=1

echo "== Python: black --check, flake8"
mapfile -t python_files < <(git ls-files '*.py')
black --check --quiet "${python_files[@]}" || status=1
flake8 "${python_files[@]}" || status=1

exit $status
