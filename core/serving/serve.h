// SPDX-License-Identifier: Apache-2.0
// A serving estimate: the memory plan, then vLLM's scheduler simulated over the
// workload with each step priced by the request's mode, summarised as serving
// benchmarks report it (TTFT, TPOT, ITL, end-to-end latency, throughput, cost).
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/kernel_registry.h"
#include "request/request.h"
#include "request/workload.h"
#include "serving/latency_stats.h"
#include "serving/memory.h"
#include "serving/scheduler.h"
#include "serving/validation.h"

namespace stepcalc {

/// The OpenAI API server's time per request, microseconds: parsing, chat template,
/// tokenization and hand-over to the engine core, one request at a time. The one
/// constant fitted on the measured serving runs (docs/ACCURACY.md, "Serving");
/// `workload.api_overhead_ms` overrides it.
constexpr double kDefaultApiOverheadUs = 0;

struct ServeThroughput {
  double output_tokens_per_s = 0, requests_per_s = 0, input_tokens_per_s = 0;
  double output_tokens_per_s_per_gpu = 0, requests_per_s_per_gpu = 0;
};

/// Dollars per million tokens: the GPU time of prefill work charged to input
/// tokens, of decode work to output tokens (each step split by its phases' times).
struct ServeCost {
  double gpu_hour_usd = 0;
  double usd_per_million_output_tokens = 0;
  double usd_per_million_input_tokens = 0;
  double usd_per_million_tokens_blended = 0;  ///< all GPU time over all tokens
};

struct ServeResult {
  EngineSettings engine;  ///< resolved
  ServingMemory memory;
  int64_t num_requests = 0;     ///< simulated, warm-up included
  int64_t warmup_requests = 0;  ///< the first N issued, left out of every figure below
  double mean_input_tokens = 0, mean_output_tokens = 0;
  LatencyStats ttft_ms, tpot_ms, itl_ms, e2e_ms;
  ServeThroughput throughput;
  ServeCost cost;
  double api_overhead_us = 0;  ///< the API-server time per request used
  double duration_s = 0;       ///< first send to last token
  SimulationTrace trace;       ///< steps, preemptions, queue peaks (its per-request arrays cleared)
  ValidationMatch validation;  ///< the accuracy ledger's subset nearest this request (docs/VALIDATION.md)
  std::vector<Warning> warnings;
};

/// Runs the estimate of `request.workload` for the request's model, GPU, TP, mode and
/// engine settings (its step is ignored). Errors name the field at fault
/// (`workload.concurrency`, `tp` for a model that does not fit, ...); `progress` may cancel.
Expected<ServeResult> run_serve(const Request& request, const KernelRegistry& kernels = no_kernels(),
                                const ProgressFn& progress = nullptr);

/// The memory plan of `request` (its model, precision, TP, GPU and engine settings,
/// vLLM's defaults filled in). Errors: a GPU without memory figures, engine settings
/// vLLM would refuse. A model that does not fit is a plan with `fits` false.
Expected<ServingMemory> request_memory(const Request& request);

/// Tokens of KV cache the requests of `step` hold once it has run.
double step_kv_tokens(const Step& step);

/// Validates a workload's sizes against docs/INPUT.md's limits; the error names the field.
Expected<bool> validate_workload(const Workload& w);

}  // namespace stepcalc
