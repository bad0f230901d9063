// SPDX-License-Identifier: Apache-2.0
// vLLM's V1 scheduler, step by step (rules of vLLM 0.12-0.15, docs/SERVING.md):
// continuous batching with chunked prefill inside a token budget; running requests
// (decodes and unfinished prefills) are scheduled first, in admission order; then
// waiting requests are admitted while the budget, `max_num_seqs` and the free
// KV-cache blocks allow; when a running request cannot get a block, the most
// recently admitted request is preempted, frees its blocks and later recomputes
// its prompt and the tokens it had generated. Each step is priced by a StepPricer;
// the clock advances by the step's time. A closed loop's warm-up can be a phase of its
// own, drained before the measured requests start (SimulationSettings::warmup_drain).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "base/error.h"
#include "serving/request_plan.h"
#include "serving/step_pricer.h"

namespace stepcalc {

/// The settings one simulation runs with, already resolved and validated.
struct SimulationSettings;

/// Blocks a request holds with `tokens` of its sequence in the cache, `cached` of them the
/// shared prefix (held once for everyone), `fresh` of them computed by the current step (a
/// sliding group keeps the window before them: vLLM frees the blocks that fall out of it).
int64_t request_kv_blocks(const SimulationSettings& s, int64_t tokens, int64_t cached, int64_t fresh);

struct SimulationSettings {
  int64_t max_num_batched_tokens = 8192;
  int64_t max_num_seqs = 1024;
  int64_t block_size = 16;
  int64_t kv_cache_blocks = 0;  ///< blocks of the GPU KV cache (memory.kv_cache_blocks)
  /// vLLM's KV-cache groups (memory.kv_full_groups, kv_sliding_groups): a request holds a
  /// block per group for every block_size tokens, a sliding group only those of the window.
  int64_t kv_full_groups = 1, kv_sliding_groups = 0, window_tokens = 0;
  /// Gated DeltaNet models: groups of linear layers, each holding one block per request (its state).
  int64_t kv_state_groups = 0;
  bool enable_chunked_prefill = true;
  int64_t concurrency = 0;      ///< closed loop clients; 0: open loop (plan's send times)
  int64_t warmup_requests = 0;  ///< the first N requests issued: their tokens leave no inter-token gaps
  /// Closed loop: the requests after the warm-up are sent only once every warm-up request has
  /// finished, min(concurrency, rest) of them at that instant (a benchmark client's warm-up
  /// phase); the warm-up itself runs at min(concurrency, warmup_requests) clients.
  bool warmup_drain = false;
  double api_overhead_us = 0;  ///< API-server time per request, served one at a time in send order
  /// Open loop: the steady window, microseconds. The steps that end inside (start, end] are
  /// counted in SimulationTrace::window_* (tokens and GPU time); a negative end: no window.
  double window_start_us = 0, window_end_us = -1;
  int64_t max_steps = 4000000;  ///< refuse to run longer (a runaway workload)
  /// Refuse to run past this much work (serve_work_units: a step, plus a seventh per request
  /// in it); 0: no bound. `work_estimate` (> 0) scales the progress reports.
  double max_work = 0, work_estimate = 0;
};

/// Work units of a simulation: a step costs one, each request it carries a seventh (the
/// measured native cost: ~0.7 us a step, ~0.1 us a request in it). `token_steps` counts a
/// request once per step it is in (its output tokens and prefill chunks).
inline double serve_work_units(double steps, double token_steps) { return steps + token_steps / 7; }

/// What happened to one request, in microseconds from the start.
struct RequestTimeline {
  double send_us = 0;
  double first_token_us = 0;
  double last_token_us = 0;
  int64_t output_tokens = 0;
  int64_t preemptions = 0;
};

/// A run of inter-token gaps of equal length: `count` gaps of `gap_us`.
struct GapRun {
  double gap_us = 0;
  int64_t count = 0;
};

struct SimulationTrace {
  std::vector<RequestTimeline> requests;  ///< in plan order
  std::vector<GapRun> inter_token_gaps;   ///< every gap between consecutive tokens of a request
  int64_t steps = 0;
  double end_us = 0;          ///< when the last token was emitted
  double busy_us = 0;         ///< time spent in steps (the rest the engine waited for arrivals)
  double prefill_gpu_us = 0;  ///< step time attributed to prefill (split by the phases' hardware times)
  double decode_gpu_us = 0;   ///< step time attributed to decode
  /// The same two for the steps that started once the first request after the warm-up was
  /// sent (settings.warmup_requests > 0; else 0): what the measured window pays for. With an
  /// open-loop window (settings.window_end_us >= 0): the steps that ended inside it.
  double window_prefill_gpu_us = 0, window_decode_gpu_us = 0;
  int64_t window_output_tokens = 0;  ///< open-loop window: tokens sampled by the steps that ended inside it
  /// Open-loop window: the same three for every step that ended after the window's start,
  /// the drain included (an overloaded engine is saturated until its queue empties).
  double saturated_prefill_gpu_us = 0, saturated_decode_gpu_us = 0;
  int64_t saturated_output_tokens = 0;
  int64_t window_end_waiting = -1;  ///< open-loop window: requests waiting at its end (-1: no window)
  double window_queued_us = 0;      ///< open-loop window: time of its steps that left requests waiting
  double work = 0;                  ///< serve_work_units of the simulation
  int64_t preemptions = 0;
  int64_t peak_kv_blocks_used = 0;
  int64_t peak_running = 0;
  int64_t peak_waiting = 0;     ///< requests left waiting after a step was scheduled
  double mean_running = 0;      ///< requests running per step, averaged over steps
  double mean_step_tokens = 0;  ///< tokens scheduled per step, averaged over steps
};

/// Called every few hundred steps with the share of requests finished; returning
/// false cancels the simulation (an error "cancelled").
using ProgressFn = std::function<bool(double finished_share)>;

/// Runs the scheduler over `plan` until every request has finished. Errors: a request
/// that can never fit the KV cache, a pricing error, more than `max_steps` steps, a
/// cancellation.
/// `reached`, when given, receives the steps and work (SimulationTrace::steps, work) run
/// before it returned, on an error too.
struct SimulationReach {
  int64_t steps = 0;
  double work = 0;
};
Expected<SimulationTrace> simulate(const std::vector<PlannedRequest>& plan, const SimulationSettings& settings,
                                   StepPricer* pricer, const ProgressFn& progress = nullptr,
                                   SimulationReach* reached = nullptr);

}  // namespace stepcalc
