// SPDX-License-Identifier: Apache-2.0
#include "plan/planner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <utility>
#if STEPCALC_THREADS
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#endif

namespace stepcalc {
namespace {

/// One simulation of a candidate at one per-replica workload, judged against the target.
struct Eval {
  bool ok = false;
  Error error;
  ServeResult result;
  bool meets = false;
  PlanReason reason = PlanReason::kNone;
  double ratio = 0;  ///< worst figure / target
  std::string message;
};

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

/// One simulation a candidate's search ran (or was refused), as the plan's bounds see it.
struct SimLog {
  bool refused = false;  ///< too_large under the bounds it ran with
  bool ok = false;       ///< served (else an error the search judged, e.g. does_not_fit)
  ServeNeeds needs;      ///< the least bounds its outcome needed
  double work = 0;       ///< work and steps taken (served)
  int64_t steps = 0;
  int64_t requests = 0;  ///< one rank's requests (PlanResult::simulated_requests)
};

/// The plan's refusal when candidate `c`'s next simulation does not fit in what `totals` has left.
Error out_of_work(const PlanResult& totals, const PlanCandidateInput& c) {
  // The bound named is the one with the smaller share left.
  const bool steps = static_cast<double>(totals.steps_left) / static_cast<double>(totals.steps_limit) <
                     totals.work_left / totals.work_limit;
  const std::string bound = steps ? std::to_string(totals.steps_limit) + " engine steps"
                                  : std::to_string(static_cast<int64_t>(totals.work_limit)) + " units";
  const std::string left = steps ? std::to_string(std::max<int64_t>(0, totals.steps_left)) + " steps"
                                 : std::to_string(static_cast<int64_t>(std::max(0.0, totals.work_left)));
  return make_error("too_large", "search",
                    "The search needs more simulation work than a plan may take (its simulations together " + bound +
                        ", docs/INPUT.md): after " + std::to_string(totals.simulations) + " simulations the next, of " +
                        c.request.hardware.gpu + " at TP " + std::to_string(c.request.tp) + ", needs more than the " +
                        left +
                        " left. Narrow gpus or search (tp, dp, expert_parallel, engine), or send fewer or "
                        "shorter requests (workload.num_requests, output_tokens).");
}

/// The bounds a search's next simulation gets from what `totals` has left: false when nothing is
/// left (the plan refuses it before it runs).
bool next_bounds(const PlanResult& totals, double* max_work, int64_t* max_steps) {
  if (totals.work_left <= kPlanSimulationWork || totals.steps_left <= 0) return false;
  *max_work = totals.work_left - kPlanSimulationWork;
  *max_steps = std::min(limits::kMaxServeSteps, totals.steps_left);
  return true;
}

/// Charges simulation `s` (not refused) to `totals`: its count and requests, and when served its
/// work (plus its set-up's) and steps.
void consume(const SimLog& s, PlanResult* totals) {
  ++totals->simulations;
  totals->simulated_requests += s.requests;
  if (s.ok) {
    totals->work_left -= s.work + kPlanSimulationWork;
    totals->steps_left -= s.steps;
  }
}

#if STEPCALC_THREADS
/// Charges simulation `s` (run with bounds of its own) to the plan's `totals` as the plan's own
/// search would have run it: false, with `totals` unchanged, when it would not have fitted in
/// what was left (its outcome needed more, ServeNeeds) or was refused under its own bounds (never
/// smaller than the plan's).
bool charge(const SimLog& s, PlanResult* totals) {
  double max_work = 0;
  int64_t max_steps = 0;
  if (s.refused || !next_bounds(*totals, &max_work, &max_steps)) return false;
  if (s.needs.work > max_work || s.needs.steps > static_cast<double>(max_steps)) return false;
  consume(s, totals);
  return true;
}
#endif

class CandidateSearch {
 public:
  CandidateSearch(const PlanInput& in, const PlanCandidateInput& c, const KernelRegistry& kernels,
                  const ProgressFn& progress, PlanResult* totals)
      : in_(in), c_(c), kernels_(kernels), progress_(progress), totals_(totals) {}

