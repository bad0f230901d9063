// SPDX-License-Identifier: Apache-2.0
// The deployment planner (issue 24, docs/PLAN.md): serves every candidate configuration
// (GPU x TP x a MoE model's expert/data-parallel layout x engine settings x precision) with
// run_serve in the measured mode, finds
// the fewest replicas whose per-replica share of the traffic meets a latency target,
// the highest per-replica rate that still meets it (bisection), and recommends the
// cheapest configuration that meets it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/kernel_registry.h"
#include "request/request.h"
#include "serving/serve.h"

namespace stepcalc {

/// Work limits of one plan (docs/INPUT.md, "Plans"): beyond them the plan is refused
/// with too_large rather than answered slowly.
constexpr int64_t kMaxPlanCandidates = 256;  ///< gpus x (tp x layouts) x engine x kv_cache_dtype x quantization
constexpr int64_t kMaxPlanGpus = 1024;       ///< search.max_gpus
/// The simulation work of one plan, its simulations together, in serve_work_units: twice a
/// serve's own bound (limits::kMaxServeWork), so that a MoE model's default search (gpt-oss-120b,
/// ~1.7 s natively) is answered; a longer search is refused within about two serves at the bound.
constexpr double kMaxPlanWork = 2 * limits::kMaxServeWork;
/// The engine steps of one plan, its simulations together: twice a serve's own bound
/// (limits::kMaxServeSteps). The work above weighs a step as one unit and a request in it as a
/// seventh; a search of many small batches (a low request rate, long outputs) costs more time per
/// unit than the large batches the unit was measured on, and this bound stops it after about as
/// many steps as two serves at their own step bound take (BENCHMARKS.md, "the plans' bounds").
constexpr int64_t kMaxPlanSteps = 2 * limits::kMaxServeSteps;
/// What one simulation costs besides its steps and requests (setting up its pricer, memory
/// plan and statistics: about 0.25 ms natively, as many units as 2,000 of its work).
constexpr double kPlanSimulationWork = 2000;
/// Requests each simulation of the plan sends when the workload does not say, and the
/// first of them left out as warm-up (open loop; a closed loop warms up one wave).
constexpr int64_t kPlanDefaultRequests = 240;
constexpr int64_t kPlanDefaultWarmup = 40;
constexpr int kPlanRateBisections = 6;  ///< max_request_rate to within 1/64 of its bracket
/// Requests of the unloaded check (one at a time) that rules a candidate out before the rate search.
constexpr int64_t kPlanFloorRequests = 8;

/// The latency target: each of ttft/tpot/e2e (milliseconds, 0 = no target) at `percentile`.
struct PlanSlo {
  double ttft_ms = 0, tpot_ms = 0, e2e_ms = 0;
  int percentile = 90;  ///< 50, 90 or 99
};

/// One configuration to try: a validated serve request (mode measured, its GPU, TP, layout,
/// engine, precision and the plan's workload), or why it could not be built.
struct PlanCandidateInput {
  std::string gpu;
  int64_t tp = 1;
  int64_t ep = 1;               ///< 1 (experts split by TP) or tp x dp (--enable-expert-parallel)
  int64_t dp = 1;               ///< data-parallel ranks of one replica (docs/SERVING.md, "Layouts")
  EngineSettings engine_asked;  ///< as the search asked (0: vLLM's default)
  std::string kv_cache_dtype = "auto", quantization = "none";
  double gpu_hour_usd = 0;
  bool valid = false;
  Error error;      ///< when !valid (e.g. TP does not divide the heads)
  Request request;  ///< when valid
};

struct PlanInput {
  std::vector<PlanCandidateInput> candidates;
  PlanSlo slo;
  int64_t max_gpus = 64;            ///< replicas x tp x dp at most
  bool num_requests_given = false;  ///< the workload set num_requests (else kPlanDefaultRequests)
  bool warmup_given = false;        ///< the workload set warmup_requests
};

/// Why a candidate misses the target, most basic first.
enum class PlanReason { kNone, kDoesNotFit, kInvalid, kKvBound, kOverload, kTtft, kTpot, kE2e, kMaxGpus };
const char* plan_reason_code(PlanReason r);  ///< "does_not_fit", "kv_bound", "ttft", ...

struct PlanCandidate {
  PlanCandidateInput input;
  bool simulated = false;  ///< false: refused before simulating (does not fit, invalid)
  bool meets_slo = false;
  PlanReason reason = PlanReason::kNone;
  std::string reason_message;
  int64_t replicas = 0, gpus_total = 0;  ///< gpus_total = replicas x tp x dp
  Workload replica_workload;    ///< what one replica (its dp ranks together) serves: the rate or clients split evenly
  ServeResult serve;            ///< one replica at that workload (its per-request arrays cleared)
  ServingMemory memory;         ///< per GPU (also for a candidate that does not fit)
  double max_request_rate = 0;  ///< per replica, open loop, meeting the target (0: none found)
  double cost_per_hour_usd = 0;
  double output_tokens_per_s_per_user = 0;  ///< 1000 / p50 TPOT
  double slo_ratio = 0;                     ///< worst figure / its target (<= 1 meets); for "closest"
};

struct PlanResult {
  std::vector<PlanCandidate> candidates;
  std::vector<size_t> frontier;      ///< indices: Pareto set of tokens/s per GPU vs per user
  int64_t recommended = -1;          ///< index, or -1
  int64_t closest = -1;              ///< none meets: the simulated candidate nearest the target
  double headroom_request_rate = 0;  ///< recommended: total rate at which it stops meeting the target
  int64_t simulations = 0;           ///< run_serve calls
  int64_t simulated_requests = 0;
  double share = 0;                     ///< candidates done / all, for progress during a simulation
  double work_limit = kMaxPlanWork;     ///< the simulation work the plan may take (run_plan's max_work)
  double work_left = kMaxPlanWork;      ///< what it has left
  int64_t steps_limit = kMaxPlanSteps;  ///< the engine steps its simulations may take (run_plan's max_steps)
  int64_t steps_left = kMaxPlanSteps;   ///< what it has left
};

/// The figure of `s` at `percentile` (50, 90, 99).
double plan_percentile(const LatencyStats& s, int percentile);

/// Runs the plan. `progress` gets the share of candidates done; returning false cancels
/// (error "cancelled"). Its simulations together take at most `max_work` units and `max_steps`
/// engine steps (too_large at `search` when the next one would not fit in what is left).
/// `workers` > 1 (and no `progress`): the candidates are searched on that many threads where
/// the build has them (STEPCALC_THREADS, the native one), with the same result to the bit and
/// the same refusal as one after another (docs/PLAN.md, "Speed").
Expected<PlanResult> run_plan(const PlanInput& input, const KernelRegistry& kernels,
                              const ProgressFn& progress = nullptr, double max_work = kMaxPlanWork,
                              int64_t max_steps = kMaxPlanSteps, int workers = 1);

}  // namespace stepcalc
