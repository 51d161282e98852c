#!/usr/bin/env bash
# Benchmarks (not tests: scripts/test.sh never runs this). Installs what is missing — the build's
# own dependencies, Debian's python3-torch, python3-onnx (it writes the minimal ONNX graph) and
# OpenBLAS, and the peers of scripts/bench/package-lock.json (onnxruntime-web 1.17.3 and 1.30.0,
# tfjs-backend-wasm 4.22) —
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
# The core's timing tool (docs/cli.md "mha_bench"): it drives every native row of the report.
cmake --build build/native -j2 --target mha_bench
emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/wasm -j2
node scripts/build_web.mjs --wasm build/wasm/mha_wasm.js --out dist >/dev/null
# The wasm SIMD128 multiply+add peak (docs/benchmarks.md: our share of it), one small module.
mkdir -p build/bench
em++ -std=c++17 -O3 -msimd128 -sSINGLE_FILE=1 -sMODULARIZE=1 -sEXPORT_NAME=createSimdPeak \
    -sEXPORTED_FUNCTIONS=_simd_peak_rows -sDYNAMIC_EXECUTION=0 --pre-js cpp/bindings/wasm/pre.js \
    scripts/bench/simd_peak.cpp \
    -o build/bench/simd_peak.js

exec node scripts/bench/bench.mjs "$@"
