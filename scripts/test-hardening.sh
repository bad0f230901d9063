#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Hardening checks (issue 5), called by scripts/test.sh. One clang build in
# build/sanitize with AddressSanitizer + UndefinedBehaviorSanitizer on the core, the
# CLI, the tests and the libFuzzer target (the core also carries libFuzzer's coverage
# instrumentation, harmless for the tests; one build instead of two keeps the script
# within ~5 minutes on 2 cores):
#  1. the native core tests and conformance (ctest);
#  2. the fuzzer over the JSON front door, for a bounded time, over a copy of the
#     seed corpus (tests/fuzz/corpus stays untouched);
#  3. the bad-input catalogue through the release CLI (tests/cli) and determinism of
#     the conformance cases natively, in Node and in Chromium (tests/determinism):
#     the layers scripts/test.sh does not run itself.
# Any sanitizer report or fuzzer finding fails the script. Fuzzing time: 60 s when
# CI=true, 20 s otherwise, or STEPCALC_FUZZ_SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== bad-input catalogue through the CLI; determinism native / Node / Chromium"
node --test --test-concurrency=1 tests/cli/ tests/determinism/

jobs=$(nproc 2>/dev/null || echo 2)
start=$SECONDS

export CC=clang CXX=clang++
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
build=build/sanitize

echo "== clang build with ASan + UBSan and the fuzzer ($build)"
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link \
  -DSTEPCALC_SANITIZE=ON -DSTEPCALC_FUZZ=ON >/dev/null
cmake --build "$build" -j"$jobs" --target stepcalc stepcalc_tests stepcalc_fuzz stepcalc_fuzz_kernel_pack >/dev/null

echo "== sanitizers: core tests and conformance under ASan + UBSan"
ctest --test-dir "$build" --output-on-failure

echo "== fuzzing: stepcalc_fuzz over price_document, price_json, sweep_json, serve_document and plan_json"
if [ -n "${STEPCALC_FUZZ_SECONDS:-}" ]; then
  seconds=$STEPCALC_FUZZ_SECONDS
elif [ "${CI:-}" = "true" ]; then
  seconds=60
else
  seconds=20
fi
work="$build/fuzz-run"
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
cp tests/fuzz/corpus/* "$work/corpus/"
status=0
"$build/stepcalc_fuzz" "$work/corpus" -dict=tests/fuzz/request.dict -max_total_time="$seconds" \
  -max_len=65536 -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" 2>"$work/fuzz.log" || status=$?
grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+ +DONE" "$work/fuzz.log" || true
if [ "$status" -ne 0 ] || [ -n "$(ls -A "$work/artifacts")" ]; then
  tail -n 60 "$work/fuzz.log"
  echo "fuzzing: FINDING (exit $status); reproducer(s) in $work/artifacts:" >&2
  ls -l "$work/artifacts" >&2
  exit 1
fi

# The kernel-pack decoder: seeded with the build's real packs (one GPU's, small ones
# first), a third of the JSON fuzzer's time.
echo "== fuzzing: stepcalc_fuzz_kernel_pack over KernelDb::unpack and the registry"
pack_seconds=$(( (seconds + 2) / 3 ))
mkdir -p "$work/packs" "$work/pack-artifacts"
cp build/kernels/h100-vllm-0.14.0-*.bin "$work/packs/"
status=0
"$build/stepcalc_fuzz_kernel_pack" "$work/packs" -max_total_time="$pack_seconds" -max_len=65536 -timeout=5 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/pack-artifacts/" 2>"$work/fuzz-pack.log" || status=$?
grep -E "^stat::number_of_executed_units|^#[0-9]+ +DONE" "$work/fuzz-pack.log" || true
if [ "$status" -ne 0 ] || [ -n "$(ls -A "$work/pack-artifacts")" ]; then
  tail -n 60 "$work/fuzz-pack.log"
  echo "fuzzing: kernel-pack FINDING (exit $status); reproducer(s) in $work/pack-artifacts:" >&2
  exit 1
fi
echo "hardening: ok (sanitizers clean, ${seconds} s + ${pack_seconds} s of fuzzing without a finding, $((SECONDS - start)) s in all)"