  /// The per-replica workload at open-loop rate `rate` (or closed loop with `clients`). The
  /// default counts are each rank's (run_serve gives a rank 1/dp of the replica's requests):
  /// a replica of dp ranks is sent dp times as many, so every rank simulates as many as a
  /// replica without data parallelism.
  Workload workload(double rate, int64_t clients) const {
    Workload w = c_.request.workload;
    w.request_rate_per_s = clients > 0 ? 0 : rate;
    w.concurrency = clients;
    const int64_t ranks = c_.request.dp, rank_clients = (clients + ranks - 1) / ranks;
    const int64_t rank_requests =
        clients > 0 ? std::max<int64_t>(kPlanDefaultRequests, 10 * rank_clients) : kPlanDefaultRequests;
    if (!in_.num_requests_given) w.num_requests = ranks * rank_requests;
    if (!in_.warmup_given)
      w.warmup_requests =
          ranks * (clients > 0 ? std::min<int64_t>(rank_clients, rank_requests / 2) : kPlanDefaultWarmup);
    if (w.warmup_requests >= w.num_requests) w.warmup_requests = w.num_requests - 1;
    return w;
  }

  /// Tells `on_sim` of every simulation from now on (a search with bounds of its own, charged to
  /// the plan's later, in order).
  void report_to(std::function<void(const SimLog&)> on_sim) { on_sim_ = std::move(on_sim); }

  /// Serves one replica at `w` and judges it at `percentile` (0: the target's); memoised when `memo`.
  /// Its bound is what the plan has left; `as_serve`: a serve's own (the settling run, whose figures
  /// are `stepcalc serve`'s), taken while the plan has any work left and charged to it.
  Expected<Eval> eval(const Workload& w, int percentile = 0, bool memo = true, bool as_serve = false) {
    if (memo)
      for (const Memo& m : memo_)
        if (m.rate == w.request_rate_per_s && m.clients == w.concurrency) return m.eval;
    Request req = c_.request;
    req.workload = w;
    req.gpu_hour_usd = c_.gpu_hour_usd;
    const ProgressFn inner = progress_ ? ProgressFn([this](double) { return progress_(totals_->share); }) : nullptr;
    SimLog sim;
    sim.refused = true;
    double max_work = 0;
    int64_t max_steps = 0;
    if (as_serve ? totals_->work_left <= 0 || totals_->steps_left <= 0
                 : !next_bounds(*totals_, &max_work, &max_steps)) {
      if (on_sim_) on_sim_(sim);
      return out_of_work(*totals_, c_);
    }
    auto served = as_serve ? run_serve(req, kernels_, inner)
                           : run_serve(req, kernels_, inner, max_work, max_steps, &sim.needs,
                                       false);  // no inter-token latencies: a plan reads none
    if (!served && served.error().code == "cancelled") return served.error();
    if (!served && served.error().code == "too_large") {  // refused, or stopped at the bound
      if (on_sim_) on_sim_(sim);
      return out_of_work(*totals_, c_);
    }
    sim.refused = false;
    sim.ok = static_cast<bool>(served);
    sim.requests = (w.num_requests + c_.request.dp - 1) / c_.request.dp;  // one rank's
    if (sim.ok) sim.work = served->trace.work, sim.steps = served->trace.steps;
    if (on_sim_) on_sim_(sim);
    consume(sim, totals_);  // a settling run of several passes: its passes' work, its last pass's steps
    Eval e;
    if (!served) {
      e.error = served.error();
      e.reason = served.error().code == "does_not_fit" ? PlanReason::kDoesNotFit : PlanReason::kKvBound;
      e.message = served.error().message;
      e.ratio = INFINITY;
    } else {
      e.ok = true;
      e.result = std::move(served).value();
      judge(w, &e, percentile);
    }
    if (memo) memo_.push_back({w.request_rate_per_s, w.concurrency, e});
    return e;
  }

