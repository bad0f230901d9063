// SPDX-License-Identifier: Apache-2.0
#include "serving/serve.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "base/input_limits.h"
#include "json/text_format.h"
#include "serving/engine_defaults.h"
#include "serving/request_plan.h"
#include "serving/step_pricer.h"

namespace stepcalc {
namespace {

double d(int64_t v) { return static_cast<double>(v); }

Error field_error(const char* code, const std::string& path, const std::string& message) {
  return make_error(code, path, message);
}

Expected<bool> validate_length(const LengthDistribution& l, const std::string& path) {
  const int64_t max = limits::kMaxServeTokensPerRequest;
  if (l.mean < 1) return field_error("invalid_value", path, path + " must be at least 1 token.");
  if (l.mean > max || l.max > max)
    return field_error("out_of_range", path, path + " may be at most " + std::to_string(max) + " tokens.");
  if (l.max > 0 && l.max < std::max<int64_t>(1, l.min))
    return field_error("invalid_value", path + ".max", path + ".max must be at least its min.");
  if (!(l.stddev >= 0) || l.stddev > d(max))
    return field_error("invalid_value", path + ".stddev",
                       path + ".stddev must be in [0, " + std::to_string(max) + "].");
  return true;
}

/// A lower bound on the steps a workload takes: each step emits at most one token
/// per running request, and at most max_num_seqs run.
double min_steps(const Workload& w, const EngineSettings& e) {
  const double clients = w.concurrency > 0 ? d(w.concurrency) : d(planned_request_count(w));
  const double batch = std::max(1.0, std::min(clients, d(e.max_num_seqs)));
  return d(planned_request_count(w)) * d(w.output_tokens.mean) / batch;
}

/// The work a simulation of `plan` takes at least (serve_work_units): min_steps' steps, and
/// each request in a step once per output token and once per prefill chunk.
double min_work(const Workload& w, const EngineSettings& e, const std::vector<PlannedRequest>& plan) {
  double token_steps = 0;
  for (const PlannedRequest& p : plan)
    token_steps += d(p.output_tokens) + std::ceil(d(p.input_tokens - p.cached_prefix_tokens) /
                                                  d(std::max<int64_t>(1, e.max_num_batched_tokens)));
  return serve_work_units(min_steps(w, e), token_steps);
}

/// A second lower bound, from the KV cache: when a request emits its k-th token it
/// holds at least its uncached prompt and k - 1 generated tokens, the running requests
/// share `kv_cache_tokens`, and each step emits at most one token per request.
double min_steps_kv(const std::vector<PlannedRequest>& plan, int64_t kv_cache_tokens) {
  if (kv_cache_tokens <= 0) return 0;
  double token_steps = 0;
  for (const PlannedRequest& r : plan) {
    const double out = d(r.output_tokens);
    token_steps += out * d(r.input_tokens - r.cached_prefix_tokens) + out * (out - 1) / 2;
  }
  return token_steps / d(kv_cache_tokens);
}

/// `count_given`: the request set workload.num_requests (else an open loop ran until it settled).
std::vector<Warning> serving_warnings(const ServeResult& r, const Workload& w, bool count_given) {
  std::vector<Warning> out = memory_warnings(r.memory, 0);
  const SimulationTrace& t = r.trace;
  const auto n = [](int64_t v) { return std::to_string(v); };
  if (t.preemptions > 0)
    out.push_back({"kv_cache_preemption",
                   "The KV cache (" + n(r.memory.kv_cache_blocks) + " blocks) ran out " + n(t.preemptions) +
                       " times: vLLM preempted the newest requests, which then recomputed "
                       "their prompts. Peak use " +
                       n(t.peak_kv_blocks_used) + " blocks; queue up to " + n(t.peak_waiting) + " requests."});
  const SteadyState& st = r.steady;
  const auto f = [](double v) {
    return v >= 100 ? format_fixed(v, 0) : v >= 10 ? format_fixed(v, 1) : format_significant(v, 3);
  };
  if (st.overloaded)
    out.push_back({"serving_overload",
                   "Overloaded: the engine sustains about " + f(st.sustainable_request_rate) + " requests/s of the " +
                       f(st.offered_request_rate) + " sent, so requests in the engine grow by " +
                       f(st.queue_growth_per_s) + " per second (" + n(st.waiting_at_end) +
                       " waiting when the last one was sent). Latencies grow with the length of the run instead of "
                       "settling: lower the request rate, or add replicas or GPUs."});
  else if (st.measured && !st.settled)
    out.push_back(
        {"serving_not_settled",
         "The figures have not settled: the measured arrivals span " + f(st.window_s) + " s and " +
             n(r.num_requests - r.warmup_requests) + " requests, " + f(st.latencies_in_window) +
             " mean end-to-end latencies (settled needs " + n(static_cast<int64_t>(kSteadyLatencies)) +
             " latencies and " + n(kSteadyMinMeasured) +
             " requests, or a queue that seldom forms), so the engine's start-up weighs " + "on them. " +
             (count_given ? "Raise workload.num_requests, or leave it out to simulate until they settle."
                          : "The estimate stopped at " + n(r.num_requests) + " requests, the most it simulates.")});
  if (w.concurrency > r.engine.max_num_seqs)
    out.push_back({"max_num_seqs_queueing", "Concurrency " + n(w.concurrency) + " exceeds max_num_seqs " +
                                                n(r.engine.max_num_seqs) + ": at most " + n(r.engine.max_num_seqs) +
                                                " requests run at once, the rest wait."});
  return out;
}

}  // namespace

Expected<bool> validate_workload(const Workload& w) {
  auto in = validate_length(w.input_tokens, "workload.input_tokens");
  if (!in) return in;
  auto out = validate_length(w.output_tokens, "workload.output_tokens");
  if (!out) return out;
  if (w.concurrency > 0 && w.request_rate_per_s > 0)
    return field_error(
        "invalid_value", "workload.request_rate",
        "Give either workload.concurrency (closed loop) or workload.request_rate (open loop), not both.");
  if (w.concurrency == 0 && !(w.request_rate_per_s > 0))
    return field_error("missing_field", "workload.concurrency",
                       "The workload needs workload.concurrency (closed loop) or workload.request_rate (open loop).");
  if (w.concurrency < 0 || w.concurrency > limits::kMaxServeConcurrency)
    return field_error("out_of_range", "workload.concurrency",
                       "workload.concurrency must be in [1, " + std::to_string(limits::kMaxServeConcurrency) + "].");
  if (w.request_rate_per_s < 0 || w.request_rate_per_s > limits::kMaxServeRequestRate)
    return field_error("out_of_range", "workload.request_rate",
                       "workload.request_rate must be in (0, 1e6] per second.");
  if (w.num_requests < 0 || w.num_requests > limits::kMaxServeRequests)
    return field_error("out_of_range", "workload.num_requests",
                       "workload.num_requests must be in [1, " + std::to_string(limits::kMaxServeRequests) + "].");
  if (w.warmup_requests < -1 || w.warmup_requests >= planned_request_count(w))  // -1: the default
    return field_error("out_of_range", "workload.warmup_requests",
                       "workload.warmup_requests must be a whole number in [0, num_requests) (num_requests " +
                           std::to_string(planned_request_count(w)) + ").");
  if (!(w.prefix_cache_hit_ratio >= 0 && w.prefix_cache_hit_ratio <= 1))
    return field_error("out_of_range", "workload.prefix_cache_hit_ratio",
                       "workload.prefix_cache_hit_ratio must be in [0, 1].");
  return true;
}

Expected<ServingMemory> request_memory(const Request& request) {
  const GpuSpec* gpu = find_gpu_spec(request.hardware.gpu);
  if (gpu == nullptr)
    return make_error("unknown_gpu", "gpu", "No memory figures for GPU '" + request.hardware.gpu + "'.");
  const EngineSettings engine = resolve_engine_settings(request.engine, *gpu);
  auto valid = validate_engine_settings(engine);
  if (!valid) return valid.error();
  const ModelSpec& spec = request.model.spec;
  return plan_memory(spec, precision_of(spec, request.quantization, request.kv_cache), request.tp, *gpu, engine,
                     spec.is_moe() ? expert_gpus(request.tp, request.ep, request.dp) : 0);
}

double step_kv_tokens(const Step& step) {
  double tokens = 0;
  for (const PrefillRequest& p : step.prefill) tokens += d(p.progress_index) + d(p.new_tokens);
  for (const DecodeRequest& q : step.decode) tokens += d(q.progress_index) + 1;
  return tokens;
}

/// One data-parallel rank's share of the workload (docs/SERVING.md, "Layouts"): vLLM's
/// front end spreads requests evenly over the dp engines, so each sees 1/dp of the
/// clients (closed loop, rounded up), of the request rate (open loop) and of the requests.
static Workload rank_workload(const Workload& all, int64_t dp) {
  if (dp <= 1) return all;
  Workload w = all;
  const auto share = [dp](int64_t n) { return std::max<int64_t>(1, (n + dp - 1) / dp); };
  if (w.concurrency > 0) w.concurrency = share(w.concurrency);
  if (w.num_requests > 0) w.num_requests = share(w.num_requests);  // 0: the default, from the rank's clients
  if (w.warmup_requests > 0)
    w.warmup_requests = std::min(planned_request_count(w) - 1, (w.warmup_requests + dp - 1) / dp);
  w.request_rate_per_s /= d(dp);
  return w;
}

namespace {

/// What one simulation of the workload produced, before it is summarised.
struct Pass {
  Workload w;
  std::vector<PlannedRequest> plan;
  SimulationTrace trace;
};

/// The workload of `base` for a run of `n` requests (0: as given), its warm-up defaulted:
/// a fifth of the requests when the run length is the simulation's own choice (an open
/// loop that runs until it settles), else none.
Workload with_requests(const Workload& base, int64_t n) {
  Workload w = base;
  if (n > 0) w.num_requests = n;
  if (w.warmup_requests == -1) w.warmup_requests = n > 0 ? planned_request_count(w) / 5 : 0;
  return w;
}

/// Least-squares slope of y over x.
double slope(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = d(static_cast<int64_t>(x.size()));
  if (x.size() < 2) return 0;
  double sx = 0, sy = 0;
  for (size_t i = 0; i < x.size(); ++i) sx += x[i], sy += y[i];
  const double mx = sx / n, my = sy / n;
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < x.size(); ++i) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
  return sxx > 0 ? sxy / sxx : 0;
}

/// The open loop's steady state of one pass (one rank's figures; `ranks` scales the rates).
SteadyState steady_state(const Pass& p, double ranks) {
  SteadyState st;
  const size_t warmup = static_cast<size_t>(p.w.warmup_requests);
  const std::vector<RequestTimeline>& r = p.trace.requests;
  if (p.w.concurrency > 0 || p.plan.size() < warmup + 2) return st;
  const double start = p.plan[warmup].send_us, end = p.plan.back().send_us;
  if (!(end > start)) return st;
  st.measured = true;
  st.window_s = (end - start) * 1e-6;
  std::vector<double> finish(r.size());
  double e2e_sum = 0;
  for (size_t i = 0; i < r.size(); ++i) finish[i] = r[i].last_token_us;
  for (size_t i = warmup; i < r.size(); ++i) e2e_sum += r[i].last_token_us - r[i].send_us;
  std::sort(finish.begin(), finish.end());
  int64_t completed = 0;
  for (double f : finish) completed += f > start && f <= end;
  // Requests in the engine (sent, not finished) as each measured request is sent, and
  // their trend over the window (the warm-up has filled the engine before it starts).
  std::vector<double> t, in_engine;
  size_t done = 0;
  for (size_t i = warmup; i < p.plan.size(); ++i) {
    while (done < finish.size() && finish[done] <= p.plan[i].send_us) ++done;
    t.push_back(p.plan[i].send_us * 1e-6);
    in_engine.push_back(d(static_cast<int64_t>(i + 1 - done)));
  }
  st.offered_request_rate = ranks * p.w.request_rate_per_s;  // the arrivals' mean rate (a window samples it)
  st.completed_request_rate = ranks * d(completed) / st.window_s;
  const double rank_growth = slope(t, in_engine);
  st.queue_growth_per_s = ranks * rank_growth;
  double mean_in_engine = 0;
  for (double v : in_engine) mean_in_engine += v;
  mean_in_engine /= d(static_cast<int64_t>(std::max<size_t>(1, in_engine.size())));
  const double grown = t.size() > 1 ? rank_growth * (t.back() - t.front()) : 0;
  st.waiting_at_end = std::max<int64_t>(0, p.trace.window_end_waiting);
  const double mean_e2e_s = e2e_sum / d(static_cast<int64_t>(r.size() - warmup)) * 1e-6;
  st.latencies_in_window = mean_e2e_s > 0 ? st.window_s / mean_e2e_s : 0;
  st.queued_share = p.trace.window_queued_us / (end - start);
  st.overloaded = st.waiting_at_end > 0 && (grown > kOverloadGrowthSigmas * std::sqrt(std::max(1.0, mean_in_engine)) ||
                                            st.queued_share >= kSaturatedQueuedShare);
  if (st.overloaded && p.trace.end_us > start) {
    int64_t finished_after = 0;
    for (double f : finish) finished_after += f > start;
    st.sustainable_request_rate = ranks * d(finished_after) / ((p.trace.end_us - start) * 1e-6);
    // The queue's long-run growth (the trend above detects it; over a short window it is noisy).
    if (st.offered_request_rate > st.sustainable_request_rate)
      st.queue_growth_per_s = st.offered_request_rate - st.sustainable_request_rate;
  }
  const int64_t measured = static_cast<int64_t>(p.plan.size() - warmup);
  st.settled = !st.overloaded && st.latencies_in_window >= kSteadyLatencies &&
               (measured >= kSteadyMinMeasured || st.queued_share <= kSteadyIdleQueuedShare);
  return st;
}

}  // namespace

