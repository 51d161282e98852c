#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test:
#   1. native GoogleTest suite (ctest)
#   2. the wasm module under node (tests/js) and the page's pure JS modules (tests/web)
#   3. the page in headless Chromium, served and from file:// (tests/browser)
# Exits non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh

status=0
echo "== native tests (ctest)"
ctest --test-dir build/native --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" || status=1

echo "== wasm module and page logic under node"
node --test tests/js/ tests/web/ || status=1

echo "== page in headless Chromium"
node --test --test-concurrency=1 tests/browser/ || status=1

if ((status)); then echo "test.sh: FAILED"; else echo "test.sh: all test suites passed"; fi
exit "$status"