  void judge(const Workload& w, Eval* e, int percentile = 0) const {
    const PlanSlo& s = in_.slo;
    const ServeResult& r = e->result;
    const int p = percentile > 0 ? percentile : s.percentile;
    struct Check {
      PlanReason reason;
      const char* name;
      double value, target;
    };
    const Check checks[] = {{PlanReason::kTtft, "TTFT", plan_percentile(r.ttft_ms, p), s.ttft_ms},
                            {PlanReason::kTpot, "TPOT", plan_percentile(r.tpot_ms, p), s.tpot_ms},
                            {PlanReason::kE2e, "E2E", plan_percentile(r.e2e_ms, p), s.e2e_ms}};
    e->ratio = 0;
    const Check* worst = nullptr;
    for (const Check& c : checks) {
      if (c.target <= 0) continue;
      const double ratio = std::isfinite(c.value) ? c.value / c.target : INFINITY;
      if (worst == nullptr || ratio > e->ratio) {
        worst = &c;
        e->ratio = ratio;
      }
    }
    if (!std::isfinite(e->ratio)) e->ratio = INFINITY;
    e->meets = e->ratio <= 1;
    // An overloaded replica's latencies grow with the length of the run: it never meets a
    // target, whatever its figures over this run say (docs/SERVING.md, "Steady state").
    if (r.steady.overloaded && worst != nullptr) {
      e->meets = false;
      e->ratio = std::max(e->ratio, std::nextafter(1.0, 2.0));
      e->reason = PlanReason::kOverload;
      e->message = "overloaded: a replica sustains about " + fmt(r.steady.sustainable_request_rate) + " req/s of the " +
                   fmt(w.request_rate_per_s) + " sent, the queue grows";
      return;
    }
    if (e->meets || worst == nullptr) return;
    const std::string pct = "p" + std::to_string(p) + " ";
    const std::string figure = pct + worst->name + " " + fmt(worst->value) + " ms > " + fmt(worst->target) + " ms";
    if (r.trace.preemptions > 0) {
      e->reason = PlanReason::kKvBound;
      e->message = "KV-bound: the KV cache (" + fmt(static_cast<double>(r.memory.kv_cache_tokens)) +
                   " tokens per replica) preempted " + std::to_string(r.trace.preemptions) + " requests; " + figure;
    } else if (w.concurrency == 0 && r.throughput.requests_per_s < 0.9 * w.request_rate_per_s) {
      e->reason = PlanReason::kOverload;
      e->message = "overloaded: a replica completes " + fmt(r.throughput.requests_per_s) + " req/s of the " +
                   fmt(w.request_rate_per_s) + " sent, the queue grows; " + figure;
    } else {
      e->reason = worst->reason;
      e->message = figure;
    }
  }

  /// The highest open-loop per-replica rate meeting the target, starting from `guess`
  /// (0: none meets even at guess / 8).
  Expected<double> max_rate(double guess) {
    double lo = 0, hi = 0, r = guess;
    auto first = eval(workload(r, 0));
    if (!first) return first.error();
    if (first->meets) {
      lo = r;
      for (int i = 0; i < 10 && hi == 0; ++i) {
        r *= 2;
        auto e = eval(workload(r, 0));
        if (!e) return e.error();
        (e->meets ? lo : hi) = r;
      }
      if (hi == 0) return lo;
    } else {
      hi = r;
      for (int i = 0; i < 3 && lo == 0; ++i) {
        r /= 2;
        auto e = eval(workload(r, 0));
        if (!e) return e.error();
        (e->meets ? lo : hi) = r;
      }
      if (lo == 0) return 0.0;
    }
    for (int i = 0; i < kPlanRateBisections; ++i) {
      const double mid = 0.5 * (lo + hi);
      auto e = eval(workload(mid, 0));
      if (!e) return e.error();
      (e->meets ? lo : hi) = mid;
    }
    return lo;
  }

