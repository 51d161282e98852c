#!/usr/bin/env bash
# Installs what is missing, checks the style, builds, and runs every test:
#   0. the static checks (scripts/lint.sh: Biome and tsc --checkJs, black and flake8), before the
#      builds: seconds
#   1. native GoogleTest suite and the Python package's unittest suite (ctest), then the same suite and the fuzz corpus replay built with
#      ASan+UBSan in build/asan (-DMHA_SANITIZE=address,undefined)
#   2. the libFuzzer targets built with clang (build/fuzz), each run for FUZZ_SMOKE_SECONDS (15)
#   3. the wasm module under node (tests/js) and the page's pure JS modules (tests/web)
#   4. the page in headless Chromium, served and from file:// (tests/browser)
#   5. the Python package as pip installs it: the wheel (python3 -m build, its module from
#      build/native: setup.py MHA_BUILD_DIR), installed into a fresh virtual environment, and
#      tests/python run against that copy from another folder
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

echo "== Python wheel: built, installed into a fresh venv, tests/python run against it"
# The wheel's module is the native build's (MHA_BUILD_DIR: setup.py builds its target there, with
# its settings). The venv sees Debian's numpy and torch (--system-site-packages); the suite runs
# from a scratch folder without PYTHONPATH, so `import mha_lab` finds only the installed copy.
root=$PWD
scratch=$(mktemp -d)
if rm -rf build/pip/wheel &&
   MHA_BUILD_DIR=build/native /usr/bin/python3 -m build --wheel --no-isolation --outdir build/pip/wheel . \
     >"$scratch/build.log" 2>&1 &&
   /usr/bin/python3 -m venv --system-site-packages "$scratch/venv" &&
   "$scratch/venv/bin/pip" install --no-index --quiet build/pip/wheel/mha_lab-*.whl; then
  (cd "$scratch" && unset PYTHONPATH && export MHA_CLI="$root/build/native/mha" OPENBLAS_NUM_THREADS=1 &&
   venv/bin/python -c "import mha_lab; print('installed:', mha_lab.__file__, mha_lab.__version__)" &&
   venv/bin/python -m unittest discover -s "$root/tests/python") || status=1
else
  tail -n 30 "$scratch/build.log"
  echo "test.sh: building or installing the wheel failed"
  status=1
fi
rm -rf "$scratch"

if ((status)); then echo "test.sh: FAILED"; else echo "test.sh: all test suites passed"; fi
exit "$status"
