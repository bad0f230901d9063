// SPDX-License-Identifier: Apache-2.0
// Native benchmarks (Google Benchmark) of the calculator's hot paths for the three
// bench cases. Two views of "one price()":
//   price_step   a parsed Request -> StepResult, detail off: the pricing alone
//   price_json   JSON text in -> result JSON text out: what one page call costs
// and its parts (parse_request, price_step with detail, result_to_json), the two
// 1,000-point sweeps, the one-off decoding of the embedded tables and the serving
// simulation of 1,000 requests (BM_serve_json).
// Run by bench/run.mjs; see BENCHMARKS.md.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "api/api.h"
#include "api/pricing_session.h"
#include "bench_cases.h"
#include "estimators/reference/step_model.h"
#include "io/request_json.h"
#include "io/result_json.h"
#include "kernels/kernel_catalogue.h"
#include "kernels/kernel_registry.h"
#include "kernels/reference/mfu_tables.h"

namespace {

using stepcalc::bench::BenchCase;

std::vector<BenchCase>& cases() {
  static std::vector<BenchCase> all =
      stepcalc::bench::load_bench_cases(STEPCALC_SOURCE_DIR "/tests/data/conformance-cases.json");
  return all;
}

const BenchCase& bench_case(size_t i) { return cases().at(i); }

stepcalc::Request parsed(size_t i) {
  auto r = stepcalc::parse_request(bench_case(i).json);
  if (!r) {
    std::fprintf(stderr, "bench: case %s does not parse: %s\n", bench_case(i).id.c_str(), r.error().message.c_str());
    std::exit(1);
  }
  return r.value();
}

/// Runs `work` once per benchmark iteration, keeping its result from being optimized away.
template <typename Work>
void each_iteration(benchmark::State& state, Work work) {
  for (auto _ : state) {
    auto result = work();
    benchmark::DoNotOptimize(result);
  }
}

void BM_price_step(benchmark::State& state) {
  const stepcalc::Request r = parsed(static_cast<size_t>(state.range(0)));
  const stepcalc::MfuTables& tables = stepcalc::embedded_h100_tables();
  each_iteration(state, [&] { return stepcalc::price_step(r, tables, false); });
}

// The summary kernel through a pricer: the setup (model x GPU x TP x mode) is
// resolved on the first call and reused, the scratch is warm: what a sweep, a
// batch or a simulation pays per step.
void BM_price_summary(benchmark::State& state) {
  const stepcalc::Request r = parsed(static_cast<size_t>(state.range(0)));
  stepcalc::PricingSession pricer(stepcalc::embedded_h100_tables());
  each_iteration(state, [&] { return pricer.summary(r); });
}

// The summary with the setup resolved on every call (validation, switches, table
// choices): a one-off pricing of a request.
void BM_price_summary_cold(benchmark::State& state) {
  const stepcalc::Request r = parsed(static_cast<size_t>(state.range(0)));
  const stepcalc::MfuTables& tables = stepcalc::embedded_h100_tables();
  stepcalc::PricingScratch scratch;
  each_iteration(state, [&] {
    auto setup = stepcalc::prepare_pricing(r, tables);
    return stepcalc::price_summary(setup.value(), r, &scratch);
  });
}

/// H100's default measured kernel set, read from the build's packs once.
const stepcalc::KernelRegistry& h100_kernels() {
  static const stepcalc::KernelRegistry registry = [] {
    stepcalc::KernelRegistry r;
    auto which = stepcalc::resolve_kernels("H100", "");
    const stepcalc::KernelSet* set = which ? stepcalc::find_kernel_set(which->first, which->second) : nullptr;
    if (set == nullptr) {
      std::fprintf(stderr, "bench: no H100 kernel set\n");
      std::exit(1);
    }
    for (const stepcalc::KernelPartInfo& p : set->parts) {
      std::ifstream in(std::string(STEPCALC_KERNELS_DIR) + "/" + set->file_name(p.name), std::ios::binary);
      std::stringstream bytes;
      bytes << in.rdbuf();
      const std::string b = bytes.str();
      if (!r.add_pack(reinterpret_cast<const uint8_t*>(b.data()), b.size())) {
        std::fprintf(stderr, "bench: cannot load the kernel pack %s\n", p.name);
        std::exit(1);
      }
    }
    return r;
  }();
  return registry;
}

// The measured mode's summary through a pricer (plan resolved once): the budget is
// within 2x of blis-v2's BM_price_summary on the same case.
void BM_price_summary_measured(benchmark::State& state) {
  stepcalc::Request r = parsed(static_cast<size_t>(state.range(0)));
  r.mode = stepcalc::Mode::kMeasured;
  stepcalc::PricingSession pricer(stepcalc::embedded_h100_tables(), h100_kernels());
  if (!pricer.summary(r)) {
    state.SkipWithError("the case does not price in measured mode");
    return;
  }
  each_iteration(state, [&] { return pricer.summary(r); });
}

void BM_price_step_detail(benchmark::State& state) {
  const stepcalc::Request r = parsed(static_cast<size_t>(state.range(0)));
  const stepcalc::MfuTables& tables = stepcalc::embedded_h100_tables();
  each_iteration(state, [&] { return stepcalc::price_step(r, tables, true); });
}

void BM_parse_request(benchmark::State& state) {
  const std::string& json = bench_case(static_cast<size_t>(state.range(0))).json;
  each_iteration(state, [&] { return stepcalc::parse_request(json); });
}

void BM_result_to_json(benchmark::State& state) {
  const stepcalc::Request r = parsed(static_cast<size_t>(state.range(0)));
  const stepcalc::MfuTables& tables = stepcalc::embedded_h100_tables();
  const auto result = stepcalc::price_step(r, tables, true);
  for (auto _ : state) {
    std::string json = stepcalc::result_to_json(r, result.value(), tables);
    benchmark::DoNotOptimize(json);
  }
}

void BM_price_json(benchmark::State& state) {
  const std::string& json = bench_case(static_cast<size_t>(state.range(0))).json;
  each_iteration(state, [&] { return stepcalc::price_json(json); });
}

void BM_sweep_json(benchmark::State& state) {
  const stepcalc::bench::BenchSweep sweep = stepcalc::bench::bench_sweeps().at(static_cast<size_t>(state.range(0)));
  std::string json;
  for (const BenchCase& c : cases())
    if (c.tag == sweep.tag) json = c.json;
  each_iteration(state, [&] { return stepcalc::sweep_json(json, sweep.axis, sweep.values); });
}

void BM_tables_decode(benchmark::State& state) {
  each_iteration(state, [&] {
    auto raw = stepcalc::unpack_tables(stepcalc::embedded_tables_blob(), stepcalc::embedded_tables_blob_size());
    return stepcalc::MfuTables::build(raw.value(), "h100");
  });
}

// The serving simulation (serve_json) of bench_cases.h's workload, per mode; the
// measured mode prices with H100's default kernel set (h100_kernels(), read once; it was
// the vllm-0.14.0 packs by name, which stopped matching when the default moved on).
void BM_serve_json(benchmark::State& state) {
  const stepcalc::KernelRegistry* kernels = &h100_kernels();
  const std::string json = stepcalc::bench::serve_bench_request(
      stepcalc::bench::serve_bench_modes().at(static_cast<size_t>(state.range(0))));
  for (auto _ : state) {
    auto served = stepcalc::serve_json(json, *kernels);
    if (!served) {
      state.SkipWithError(served.error().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(served.value().size());
  }
}

// Names carry the case tag: price_step/bench:a, ...
void case_args(benchmark::internal::Benchmark* b) {
  for (int i = 0; i < 3; ++i) b->Arg(i);
  b->ArgName("");
}

}  // namespace

BENCHMARK(BM_price_step)->Apply(case_args);
BENCHMARK(BM_price_summary)->Apply(case_args);
BENCHMARK(BM_price_summary_cold)->Apply(case_args);
BENCHMARK(BM_price_summary_measured)->Apply(case_args);
BENCHMARK(BM_price_step_detail)->Apply(case_args);
BENCHMARK(BM_parse_request)->Apply(case_args);
BENCHMARK(BM_result_to_json)->Apply(case_args);
BENCHMARK(BM_price_json)->Apply(case_args);
BENCHMARK(BM_sweep_json)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_tables_decode)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_serve_json)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(3);

int main(int argc, char** argv) {
  if (cases().size() != 3) {
    std::fprintf(stderr, "bench: tests/data/conformance-cases.json lacks the bench:a/b/c cases\n");
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
