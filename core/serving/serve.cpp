// SPDX-License-Identifier: Apache-2.0
#include "serving/serve.h"

#include <algorithm>

#include "base/input_limits.h"
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

std::vector<Warning> serving_warnings(const ServeResult& r, const Workload& w) {
  std::vector<Warning> out = memory_warnings(r.memory, 0);
  const SimulationTrace& t = r.trace;
  const auto n = [](int64_t v) { return std::to_string(v); };
  if (t.preemptions > 0)
    out.push_back({"kv_cache_preemption",
                   "The KV cache (" + n(r.memory.kv_cache_blocks) + " blocks) ran out " + n(t.preemptions) +
                       " times: vLLM preempted the newest requests, which then recomputed "
                       "their prompts. Peak use " +
                       n(t.peak_kv_blocks_used) + " blocks; queue up to " + n(t.peak_waiting) + " requests."});
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
  if (w.warmup_requests < 0 || w.warmup_requests >= planned_request_count(w))
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
                     request.ep);
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

Expected<ServeResult> run_serve(const Request& request, const KernelRegistry& kernels, const ProgressFn& progress) {
  const Workload w = rank_workload(request.workload, request.dp);
  auto valid = validate_workload(w);
  if (!valid) return valid.error();
  auto memory = request_memory(request);
  if (!memory) return memory.error();
  ServeResult result;
  result.memory = memory.value();
  result.engine = resolve_engine_settings(request.engine, *find_gpu_spec(request.hardware.gpu));
  if (min_steps(w, result.engine) > d(limits::kMaxServeSteps))
    return make_error("too_large", "workload.num_requests",
                      "This workload takes more than " + std::to_string(limits::kMaxServeSteps) +
                          " engine steps to simulate; use fewer requests, shorter outputs or more concurrency.");
  if (!result.memory.fits) return make_error("does_not_fit", "tp", memory_warnings(result.memory, 0)[0].message);

  SimulationSettings s;
  s.max_num_batched_tokens = result.engine.max_num_batched_tokens;
  s.max_num_seqs = result.engine.max_num_seqs;
  s.block_size = result.engine.block_size;
  s.enable_chunked_prefill = result.engine.enable_chunked_prefill;
  s.kv_cache_blocks = result.memory.kv_cache_blocks;
  s.concurrency = w.concurrency;
  s.warmup_requests = w.warmup_requests;
  s.warmup_drain = w.warmup_drain;
  result.api_overhead_us = w.api_overhead_us >= 0 ? w.api_overhead_us : kDefaultApiOverheadUs;
  s.api_overhead_us = result.api_overhead_us;
  s.max_steps = limits::kMaxServeSteps;
  const std::vector<PlannedRequest> plan = plan_requests(w, s.block_size);
  // vLLM refuses (HTTP 400) a request whose prompt and max_tokens exceed max_model_len:
  // it is never served, so it is never simulated (docs/SERVING.md).
  const int64_t context = request.model.spec.max_model_len;
  if (context > 0) {
    int64_t over = 0;
    for (const PlannedRequest& p : plan) over += p.input_tokens + p.output_tokens > context;
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
    for (const PlannedRequest& p : plan) longest = std::max(longest, p.input_tokens - p.cached_prefix_tokens);
    if (longest > s.max_num_batched_tokens)
      return make_error("invalid_value", "engine.enable_chunked_prefill",
                        "With chunked prefill off a prompt is prefilled in one step, and a prompt of " +
                            std::to_string(longest) + " new tokens exceeds max_num_batched_tokens (" +
                            std::to_string(s.max_num_batched_tokens) +
                            "): it is never scheduled. Turn chunked prefill on or raise max_num_batched_tokens "
                            "(vLLM requires it to be at least max_model_len without chunked prefill).");
  }
  if (min_steps_kv(plan, result.memory.kv_cache_tokens) > d(limits::kMaxServeSteps))
    return make_error("too_large", "workload.num_requests",
                      "This workload takes more than " + std::to_string(limits::kMaxServeSteps) +
                          " engine steps to simulate: its requests' KV cache (" +
                          std::to_string(result.memory.kv_cache_tokens) +
                          " tokens) holds too few of them at once; use fewer or shorter requests, or a larger TP.");
  auto pricer = make_step_pricer(request, kernels);
  if (!pricer) return pricer.error();
  auto trace = simulate(plan, s, pricer.value().get(), progress);
  if (!trace) return trace.error();
  result.trace = std::move(trace).value();
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
  std::vector<GapRun> gaps = t.inter_token_gaps;
  result.itl_ms = summarize_runs(&gaps, 1e-3);

  result.duration_s = t.end_us * 1e-6;
  // Throughput and cost over the measured window: from the first measured request's
  // send to the last measured token (the whole run without a warm-up).
  const double window_s = warmup == 0 ? result.duration_s : (window_end_us - t.requests[warmup].send_us) * 1e-6;
  const double prefill_gpu_us = warmup == 0 ? t.prefill_gpu_us : t.window_prefill_gpu_us;
  const double decode_gpu_us = warmup == 0 ? t.decode_gpu_us : t.window_decode_gpu_us;
  ServeThroughput& tp = result.throughput;
  // Every data-parallel rank serves the same share: the engine's figures are dp times one rank's.
  const double ranks = d(std::max<int64_t>(1, request.dp));
  const double gpus = d(request.tp) * ranks;
  if (window_s > 0) {
    tp.output_tokens_per_s = ranks * output_tokens / window_s;
    tp.input_tokens_per_s = ranks * input_tokens / window_s;
    tp.requests_per_s = ranks * d(measured) / window_s;
    tp.output_tokens_per_s_per_gpu = tp.output_tokens_per_s / gpus;
    tp.requests_per_s_per_gpu = tp.requests_per_s / gpus;
  }
  if (request.gpu_hour_usd > 0) {
    ServeCost& c = result.cost;
    c.gpu_hour_usd = request.gpu_hour_usd;
    const double total_usd = request.gpu_hour_usd * gpus * window_s / 3600 / ranks;  // per rank's tokens
    const double busy = prefill_gpu_us + decode_gpu_us;
    const double prefill_share = busy > 0 ? prefill_gpu_us / busy : 0;
    c.usd_per_million_input_tokens = total_usd * prefill_share / input_tokens * 1e6;
    c.usd_per_million_output_tokens = total_usd * (1 - prefill_share) / output_tokens * 1e6;
    c.usd_per_million_tokens_blended = total_usd / (input_tokens + output_tokens) * 1e6;
  }
  result.validation = nearest_validation(request);
  result.warnings = pricer.value()->notes();
  for (Warning& warning : serving_warnings(result, w)) result.warnings.push_back(std::move(warning));
  result.trace.requests.clear();
  result.trace.inter_token_gaps.clear();
  return result;
}

}  // namespace stepcalc
