// SPDX-License-Identifier: Apache-2.0
// A serving estimate: the memory plan, then vLLM's scheduler simulated over the
// workload with each step priced by the request's mode, summarised as serving
// benchmarks report it (TTFT, TPOT, ITL, end-to-end latency, throughput, cost).
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "base/input_limits.h"
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

/// Open-loop passes when `workload.num_requests` is not given: each simulates this many
/// requests (a fifth of them warm-up) until the figures settle or the engine is overloaded.
constexpr int64_t kSteadyPassRequests[] = {64, 256, 1024, 4096};
/// Settled: the steady window spans at least this many mean end-to-end latencies ...
constexpr double kSteadyLatencies = 10;
/// ... and holds at least this many measured requests (a queue growing by a few percent of
/// the offered rate shows only over some hundreds of arrivals).
constexpr int64_t kSteadyMinMeasured = 800;
/// ... unless requests waited through at most this share of the window (a queue that
/// seldom forms cannot be growing).
constexpr double kSteadyIdleQueuedShare = 0.05;
/// Overloaded: requests are left waiting at the window's end, and over the window the
/// requests in the engine grew (least-squares trend) by more than this many times the
/// square root of their mean number, the size of a Poisson count's fluctuation.
constexpr double kOverloadGrowthSigmas = 3;
/// ... or requests were left waiting through at least this share of the window: the engine
/// never catches up, so the queue holds what the arrivals' luck put into it.
constexpr double kSaturatedQueuedShare = 0.9;
/// An overload is reported from a pass of at least this many requests (a shorter run's
/// start-up looks like a growing queue).
constexpr int64_t kOverloadMinRequests = 256;

/// An open loop's steady state: the window from the first measured request's send to the
/// last request's send, where the arrivals go on at the offered rate (docs/SERVING.md,
/// "Steady state and overload"). Rates are the engine's (every data-parallel rank).
struct SteadyState {
  bool measured = false;  ///< an open loop with a window of at least two measured requests
  double window_s = 0;
  double offered_request_rate = 0;    ///< workload.request_rate: the arrivals' mean rate
  double completed_request_rate = 0;  ///< requests finished per second inside the window
  /// Overloaded: requests finished per second from the window's start to the last one's
  /// finish, while the engine works through its queue (what it sustains); else 0.
  double sustainable_request_rate = 0;
  /// Requests in the engine, their growth per second: overloaded, offered minus sustainable
  /// rate (when positive); else their least-squares trend over the window.
  double queue_growth_per_s = 0;
  int64_t waiting_at_end = 0;      ///< requests waiting when the last request was sent (one rank)
  double latencies_in_window = 0;  ///< window / mean end-to-end latency
  double queued_share = 0;         ///< share of the window's engine steps' time that left requests waiting
  bool overloaded = false;         ///< the engine does not keep up: the queue grows
  bool settled = false;            ///< not overloaded and the window spans kSteadyLatencies latencies
  int passes = 0;                  ///< simulations run (num_requests not given: until settled)
};

struct ServeResult {
  EngineSettings engine;  ///< resolved
  ServingMemory memory;
  int64_t num_requests = 0;     ///< simulated, warm-up included
  int64_t warmup_requests = 0;  ///< the first N issued, left out of every figure below
  double mean_input_tokens = 0, mean_output_tokens = 0;
  LatencyStats ttft_ms, tpot_ms, itl_ms, e2e_ms;
  /// Open loop: over the steady window (overloaded: from its start to the last token, the
  /// engine saturated); closed loop: the measured requests' window.
  ServeThroughput throughput;
  ServeCost cost;
  SteadyState steady;
  double api_overhead_us = 0;  ///< the API-server time per request used
  double duration_s = 0;       ///< first send to last token
  SimulationTrace trace;       ///< steps, preemptions, queue peaks (its per-request arrays cleared)
  ValidationMatch validation;  ///< the accuracy ledger's subset nearest this request (docs/VALIDATION.md)
  std::vector<Warning> warnings;
};

/// Runs the estimate of `request.workload` for the request's model, GPU, TP, mode and
/// engine settings (its step is ignored). Errors name the field at fault
/// (`workload.concurrency`, `tp` for a model that does not fit, ...); `progress` may cancel.
/// The simulations (an open loop's passes together) take at most `max_work` units of work
/// (serve_work_units; too_large beyond, refused up front when the workload's least work
/// exceeds it); the result's trace.work says how much they took. Each simulation takes at
/// most `max_steps` engine steps (the same: refused up front when it needs more).
///
/// `needs`, when given, receives the least bounds this call's outcome needed, for a run of
/// one pass (num_requests given, or a closed loop): the largest work and step figures it
/// compared with max_work and max_steps before it ended (its estimates, then the steps and
/// work it ran). With max_work >= needs->work and max_steps >= needs->steps the call gives
/// the same result or error; with less of either, too_large. (The planner runs candidates
/// in parallel with bounds of their own and replays them against the plan's, docs/PLAN.md.)
/// `inter_token` false leaves itl_ms empty (the planner's searches, which read TTFT, TPOT and
/// E2E only: sorting every inter-token gap was ~6% of a plan); the first-view Wasm build
/// always computes it.
struct ServeNeeds {
  double work = 0;
  double steps = 0;
};
Expected<ServeResult> run_serve(const Request& request, const KernelRegistry& kernels = no_kernels(),
                                const ProgressFn& progress = nullptr, double max_work = limits::kMaxServeWork,
                                int64_t max_steps = limits::kMaxServeSteps, ServeNeeds* needs = nullptr,
                                bool inter_token = true);

/// The memory plan of `request` (its model, precision, TP, GPU and engine settings,
/// vLLM's defaults filled in). Errors: a GPU without memory figures, engine settings
/// vLLM would refuse. A model that does not fit is a plan with `fits` false.
Expected<ServingMemory> request_memory(const Request& request);

/// Tokens of KV cache the requests of `step` hold once it has run.
double step_kv_tokens(const Step& step);

/// Validates a workload's sizes against docs/INPUT.md's limits; the error names the field.
Expected<bool> validate_workload(const Workload& w);

}  // namespace stepcalc