Expected<ServeResult> run_serve(const Request& request, const KernelRegistry& kernels, const ProgressFn& progress,
                                double max_work, int64_t max_steps, ServeNeeds* needs, bool inter_token) {
  ServeNeeds scratch;
  ServeNeeds& need = needs != nullptr ? *needs : scratch;
  need = ServeNeeds{};
  const Workload base = rank_workload(request.workload, request.dp);
  // An open loop without num_requests runs until its figures settle (docs/SERVING.md).
  const bool settle = base.concurrency == 0 && base.num_requests == 0;
  auto valid = validate_workload(with_requests(base, settle ? kSteadyPassRequests[0] : 0));
  if (!valid) return valid.error();
  auto memory = request_memory(request);
  if (!memory) return memory.error();
  ServeResult result;
  result.memory = memory.value();
  result.engine = resolve_engine_settings(request.engine, *find_gpu_spec(request.hardware.gpu));
  need.steps = min_steps(with_requests(base, settle ? kSteadyPassRequests[0] : 0), result.engine);
  if (need.steps > d(max_steps))
    return make_error("too_large", "workload.num_requests",
                      "This workload takes more than " + std::to_string(max_steps) +
                          " engine steps to simulate; use fewer requests, shorter outputs or more concurrency.");
  if (!result.memory.fits) return make_error("does_not_fit", "tp", memory_warnings(result.memory, 0)[0].message);

  SimulationSettings s;
  s.max_num_batched_tokens = result.engine.max_num_batched_tokens;
  s.max_num_seqs = result.engine.max_num_seqs;
  s.block_size = result.memory.block_size;  // a gated DeltaNet model's attention block size (memory.h)
  s.enable_chunked_prefill = result.engine.enable_chunked_prefill;
  s.kv_cache_blocks = result.memory.kv_cache_blocks;
  s.kv_full_groups = result.memory.kv_full_groups;
  s.kv_sliding_groups = result.memory.kv_sliding_groups;
  s.kv_state_groups = result.memory.kv_state_groups;
  s.window_tokens = result.memory.kv_window_tokens;
  s.concurrency = base.concurrency;
  s.warmup_drain = base.warmup_drain;
  result.api_overhead_us = base.api_overhead_us >= 0 ? base.api_overhead_us : kDefaultApiOverheadUs;
  s.api_overhead_us = result.api_overhead_us;
  s.max_steps = max_steps;
  auto pricer = make_step_pricer(request, kernels);
  if (!pricer) return pricer.error();
  const double ranks = d(std::max<int64_t>(1, request.dp));

  Pass pass;
  double work = 0;  // the passes' work so far
  const int passes = settle ? static_cast<int>(std::size(kSteadyPassRequests)) : 1;
  for (int k = 0; k < passes; ++k) {
    Pass next;
    next.w = with_requests(base, settle ? kSteadyPassRequests[k] : 0);
    if (k > 0 && !validate_workload(next.w)) break;
    const bool later = k > 0;  // a later pass that would be too large ends the search with the last one
    if (later && min_steps(next.w, result.engine) > d(max_steps)) break;
    next.plan = plan_requests(next.w, s.block_size);
    // vLLM refuses (HTTP 400) a request whose prompt and max_tokens exceed max_model_len:
    // it is never served, so it is never simulated (docs/SERVING.md).
    const int64_t context = request.model.spec.max_model_len;
    if (context > 0) {
      int64_t over = 0;
      for (const PlannedRequest& p : next.plan) over += p.input_tokens + p.output_tokens > context;
      if (over > 0)
        return make_error("invalid_value", "workload.input_tokens",
                          std::to_string(over) + " requests' prompt + output exceed max_model_len " +
                              std::to_string(context) + ": vLLM refuses them.");
    }
    // With chunked prefill off a prompt is prefilled in one step, so a prompt longer than the
    // step's token budget is never scheduled (vLLM then requires max_num_batched_tokens >=
    // max_model_len at start-up).
    if (!s.enable_chunked_prefill) {
      int64_t longest = 0;
      for (const PlannedRequest& p : next.plan) longest = std::max(longest, p.input_tokens - p.cached_prefix_tokens);
      if (longest > s.max_num_batched_tokens)
        return make_error("invalid_value", "engine.enable_chunked_prefill",
                          "With chunked prefill off a prompt is prefilled in one step, and a prompt of " +
                              std::to_string(longest) + " new tokens exceeds max_num_batched_tokens (" +
                              std::to_string(s.max_num_batched_tokens) +
                              "): it is never scheduled. Turn chunked prefill on or raise max_num_batched_tokens "
                              "(vLLM requires it to be at least max_model_len without chunked prefill).");
    }
    const double kv_steps = min_steps_kv(next.plan, result.memory.kv_cache_tokens);
    need.steps = std::max(need.steps, kv_steps);
    if (kv_steps > d(max_steps)) {
      if (later) break;
      return make_error("too_large", "workload.num_requests",
                        "This workload takes more than " + std::to_string(max_steps) +
                            " engine steps to simulate: its requests' KV cache (" +
                            std::to_string(result.memory.kv_cache_tokens) +
                            " tokens) holds too few of them at once; use fewer or shorter requests, or a larger TP.");
    }
    // Bounded by its work, refused up front with the estimate (docs/SERVING.md, "Limits").
    s.work_estimate = min_work(next.w, result.engine, next.plan);
    s.max_work = max_work - work;
    need.work = std::max(need.work, s.work_estimate);
    if (s.work_estimate > s.max_work) {
      if (later) break;
      return make_error("too_large", "workload.num_requests",
                        "This workload needs at least " + std::to_string(static_cast<int64_t>(s.work_estimate)) +
                            " units of simulation work (a step, plus a seventh per request in it), more than the " +
                            std::to_string(static_cast<int64_t>(s.max_work)) +
                            " left to it (one simulation, or the requests of one document together, may take " +
                            std::to_string(static_cast<int64_t>(limits::kMaxServeWork)) +
                            "); use fewer requests or shorter outputs.");
    }
    s.warmup_requests = next.w.warmup_requests;
    s.window_start_us = 0, s.window_end_us = -1;
    const size_t warmup = static_cast<size_t>(next.w.warmup_requests);
    if (next.w.concurrency == 0 && next.plan.size() >= warmup + 2) {
      s.window_start_us = next.plan[warmup].send_us;
      s.window_end_us = next.plan.back().send_us;
    }
    // Progress over the passes: pass k fills [1 - 2^-k, 1 - 2^-(k+1)] (the last one to 1).
    const double lo = settle ? 1 - std::ldexp(1.0, -k) : 0, hi = settle ? 1 - std::ldexp(1.0, -(k + 1)) : 1;
    const ProgressFn scaled =
        progress ? ProgressFn([&progress, lo, hi](double share) { return progress(lo + (hi - lo) * share); }) : nullptr;
    SimulationReach reached;
    auto trace = simulate(next.plan, s, pricer.value().get(), scaled, &reached);
    need.steps = std::max(need.steps, d(reached.steps));  // (a run of several passes: the most any took)
    need.work = std::max(need.work, reached.work);
    if (!trace && later && trace.error().code == "too_large") break;  // the last pass stands
    if (!trace) return trace.error();
    next.trace = std::move(trace).value();
    work += next.trace.work;
    pass = std::move(next);
    result.steady = steady_state(pass, ranks);
    result.steady.passes = k + 1;
    if (result.steady.settled ||
        (result.steady.overloaded && d(static_cast<int64_t>(pass.plan.size())) >= d(kOverloadMinRequests)))
      break;
  }
  const Workload& w = pass.w;
  const std::vector<PlannedRequest>& plan = pass.plan;
  result.trace = std::move(pass.trace);
  result.trace.work = work;
  const SimulationTrace& t = result.trace;

  // Per-request latencies, as `vllm bench serve` reports them; the warm-up requests
  // (the first `warmup_requests` issued, in plan order) are left out of every figure.
  const size_t warmup = static_cast<size_t>(w.warmup_requests);
  const size_t measured = plan.size() - warmup;
  std::vector<double> ttft, tpot, e2e;
  ttft.reserve(measured), tpot.reserve(measured), e2e.reserve(measured);
  double input_tokens = 0, output_tokens = 0, window_end_us = 0;
  for (size_t i = warmup; i < plan.size(); ++i) {
    const RequestTimeline& r = t.requests[i];
    ttft.push_back((r.first_token_us - r.send_us) * 1e-3);
    e2e.push_back((r.last_token_us - r.send_us) * 1e-3);
    if (r.output_tokens > 1) tpot.push_back((r.last_token_us - r.first_token_us) * 1e-3 / d(r.output_tokens - 1));
    input_tokens += d(plan[i].input_tokens);
    output_tokens += d(r.output_tokens);
    window_end_us = std::max(window_end_us, r.last_token_us);
  }
  result.num_requests = static_cast<int64_t>(plan.size());
  result.warmup_requests = w.warmup_requests;
  result.mean_input_tokens = input_tokens / d(measured);
  result.mean_output_tokens = output_tokens / d(measured);
  result.ttft_ms = summarize_latencies(&ttft);
  result.tpot_ms = summarize_latencies(&tpot);
  result.e2e_ms = summarize_latencies(&e2e);
#if !defined(__EMSCRIPTEN__) || defined(STEPCALC_PLAN_MODULE)
  if (inter_token)
#else
  (void)inter_token;
#endif
  {
    std::vector<GapRun> gaps = t.inter_token_gaps;
    result.itl_ms = summarize_runs(&gaps, 1e-3);
  }

  result.duration_s = t.end_us * 1e-6;
  // Throughput and cost: an open loop's over its steady window (the tokens emitted and the
  // prompts prefilled while requests arrive at the offered rate, not the drain after the
  // last arrival); a closed loop's from the first measured request's send to the last
  // measured token (the whole run without a warm-up).
  double window_s = warmup == 0 ? result.duration_s : (window_end_us - t.requests[warmup].send_us) * 1e-6;
  double prefill_gpu_us = warmup == 0 ? t.prefill_gpu_us : t.window_prefill_gpu_us;
  double decode_gpu_us = warmup == 0 ? t.decode_gpu_us : t.window_decode_gpu_us;
  double requests_done = d(static_cast<int64_t>(measured));
  if (result.steady.measured) {
    // Overloaded, the steady window holds the start of a queue that never settles; the
    // engine's rate is what it sustains while it works through that queue, to its end.
    // Else the engine finishes what it is sent: over time its throughput is the offered
    // rate, which the window's own count only samples (steady_state.completed_request_rate).
    const bool saturated = result.steady.overloaded;
    const double from = s.window_start_us, to = saturated ? t.end_us : s.window_end_us;
    double window_input = 0, window_done = 0;
    for (size_t i = 0; i < plan.size(); ++i) {
      const RequestTimeline& r = t.requests[i];
      if (r.first_token_us > from && r.first_token_us <= to) window_input += d(plan[i].input_tokens);
      window_done += r.last_token_us > from && r.last_token_us <= to;
    }
    window_s = (to - from) * 1e-6;
    input_tokens = window_input;
    output_tokens = d(saturated ? t.saturated_output_tokens : t.window_output_tokens);
    requests_done = window_done;
    if (!saturated) {  // per rank: the rank's rate, and the measured requests' mean lengths
      requests_done = w.request_rate_per_s * window_s;
      input_tokens = requests_done * result.mean_input_tokens;
      output_tokens = requests_done * result.mean_output_tokens;
    }
    prefill_gpu_us = saturated ? t.saturated_prefill_gpu_us : t.window_prefill_gpu_us;
    decode_gpu_us = saturated ? t.saturated_decode_gpu_us : t.window_decode_gpu_us;
  }
  ServeThroughput& tp = result.throughput;
  // Every data-parallel rank serves the same share: the engine's figures are dp times one rank's.
  const double gpus = d(request.tp) * ranks;
  if (window_s > 0) {
    tp.output_tokens_per_s = ranks * output_tokens / window_s;
    tp.input_tokens_per_s = ranks * input_tokens / window_s;
    tp.requests_per_s = ranks * requests_done / window_s;
    tp.output_tokens_per_s_per_gpu = tp.output_tokens_per_s / gpus;
    tp.requests_per_s_per_gpu = tp.requests_per_s / gpus;
  }
  if (request.gpu_hour_usd > 0) {
    ServeCost& c = result.cost;
    c.gpu_hour_usd = request.gpu_hour_usd;
    const double total_usd = request.gpu_hour_usd * gpus * window_s / 3600 / ranks;  // per rank's tokens
    const double busy = prefill_gpu_us + decode_gpu_us;
    const double prefill_share = busy > 0 ? prefill_gpu_us / busy : 0;
    if (input_tokens > 0) c.usd_per_million_input_tokens = total_usd * prefill_share / input_tokens * 1e6;
    if (output_tokens > 0) c.usd_per_million_output_tokens = total_usd * (1 - prefill_share) / output_tokens * 1e6;
    c.usd_per_million_tokens_blended = total_usd / (input_tokens + output_tokens) * 1e6;
  }
  result.validation = nearest_validation(request);
  result.warnings = pricer.value()->notes();
  for (Warning& warning : serving_warnings(result, w, !settle)) result.warnings.push_back(std::move(warning));
  result.trace.requests.clear();
  result.trace.inter_token_gaps.clear();
  return result;
}

}  // namespace stepcalc
