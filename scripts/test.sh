#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every test layer over a finished build (scripts/build.sh): native core and
# conformance (ctest), the core suite compiled to Wasm under node, the Wasm module
# and loader (node --test), the page in headless Chromium, and the loader's types.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== formatting (clang-format, .clang-format: Google style, 120 columns)"
clang-format --dry-run --Werror $(find core -name '*.cpp' -o -name '*.h') cli/*.cpp wasm/*.cpp tests/core/*.cpp tests/core/*.h \
  tests/fuzz/*.cpp bench/*.cpp bench/*.h

echo "== core layers (scripts/check-layers.mjs: every include in core/ points to its own layer or a lower one)"
node scripts/check-layers.mjs

echo "== licence lines (SPDX-License-Identifier in every source file)"
bash scripts/check-spdx.sh

echo "== benchmark sources compile (syntax only: npm run bench builds them with Google Benchmark and emcc)"
g++ -std=c++17 -fsyntax-only -Icore -isystem build/vendor/include -DSIMDJSON_EXCEPTIONS=0 \
  -DSTEPCALC_SOURCE_DIR='"."' -DSTEPCALC_KERNELS_DIR='"build/kernels"' bench/bench_native.cpp bench/bench_wasm.cpp

echo "== native core tests and conformance (ctest)"
ctest --test-dir build --output-on-failure

echo "== core tests compiled to Wasm, under node"
node build/wasm/stepcalc_tests_wasm.cjs --no-colors

echo "== loader types (tsc): usage, and the core's real results against wasm/stepcalc.d.ts"
node node_modules/typescript/bin/tsc -p tests/types/tsconfig.json

echo "== JavaScript lint (ESLint over every .js/.mjs/.cjs; eslint.config.js) and 120 columns (also HTML, CSS, .d.ts)"
node node_modules/eslint/bin/eslint.js --max-warnings 0 .
node scripts/check-line-length.mjs

echo "== JavaScript type-check (tsc checkJs: the page; the loader, tools and scripts with Node's types)"
node node_modules/typescript/bin/tsc -p tests/types/tsconfig.web.json
node node_modules/typescript/bin/tsc -p tests/types/tsconfig.tools.json
node tests/types/check-results.mjs

echo "== documents (tools/docs-blocks.mjs --check: every generated block of README.md and docs/*.md is current)"
node tools/docs-blocks.mjs --check

echo "== accuracy ledger (tools/validate-check.mjs: a spread of docs/validation.json re-priced exactly; MAPE vs baseline)"
node tools/validate-check.mjs

echo "== CLI, Wasm module and page (node --test)"
node --test --test-concurrency=1 tests/cli/ tests/wasm/ tests/web/

if [ -f scripts/test-hardening.sh ]; then
  echo "== hardening: sanitizers and fuzzing"
  bash scripts/test-hardening.sh
fi
