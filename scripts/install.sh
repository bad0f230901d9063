#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what stepcalc needs to build, test and serve, and nothing that is there
# already. Safe to run any number of times; `npm start` and `npm test` both call it.
# Debian 12 packages: emscripten (emcc + Embind), node-acorn (emcc's JS optimizer),
# cmake/g++/clang (native build, sanitizers, libFuzzer), libsimdjson-dev + doctest-dev
# (single headers), chromium (page tests), the simdjson source package (simdjson.cpp
# for the Wasm build). npm: playwright-core (drives the Debian chromium), esbuild
# (bundles the page; its binary comes in the npm package @esbuild/linux-x64).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
vendor="$here/build/vendor"
export DEBIAN_FRONTEND=noninteractive

sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in emscripten node-acorn cmake g++ clang clang-format libclang-rt-14-dev libsimdjson-dev doctest-dev \
         chromium libbenchmark-dev dpkg-dev; do
  have_pkg "$p" || need+=("$p")
done

updated=0
apt_update() { if [ $updated = 0 ]; then sudo_ apt-get update -qq; updated=1; fi; }

if [ ${#need[@]} -gt 0 ]; then
  echo "install: apt-get install ${need[*]}"
  apt_update
  sudo_ apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# Build-local copies of the single headers and simdjson.cpp: emcc must never see
# /usr/include, so the Wasm build reads these instead.
mkdir -p "$vendor/include"
[ -f "$vendor/include/simdjson.h" ] || cp /usr/include/simdjson.h "$vendor/include/"
[ -f "$vendor/include/doctest.h" ] || cp /usr/include/doctest/doctest.h "$vendor/include/"
if [ ! -f "$vendor/simdjson.cpp" ]; then
  if ! grep -rqs '^deb-src .*debian' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      grep -q 'deb-src' /etc/apt/sources.list.d/debian.sources || \
        sudo_ sed -i 's/^Types: deb$/Types: deb deb-src/' /etc/apt/sources.list.d/debian.sources
    else
      grep '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' | sudo_ tee /etc/apt/sources.list.d/stepcalc-src.list >/dev/null
    fi
    updated=0
  fi
  apt_update
  tmp=$(mktemp -d)
  ver=$(dpkg-query -W -f='${source:Version}' libsimdjson-dev)
  (cd "$tmp" && apt-get source -qq --download-only "simdjson=$ver" >/dev/null 2>&1 || apt-get source -qq --download-only simdjson >/dev/null)
  tar -C "$tmp" -xf "$(ls "$tmp"/simdjson_*.orig.tar.* | head -n 1)"
  src=$(find "$tmp" -path '*singleheader/simdjson.cpp' | head -n 1)
  [ -n "$src" ] || { echo "install: simdjson.cpp not found in the source package" >&2; exit 1; }
  cp "$src" "$vendor/simdjson.cpp"
  # The header must match the .cpp: take both from the same source release.
  cp "$(dirname "$src")/simdjson.h" "$vendor/include/simdjson.h"
  rm -rf "$tmp"
fi

# npm packages (playwright-core only drives the system chromium; it downloads nothing;
# esbuild's binary is an npm package of its own, no download script is needed;
# hyparquet + hyparquet-compressors read AIConfigurator's Parquet in tools/import-aic.mjs).
# Every devDependency of package.json is checked, so a new one is installed too.
missing_npm=$(cd "$here" && node -e '
  const fs = require("fs");
  const deps = Object.keys(require("./package.json").devDependencies || {});
  console.log(deps.filter((d) => !fs.existsSync(`node_modules/${d}/package.json`)).join(" "));')
if [ -n "$missing_npm" ]; then
  echo "install: npm install (missing: $missing_npm)"
  (cd "$here" && npm install --no-audit --no-fund --loglevel=error)
fi
echo "install: ok"
