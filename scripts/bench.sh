#!/usr/bin/env bash
# Benchmarks (not tests: scripts/test.sh never runs this). Installs what is missing — the build's
# own dependencies, Debian's python3-torch, python3-onnx and OpenBLAS, and the peers of
# scripts/bench/package-lock.json (onnxruntime-web 1.17.3 and 1.30.0, tfjs-backend-wasm 4.22) —
# builds the native core and the wasm module, then runs scripts/bench/bench.mjs:
#
#   ./scripts/bench.sh            every system on every configuration, the page's timings and
#                                 download size, the scaling of our core; rewrites docs/benchmarks.md
#   ./scripts/bench.sh --quick    (5, 8, 2) only, 3 repetitions: agreement with PyTorch only
#   other options (--no-browser, --no-page, --no-scaling, --out FILE) are passed to bench.mjs
#
# Exits non-zero when any system's output or per-head weights disagree with PyTorch's.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install_deps.sh --bench

# Builds: the native core library, the wasm module and the page (dist/, for the page timings).
export NODE_PATH=/usr/share/nodejs
cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
native_targets=(mha_attention)
# The core's own timing tool (docs/cli.md "mha_bench"), where this checkout has it.
grep -q "add_executable(mha_bench" CMakeLists.txt && native_targets+=(mha_bench)
cmake --build build/native -j2 --target "${native_targets[@]}"
emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/wasm -j2
node scripts/build_web.mjs --wasm build/wasm/mha_wasm.js --out dist >/dev/null
# The wasm SIMD128 multiply+add peak (docs/benchmarks.md: our share of it), one small module.
mkdir -p build/bench
em++ -std=c++17 -O3 -msimd128 -sSINGLE_FILE=1 -sMODULARIZE=1 -sEXPORT_NAME=createSimdPeak \
    -sEXPORTED_FUNCTIONS=_simd_peak_rows -sDYNAMIC_EXECUTION=0 --pre-js cpp/bindings/wasm/pre.js \
    scripts/bench/simd_peak.cpp \
    -o build/bench/simd_peak.js

# The native timing driver: the public API of cpp/attention, linked against the library just built.
mkdir -p build/bench
# Rebuilt every run (seconds): it must match the flags the library was just built with.
# The core's own architecture flags (MHA_NATIVE_ARCH: -march=native): mixing them with generic
# objects would mix Eigen's alignments (a double free at the first forward).
arch=()
grep -q "^MHA_NATIVE_ARCH:BOOL=ON" build/native/CMakeCache.txt 2>/dev/null && arch=(-march=native)
# Eigen's products on OpenBLAS (MHA_USE_BLAS, where CMake found it): the same in every object.
blas=()
if grep -q "^MHA_USE_BLAS:BOOL=ON" build/native/CMakeCache.txt && grep -q "^BLAS_openblas_WORKS:INTERNAL=1" build/native/CMakeCache.txt; then
  blas=(-DEIGEN_USE_BLAS -DMHA_GEMM_OPENBLAS)
fi
g++ -std=c++17 -O3 -DNDEBUG "${arch[@]}" "${blas[@]}" -Wall -Wextra -Werror -I cpp/attention -isystem /usr/include/eigen3 \
    scripts/bench/mha_native_bench.cpp build/native/cpp/attention/libmha_attention.a ${blas:+-lopenblas} -o build/bench/mha_native_bench

exec node scripts/bench/bench.mjs "$@"
