#!/usr/bin/env bash
# Builds everything (installing what is missing), then serves the page at
# http://127.0.0.1:8000/ (PORT=... to change). dist/index.html also works opened from disk.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
port="${PORT:-8000}"
echo
echo "mha-lab page: http://127.0.0.1:${port}/   (Ctrl-C to stop)"
echo "offline copy: file://$(pwd)/dist/index.html"
exec node scripts/serve.mjs --dir dist --port "$port" --host 127.0.0.1
