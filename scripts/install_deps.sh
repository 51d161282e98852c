#!/usr/bin/env bash
# Installs what mha-lab needs to build and test on Debian 12, skipping whatever is present:
# Debian packages (toolchains, header-only libraries, Chromium) and the npm packages of
# package-lock.json. Called by build.sh, so test.sh and demo.sh get it too.
#
# Python: Debian's python3-dev, python3-pybind11 and python3-numpy build and test the package
# mha_lab (cpp/bindings/python, docs/python.md); pip, venv, build, setuptools and wheel build its
# wheel and install it into a virtual environment (setup.py, scripts/test.sh); nbformat, nbclient,
# nbconvert and ipykernel run and export the notebook of tests/browser/notebook.test.mjs; mkdocs,
# Sphinx and MyST build the course-site examples of docs/embedding.md
# (tests/browser/sites.test.mjs). PyTorch, xxhash and sentencepiece (the English tokenizer) run
# the training scripts' smoke tests (tests/training, a few steps of each model) and regenerate
# golden data and the models (scripts/fixtures/, scripts/training/); --fixtures adds the pthread
# OpenBLAS those use. black and flake8 check the Python code (scripts/lint.sh).
# --fuzz adds clang and its compiler-rt (libFuzzer, ASan, UBSan) for scripts/fuzz.sh.
# --bench adds what scripts/bench.sh compares against: Debian's PyTorch, ONNX (the minimal graph)
# and OpenBLAS, and the npm peers of scripts/bench/package-lock.json (scripts/bench/node_modules).
set -euo pipefail
cd "$(dirname "$0")/.."

bench=0
packages=(cmake make g++ pkg-config libeigen3-dev libopenblas-dev xtl-dev nlohmann-json3-dev libxxhash-dev libgtest-dev
          emscripten chromium fonts-dejavu-core libxml2-utils
          python3-dev python3-pybind11 python3-numpy python3-torch python3-xxhash python3-sentencepiece python3-hypothesis black flake8
          python3-pip python3-venv python3-build python3-setuptools python3-wheel
          python3-nbformat python3-nbclient python3-nbconvert python3-ipykernel
          mkdocs python3-sphinx python3-myst-parser)
for arg in "$@"; do
  case "$arg" in
    --fixtures) packages+=(libopenblas0-pthread) ;;
    --fuzz) packages+=(clang libclang-rt-14-dev) ;;
    --bench) packages+=(python3-numpy python3-torch python3-onnx libopenblas0-pthread); bench=1 ;;
    *) echo "install_deps: unknown option $arg (--fixtures, --fuzz, --bench)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node and npm: any install will do (Debian's nodejs + npm, or a newer one already on the machine).
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)

if ((${#missing[@]})); then
  echo "install_deps: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# npm packages, exactly as locked; reinstalled only when package-lock.json changed.
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "install_deps: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi

# Benchmark peers (onnxruntime-web, tfjs), kept out of the root package.json so the tests' npm ci
# stays small.
if ((bench)) && [[ ! -f scripts/bench/node_modules/.package-lock.json ||
                  scripts/bench/package-lock.json -nt scripts/bench/node_modules/.package-lock.json ]]; then
  echo "install_deps: npm ci (scripts/bench)"
  (cd scripts/bench && npm ci --no-audit --no-fund --loglevel=error)
fi
