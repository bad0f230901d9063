// SPDX-License-Identifier: Apache-2.0
// The native benchmarks' twin for Wasm under node (Google Benchmark does not build
// for Emscripten): the same workloads, timed in batches with steady_clock
// (performance.now() under node), printed as one JSON object on stdout:
//   {"results": [{"name", "cpu_ns", "wall_ns", "batches", "iterations"}...]}
// (medians per call: CPU time of the process, and wall time)
// Usage: node stepcalc_bench_wasm.cjs CONFORMANCE_JSON [SECONDS_PER_BENCHMARK [NAME_FILTER]]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "api/api.h"
#include "bench_cases.h"
#include "estimators/reference/step_model.h"
#include "io/request_json.h"
#include "io/result_json.h"
#include "kernels/reference/mfu_tables.h"

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
// CPU time of the node process in ms (robust against other load on the machine).
EM_JS(double, process_cpu_ms, (), {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
});
#else
static double process_cpu_ms() { return 0; }
#endif

namespace {

using Clock = std::chrono::steady_clock;

volatile int64_t g_sink = 0;  // keeps results observable

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// Times `body` in batches of ~10 ms for `budget_s`; the median per-call time.
// Only the benchmarks whose name contains this text run (the third argument; all when empty).
std::string g_filter;

void run(const std::string& name, const std::function<void()>& body, double budget_s, bool* first) {
  if (name.find(g_filter) == std::string::npos) return;
  for (auto warm = Clock::now(); seconds_since(warm) < 0.1;) body();  // tier-up and caches
  size_t batch = 1;
  for (;;) {  // calibrate
    const auto start = Clock::now();
    for (size_t i = 0; i < batch; ++i) body();
    if (seconds_since(start) > 0.01 || batch >= (size_t{1} << 30)) break;
    batch *= 2;
  }
  std::vector<double> cpu_ns, wall_ns;
  size_t iterations = 0;
  const auto begin = Clock::now();
  while (cpu_ns.size() < 5 || (seconds_since(begin) < budget_s && cpu_ns.size() < 1000)) {
    const double cpu_start = process_cpu_ms();
    const auto start = Clock::now();
    for (size_t i = 0; i < batch; ++i) body();
    wall_ns.push_back(seconds_since(start) * 1e9 / static_cast<double>(batch));
    cpu_ns.push_back((process_cpu_ms() - cpu_start) * 1e6 / static_cast<double>(batch));
    iterations += batch;
  }
  std::printf("%s\n    {\"name\": \"%s\", \"cpu_ns\": %.3f, \"wall_ns\": %.3f, \"batches\": %zu, \"iterations\": %zu}",
              *first ? "" : ",", name.c_str(), median(cpu_ns), median(wall_ns), cpu_ns.size(), iterations);
  std::fflush(stdout);
  *first = false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: stepcalc_bench_wasm.cjs CONFORMANCE_JSON [SECONDS_PER_BENCHMARK [NAME_FILTER]]\n");
    return 2;
  }
  const double budget_s = argc > 2 ? std::atof(argv[2]) : 0.5;
  if (argc > 3) g_filter = argv[3];
  const std::vector<stepcalc::bench::BenchCase> cases = stepcalc::bench::load_bench_cases(argv[1]);
  if (cases.size() != 3) {
    std::fprintf(stderr, "bench: %s lacks the bench:a/b/c cases\n", argv[1]);
    return 1;
  }
  const stepcalc::MfuTables& tables = stepcalc::embedded_h100_tables();
  std::printf("{\"results\": [");
  bool first = true;
  for (const auto& c : cases) {
    auto parsed = stepcalc::parse_request(c.json);
    if (!parsed) return 1;
    const stepcalc::Request r = parsed.value();
    run(
        "price_step/" + c.tag, [&] { g_sink = g_sink + stepcalc::price_step(r, tables, false)->step_time_us; },
        budget_s, &first);
    run(
        "parse_request/" + c.tag,
        [&] { g_sink = g_sink + static_cast<int64_t>(stepcalc::parse_request(c.json).value().step.decode.size()); },
        budget_s, &first);
    run(
        "price_full/" + c.tag, [&] { g_sink = g_sink + stepcalc::price_step(r, tables, true)->step_time_us; }, budget_s,
        &first);
    {
      const stepcalc::StepResult full = *stepcalc::price_step(r, tables, true);
      run(
          "result_to_json/" + c.tag,
          [&] { g_sink = g_sink + static_cast<int64_t>(stepcalc::result_to_json(r, full, tables).size()); }, budget_s,
          &first);
    }
    run(
        "price_json/" + c.tag, [&] { g_sink = g_sink + static_cast<int64_t>(stepcalc::price_json(c.json)->size()); },
        budget_s, &first);
  }
  for (const auto& s : stepcalc::bench::bench_sweeps()) {
    std::string json;
    for (const auto& c : cases)
      if (c.tag == s.tag) json = c.json;
    run(
        s.name, [&] { g_sink = g_sink + static_cast<int64_t>(stepcalc::sweep_json(json, s.axis, s.values)->size()); },
        budget_s, &first);
  }
  std::printf("\n]}\n");
  return 0;
}
