#!/usr/bin/env bash
# Installs what is missing, then builds everything:
#   build/native/  the core, the `mha` CLI, the GoogleTest suite (g++) and the Python package
#                  in build/native/python/mha_lab (docs/python.md)
#   build/wasm/    mha_wasm.js, the same core as WebAssembly (Embind, single file)
#   dist/          the page: open dist/index.html from disk, or serve the folder
#   build/npm/     mha-attention-<version>.tgz, the element's npm package (scripts/pack_npm.mjs)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install_deps.sh

jobs=$(nproc 2>/dev/null || echo 2)

echo "== native build (build/native)"
cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/native -j "$jobs"

echo "== wasm build (build/wasm)"
# Debian's em++ runs Debian's acorn from /usr/share/nodejs.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/wasm -j "$jobs"

echo "== page (dist)"
node scripts/build_web.mjs --wasm build/wasm/mha_wasm.js --out dist

echo "== npm package (build/npm)"
node scripts/pack_npm.mjs --dist dist --out build/npm
echo "built: build/native/mha, build/native/python/mha_lab, build/wasm/mha_wasm.js, dist/index.html, build/npm/mha-attention-*.tgz"
