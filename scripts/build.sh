#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds everything into build/: the native core, CLI (build/stepcalc) and tests,
# then the Wasm module (wasm/dist/) and the core tests compiled to Wasm (build/wasm/),
# then the page's bundle (web/dist/, scripts/build-page.mjs).
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"  # emcc's JS optimizer needs acorn from here
jobs=$(nproc 2>/dev/null || echo 2)

# A fresh clone has no build/vendor (simdjson.cpp, single headers) nor node_modules:
# run the set-up first instead of failing inside CMake.
if [ ! -f build/vendor/simdjson.cpp ] || [ ! -d node_modules ]; then
  echo "build: set-up missing (build/vendor or node_modules): running scripts/install.sh (npm run setup)"
  bash scripts/install.sh
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"

emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/wasm -j"$jobs"
node scripts/build-page.mjs
echo "build: ok (native CLI build/stepcalc, Wasm wasm/dist/, page web/dist/)"
