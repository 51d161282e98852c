#!/usr/bin/env bash
# The repository's static checks: Biome (format and lint, biome.json) over the hand-written
# JavaScript, and the TypeScript compiler over the page (tsconfig.json: web/src checked against the
# wasm modules' declarations, cpp/bindings/wasm/mha_wasm.d.ts). Exits non-zero on any finding.
# `npx biome check --write` applies Biome's formatting and safe fixes. See docs/lint.md.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== JS: biome check"
npx --no-install biome check

echo "== JS: tsc --checkJs"
npx --no-install tsc -p tsconfig.json