  Expected<bool> run(PlanCandidate* out) {
    const Workload& asked = c_.request.workload;
    const int64_t tp = c_.request.tp * c_.request.dp;  // GPUs of one replica
    const int64_t max_replicas = std::max<int64_t>(1, in_.max_gpus / tp);
    const bool open = asked.concurrency == 0;
    auto replica_workload = [&](int64_t n) {
      return open ? workload(asked.request_rate_per_s / static_cast<double>(n), 0)
                  : workload(0, (asked.concurrency + n - 1) / n);
    };
    auto finish = [&](int64_t n, const Eval& chosen) {
      out->replicas = n;
      out->gpus_total = n * tp;
      out->replica_workload = replica_workload(n);
      out->simulated = chosen.ok;
      out->meets_slo = chosen.ok && chosen.meets;
      out->slo_ratio = chosen.ratio;
      if (chosen.ok) {
        out->serve = chosen.result;
        out->memory = out->serve.memory;
        const double tpot = out->serve.tpot_ms.p50;
        out->output_tokens_per_s_per_user = tpot > 0 ? 1000 / tpot : 0;
      }
      if (!out->meets_slo) {
        out->reason = chosen.reason;
        out->reason_message = chosen.message;
      }
      out->cost_per_hour_usd = static_cast<double>(out->gpus_total) * c_.gpu_hour_usd;
      return true;
    };
    // One replica first: its figures start the rate bracket.
    auto one = eval(replica_workload(1));
    if (!one) return one.error();
    if (!one->ok) return finish(1, one.value());
    const double guess = open ? asked.request_rate_per_s : one->result.throughput.requests_per_s;
    if (!one->meets) {
      // The floor first: requests one at a time. If their median misses the target, no
      // load and no replica count meets it; the rate search is skipped.
      Workload alone = c_.request.workload;
      alone.concurrency = 1;
      alone.request_rate_per_s = 0;
      alone.num_requests = kPlanFloorRequests * c_.request.dp;  // each rank's share: kPlanFloorRequests
      alone.warmup_requests = 0;
      auto floor = eval(alone, 50, false);
      if (!floor) return floor.error();
      if (floor->ok) {
        const Eval& f = floor.value();
        if (!f.meets) {
          finish(1, one.value());
          out->reason = f.reason;
          out->reason_message = "even unloaded (one request at a time, p50): " + f.message;
          return true;
        }
      }
    }
    auto rate = max_rate(guess > 0 ? guess : 1);
    if (!rate) return rate.error();
    out->max_request_rate = rate.value();
    if (one->meets) return finish(1, one.value());
    if (rate.value() <= 0) {
      // Not even a light load meets the target: a floor more replicas cannot lower.
      auto light = eval(workload(guess / 8, 0));
      if (!light) return light.error();
      finish(1, one.value());
      if (light->ok && !light->meets) {
        out->reason = light->reason;
        out->reason_message = "even at " + fmt(guess / 8) + " req/s per replica: " + light->message;
      }
      return true;
    }
    if (open) {
      // The rate bound gives the count; a few more if the split rate still misses.
      int64_t n =
          std::min<int64_t>(max_replicas, static_cast<int64_t>(std::ceil(asked.request_rate_per_s / rate.value())));
      n = std::max<int64_t>(n, 1);
      for (int tries = 0;; ++tries) {
        auto e = eval(replica_workload(n));
        if (!e) return e.error();
        if ((e->ok && e->meets) || n >= max_replicas || tries >= 3) {
          finish(n, e.value());
          break;
        }
        ++n;
      }
    } else {
      // Closed loop: the fewest replicas by doubling, then bisection on the count.
      int64_t lo = 1, hi = 0;
      Eval at_hi = one.value(), at_lo = one.value();
      for (int64_t k = 2; hi == 0; k *= 2) {
        const int64_t m = std::min(k, max_replicas);
        auto e = eval(replica_workload(m));
        if (!e) return e.error();
        if (e->ok && e->meets) {
          hi = m;
          at_hi = e.value();
        } else {
          lo = m;
          at_lo = e.value();
        }
        if (m == max_replicas) break;
      }
      if (hi == 0) {
        finish(lo, at_lo);
      } else {
        while (hi - lo > 1) {
          const int64_t mid = (lo + hi) / 2;
          auto e = eval(replica_workload(mid));
          if (!e) return e.error();
          if (e->ok && e->meets) {
            hi = mid;
            at_hi = e.value();
          } else {
            lo = mid;
          }
        }
        finish(hi, at_hi);
      }
    }
    if (!out->meets_slo && out->replicas >= max_replicas) {
      out->reason = PlanReason::kMaxGpus;
      out->reason_message = "needs more than search.max_gpus (" + std::to_string(in_.max_gpus) + ") GPUs; at " +
                            std::to_string(out->replicas) + " replicas: " + out->reason_message;
    }
    return true;
  }

  /// Serves `out`'s replica workload as `stepcalc serve` does by default (an open loop until
  /// its figures settle, docs/SERVING.md "Steady state and overload") and judges it: the
  /// search's runs are shorter. The candidate takes that run's figures and counts (so its
  /// serve_request reproduces them); false, with the reason, when it then misses the target.
  Expected<bool> settle(PlanCandidate* out) {
    Workload w = out->replica_workload;
    w.num_requests = 0;
    if (!in_.warmup_given) w.warmup_requests = -1;
    auto e = eval(w, 0, false, true);
    if (!e) return e.error();
    if (e->ok) {
      out->serve = std::move(e->result);
      out->serve.trace.requests.clear();
      out->serve.trace.inter_token_gaps.clear();
      // serve reports one rank's counts: the replica's are dp times them (each rank's share again).
      out->replica_workload.num_requests = out->serve.num_requests * c_.request.dp;
      out->replica_workload.warmup_requests = out->serve.warmup_requests * c_.request.dp;
      const double tpot = out->serve.tpot_ms.p50;
      out->output_tokens_per_s_per_user = tpot > 0 ? 1000 / tpot : 0;
      out->slo_ratio = e->ratio;
    }
    if (e->ok && e->meets) return true;
    out->meets_slo = false;
    out->reason = e->reason;
    out->reason_message = "served until its figures settle: " + e->message;
    return false;
  }

