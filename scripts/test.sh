#!/usr/bin/env bash
# Installs what is missing, checks the style, builds, and runs every test:
#   0. the static checks (scripts/lint.sh: Biome and tsc --checkJs, black and flake8), before the
#      builds: seconds
#   1. native GoogleTest suite and the Python package's unittest suite (ctest), then the same suite and the fuzz corpus replay built with
#      ASan+UBSan in build/asan (-DMHA_SANITIZE=address,undefined)
#   2. the libFuzzer targets built with clang (build/fuzz), each run for FUZZ_SMOKE_SECONDS (15)
#   3. the wasm module under node (tests/js) and the page's pure JS modules (tests/web)
#   4. the page in headless Chromium, served and from file:// (tests/browser)
# Exits non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install_deps.sh

status=0
echo "== static checks (scripts/lint.sh)"
./scripts/lint.sh || status=1

./scripts/build.sh
echo "== native tests (ctest)"
ctest --test-dir build/native --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" || status=1

echo "== native tests under ASan+UBSan (build/asan)"
# -O1 -g1: about half the compile time of -O2 -g; reports still carry file:line.
# MHA_NATIVE_ARCH=OFF: this build checks memory and UB, not speed; and at -O1, GCC 12 reports
# false "used uninitialized" errors inside its own AVX-512 headers (GCC bug 105593) on CPUs
# where -march=native enables AVX-512.
if cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMHA_SANITIZE=address,undefined \
     -DMHA_NATIVE_ARCH=OFF -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" >/dev/null &&
   cmake --build build/asan -j "$(nproc 2>/dev/null || echo 2)"; then
  ctest --test-dir build/asan --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" || status=1
else
  echo "test.sh: the ASan+UBSan build failed"
  status=1
fi

echo "== fuzz targets: clang build (build/fuzz) and a short run of each"
# Keeps the libFuzzer build compiling with clang and replays the committed corpus under it; a
# crash, sanitizer report or broken invariant found in these seconds fails the run.
./scripts/fuzz.sh "${FUZZ_SMOKE_SECONDS:-15}" || status=1

echo "== wasm module and page logic under node"
node --test tests/js/ tests/web/ || status=1

echo "== page in headless Chromium"
node --test --test-concurrency=1 tests/browser/ || status=1

if ((status)); then echo "test.sh: FAILED"; else echo "test.sh: all test suites passed"; fi
exit "$status"