 private:
  const PlanInput& in_;
  const PlanCandidateInput& c_;
  const KernelRegistry& kernels_;
  const ProgressFn& progress_;
  PlanResult* totals_;
  std::function<void(const SimLog&)> on_sim_;
  struct Memo {
    double rate;
    int64_t clients;
    Eval eval;
  };
  std::vector<Memo> memo_;
};

}  // namespace

const char* plan_reason_code(PlanReason r) {
  switch (r) {
    case PlanReason::kNone:
      return "";
    case PlanReason::kDoesNotFit:
      return "does_not_fit";
    case PlanReason::kInvalid:
      return "invalid";
    case PlanReason::kKvBound:
      return "kv_bound";
    case PlanReason::kOverload:
      return "overload";
    case PlanReason::kTtft:
      return "ttft";
    case PlanReason::kTpot:
      return "tpot";
    case PlanReason::kE2e:
      return "e2e";
    case PlanReason::kMaxGpus:
      return "max_gpus";
  }
  return "";
}

double plan_percentile(const LatencyStats& s, int percentile) {
  return percentile == 50 ? s.p50 : percentile == 99 ? s.p99 : s.p90;
}

namespace {

#if STEPCALC_THREADS
/// The searches of the candidates `searched` (indices, in order) on `workers` threads, with the
/// same candidates, counts and refusal as run_plan's search of one after another. Each search
/// runs with bounds of its own: what the plan has left once what is known of the candidates
/// before it (their simulations so far) is charged, never less than it would have had in turn.
/// Its simulations are charged to `result` in the candidates' order as they come (charge);
/// the first that would not have fitted refuses the plan, and the searches still running stop.
/// Each thread reads kernel databases of its own (KernelRegistry::thread_view: the shared
/// registry, read and decoded under a lock the first time a thread asks for a GPU, so one
/// thread decodes a GPU's packs while the others search; its errors are the shared registry's).
Expected<bool> search_in_parallel(const PlanInput& input, const KernelRegistry& kernels,
                                  const std::vector<size_t>& searched, int workers, std::vector<PlanCandidate>* outs,
                                  PlanResult* result) {
  struct Slot {
    std::vector<SimLog> log;
    bool done = false;
    PlanCandidate out;
  };
  std::vector<Slot> slots(searched.size());  // by position in `searched`
  std::mutex kernels_mutex;                  // guards the shared registry (it reads and decodes on first use)
  std::mutex mutex;                          // guards everything below but `stop` and `next`
  std::condition_variable over_cv;
  size_t pos = 0, entry = 0;  // the next simulation to charge: slots[pos].log[entry]
  bool over = false;
  Expected<bool> outcome = true;
  std::atomic<bool> stop{false};
  std::atomic<size_t> next{0};
  // Charges what has come in order; called with the mutex held.
  const auto advance = [&]() {
    while (!over && pos < slots.size()) {
      Slot& slot = slots[pos];
      for (; entry < slot.log.size(); ++entry) {
        if (!charge(slot.log[entry], result)) {
          outcome = out_of_work(*result, input.candidates[searched[pos]]);
          over = true;
          stop.store(true);
          over_cv.notify_all();
          return;
        }
      }
      if (!slot.done) return;
      (*outs)[searched[pos]] = std::move(slot.out);
      ++pos;
      entry = 0;
    }
    if (pos == slots.size() && !over) {
      over = true;
      over_cv.notify_all();
    }
  };
  // The bounds of the search at `k`: the plan's left, less what is known to come before it.
  const auto bounds_for = [&](size_t k) {
    PlanResult own = *result;
    for (size_t j = pos; j < k; ++j)
      for (size_t e = j == pos ? entry : 0; e < slots[j].log.size(); ++e) consume(slots[j].log[e], &own);
    return own;
  };
  const auto work = [&]() {
    const KernelRegistry own_kernels =
        KernelRegistry::thread_view([&](const std::string& gpu, const std::string& version, const std::string& path) {
          std::lock_guard<std::mutex> lock(kernels_mutex);
          return kernels.get(gpu, version, path);
        });
    const ProgressFn keep_going = [&stop](double) { return !stop.load(std::memory_order_relaxed); };
    for (size_t k = next++; k < slots.size() && !stop.load(); k = next++) {
      PlanCandidate out = (*outs)[searched[k]];
      PlanResult own;
      {
        std::lock_guard<std::mutex> lock(mutex);
        own = bounds_for(k);
      }
      CandidateSearch search(input, input.candidates[searched[k]], own_kernels, keep_going, &own);
      search.report_to([&](const SimLog& s) {
        std::lock_guard<std::mutex> lock(mutex);
        slots[k].log.push_back(s);
        advance();
      });
      (void)search.run(&out);  // its refusal is in its log; cancelled: the plan is over
      std::lock_guard<std::mutex> lock(mutex);
      slots[k].out = std::move(out);
      slots[k].done = true;
      advance();
    }
  };
  std::vector<std::thread> threads;
  try {
    for (int t = 0; t < workers && static_cast<size_t>(t) < slots.size(); ++t) threads.emplace_back(work);
  } catch (const std::system_error&) {  // no more threads: the ones started do the rest
  }
  if (threads.empty()) work();
  {
    std::unique_lock<std::mutex> lock(mutex);
    over_cv.wait(lock, [&] { return over; });
  }
  stop.store(true);
  for (std::thread& t : threads) t.join();
  return outcome;
}
#endif

}  // namespace

Expected<PlanResult> run_plan(const PlanInput& input, const KernelRegistry& kernels, const ProgressFn& progress,
                              double max_work, int64_t max_steps, int workers) {
  if (static_cast<int64_t>(input.candidates.size()) > kMaxPlanCandidates)
    return make_error("too_large", "search",
                      "The search would try " + std::to_string(input.candidates.size()) + " configurations; at most " +
                          std::to_string(kMaxPlanCandidates) +
                          " (narrow gpus, search.tp, search.dp, search.expert_parallel, search.engine, ...).");
  PlanResult result;
  result.work_limit = result.work_left = max_work;
  result.steps_limit = result.steps_left = max_steps;
  // Each candidate set up; the ones to search (simulate) noted.
  std::vector<PlanCandidate> outs(input.candidates.size());
  std::vector<size_t> searched;
  for (size_t i = 0; i < input.candidates.size(); ++i) {
    const PlanCandidateInput& c = input.candidates[i];
    PlanCandidate& out = outs[i];
    out.input = c;
    out.replicas = 1;
    out.gpus_total = c.tp * c.dp;
    out.cost_per_hour_usd = static_cast<double>(out.gpus_total) * c.gpu_hour_usd;
    out.slo_ratio = INFINITY;
    if (!c.valid) {
      out.reason = c.error.code == "does_not_fit" ? PlanReason::kDoesNotFit : PlanReason::kInvalid;
      out.reason_message = c.error.message;
    } else if (out.gpus_total > input.max_gpus) {
      out.reason = PlanReason::kMaxGpus;
      out.reason_message = "one replica (TP " + std::to_string(c.tp) +
                           (c.dp > 1 ? " x DP " + std::to_string(c.dp) : std::string()) + ") needs " +
                           std::to_string(out.gpus_total) + " GPUs, more than search.max_gpus (" +
                           std::to_string(input.max_gpus) + ")";
    } else {
      // Pruned before simulating: what cannot fit the GPU's memory at this TP.
      auto memory = request_memory(c.request);
      if (!memory) {
        out.reason = PlanReason::kInvalid;
        out.reason_message = memory.error().message;
      } else if (!memory->fits) {
        out.memory = memory.value();
        out.reason = PlanReason::kDoesNotFit;
        out.reason_message = "does not fit: weights " + fmt(memory->weights_bytes / 1073741824.0) +
                             " GiB per GPU of a budget of " + fmt(memory->budget_bytes / 1073741824.0) + " GiB";
      } else {
        out.memory = memory.value();
        searched.push_back(i);
      }
    }
  }
#if STEPCALC_THREADS
  if (workers > 1 && !progress && searched.size() > 1) {
    auto ran = search_in_parallel(input, kernels, searched, workers, &outs, &result);
    if (!ran) return ran.error();
    searched.clear();
  }
#else
  (void)workers;
#endif
  const double count = static_cast<double>(std::max<size_t>(1, input.candidates.size()));
  size_t next = 0;  // into searched
  for (size_t i = 0; i < outs.size(); ++i) {
    result.share = static_cast<double>(i) / count;
    if (progress && !progress(result.share)) return make_error("cancelled", "", "The plan was cancelled.");
    PlanCandidate& out = outs[i];
    if (next < searched.size() && searched[next] == i) {
      ++next;
      CandidateSearch search(input, input.candidates[i], kernels, progress, &result);
      auto ran = search.run(&out);
      if (!ran) return ran.error();
    }
    out.serve.trace.requests.clear();
    out.serve.trace.inter_token_gaps.clear();
    result.candidates.push_back(std::move(out));
  }
  if (progress && !progress(1.0)) return make_error("cancelled", "", "The plan was cancelled.");
  std::vector<PlanCandidate>& cs = result.candidates;
  // Frontier: simulated candidates no other beats on both tokens/s per GPU and per user.
  for (size_t i = 0; i < cs.size(); ++i) {
    if (!cs[i].simulated) continue;
    const double gi = cs[i].serve.throughput.output_tokens_per_s_per_gpu, ui = cs[i].output_tokens_per_s_per_user;
    bool dominated = false;
    for (size_t j = 0; j < cs.size() && !dominated; ++j) {
      if (j == i || !cs[j].simulated) continue;
      const double gj = cs[j].serve.throughput.output_tokens_per_s_per_gpu, uj = cs[j].output_tokens_per_s_per_user;
      dominated = gj >= gi && uj >= ui && (gj > gi || uj > ui || j < i);
    }
    if (!dominated) result.frontier.push_back(i);
  }
  // By tokens/s per user (an insertion sort: a handful of points).
  std::vector<size_t>& f = result.frontier;
  for (size_t i = 1; i < f.size(); ++i)
    for (size_t j = i; j > 0 && cs[f[j]].output_tokens_per_s_per_user < cs[f[j - 1]].output_tokens_per_s_per_user; --j)
      std::swap(f[j], f[j - 1]);
  // Recommended: meets the target at the lowest cost per hour; ties: fewer GPUs, then more
  // headroom. Unless the request fixed the run's counts, it is served again as `stepcalc
  // serve` serves it by default, until its figures settle; one that then misses the target
  // gives way to the next.
  for (;;) {
    result.recommended = -1;
    for (size_t i = 0; i < cs.size(); ++i) {
      if (!cs[i].meets_slo) continue;
      if (result.recommended < 0) {
        result.recommended = static_cast<int64_t>(i);
        continue;
      }
      const PlanCandidate& b = cs[static_cast<size_t>(result.recommended)];
      const PlanCandidate& a = cs[i];
      const bool better = a.cost_per_hour_usd != b.cost_per_hour_usd ? a.cost_per_hour_usd < b.cost_per_hour_usd
                          : a.gpus_total != b.gpus_total             ? a.gpus_total < b.gpus_total
                                                         : a.max_request_rate * static_cast<double>(a.replicas) >
                                                               b.max_request_rate * static_cast<double>(b.replicas);
      if (better) result.recommended = static_cast<int64_t>(i);
    }
    if (result.recommended < 0 || input.num_requests_given) break;
    PlanCandidate& r = cs[static_cast<size_t>(result.recommended)];
    const ProgressFn none;  // the search keeps a reference: it must outlive it
    CandidateSearch search(input, r.input, kernels, none, &result);
    auto settled = search.settle(&r);
    if (!settled) return settled.error();
    if (settled.value()) break;
  }
  if (result.recommended >= 0) {
    const PlanCandidate& r = cs[static_cast<size_t>(result.recommended)];
    result.headroom_request_rate = r.max_request_rate * static_cast<double>(r.replicas);
  } else {
    for (size_t i = 0; i < cs.size(); ++i) {
      if (!cs[i].simulated) continue;
      if (result.closest < 0 || cs[i].slo_ratio < cs[static_cast<size_t>(result.closest)].slo_ratio)
        result.closest = static_cast<int64_t>(i);
    }
  }
  return result;
}

}  // namespace stepcalc
