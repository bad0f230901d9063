// SPDX-License-Identifier: Apache-2.0
#include "io/serve_result_json.h"

namespace stepcalc {
namespace {

void write_stats(JsonWriter& w, const char* name, const LatencyStats& s) {
  w.key(name)
      .begin_object()
      .field("mean", s.mean)
      .field("p50", s.p50)
      .field("p90", s.p90)
      .field("p99", s.p99)
      .field("count", s.count)
      .end_object();
}

void write_length(JsonWriter& w, const char* name, const LengthDistribution& l) {
  using Kind = LengthDistribution::Kind;
  if (l.kind == Kind::kFixed) {
    w.field(name, l.mean);
    return;
  }
  w.key(name).begin_object();
  w.field("distribution", l.kind == Kind::kUniform ? "uniform" : l.kind == Kind::kNormal ? "normal" : "exponential");
  if (l.kind != Kind::kUniform) w.field("mean", l.mean);
  if (l.kind == Kind::kNormal) w.field("stddev", l.stddev);
  w.field("min", l.min);
  if (l.max > 0) w.field("max", l.max);
  w.end_object();
}

void write_warnings(JsonWriter& w, const std::vector<Warning>& warnings) {
  w.key("warnings").begin_array();
  for (const Warning& x : warnings) w.begin_object().field("code", x.code).field("message", x.message).end_object();
  w.end_array();
}

}  // namespace

void write_memory(JsonWriter& w, const ServingMemory& m) {
  w.key("memory")
      .begin_object()
      .field("gpu", m.gpu)
      .field("tp", m.tp)
      .field("gpu_memory_bytes", m.gpu_memory_bytes)
      .field("gpu_memory_utilization", m.gpu_memory_utilization)
      .field("budget_bytes", m.budget_bytes)
      .field("weights_bytes", m.weights_bytes)
      .field("activation_bytes", m.activation_bytes)
      .field("non_torch_bytes", m.non_torch_bytes)
      .field("kv_cache_bytes", m.kv_cache_bytes)
      .field("kv_bytes_per_token", m.kv_bytes_per_token)
      .field("block_size", m.block_size)
      .field("kv_cache_blocks", m.kv_cache_blocks)
      .field("kv_cache_tokens", m.kv_cache_tokens)
      .field("cuda_graph_bytes", m.cuda_graph_bytes)
      .field("headroom_bytes", m.headroom_bytes)
      .field("fits", m.fits)
      .end_object();
}

std::string serve_result_to_json(const Request& q, const ServeResult& r, bool* all_finite) {
  const Workload& wl = q.workload;
  JsonWriter w;
  w.begin_object();
  if (q.has_id) w.field("id", q.id);
  w.field("mode", q.mode).field("model", q.model_name).field("gpu", q.hardware.gpu).field("tp", q.tp);
  w.key("engine")
      .begin_object()
      .field("max_num_batched_tokens", r.engine.max_num_batched_tokens)
      .field("max_num_seqs", r.engine.max_num_seqs)
      .field("gpu_memory_utilization", r.engine.gpu_memory_utilization)
      .field("block_size", r.engine.block_size)
      .end_object();
  w.key("workload").begin_object();
  write_length(w, "input_tokens", wl.input_tokens);
  write_length(w, "output_tokens", wl.output_tokens);
  if (wl.concurrency > 0)
    w.field("concurrency", wl.concurrency);
  else
    w.field("request_rate", wl.request_rate_per_s);
  w.field("num_requests", r.num_requests)
      .field("prefix_cache_hit_ratio", wl.prefix_cache_hit_ratio)
      .field("seed", static_cast<int64_t>(wl.seed))
      .field("api_overhead_ms", r.api_overhead_us * 1e-3)
      .field("mean_input_tokens", r.mean_input_tokens)
      .field("mean_output_tokens", r.mean_output_tokens)
      .end_object();
  write_stats(w, "ttft_ms", r.ttft_ms);
  write_stats(w, "tpot_ms", r.tpot_ms);
  write_stats(w, "itl_ms", r.itl_ms);
  write_stats(w, "e2e_ms", r.e2e_ms);
  const ServeThroughput& t = r.throughput;
  w.key("throughput")
      .begin_object()
      .field("output_tokens_per_s", t.output_tokens_per_s)
      .field("input_tokens_per_s", t.input_tokens_per_s)
      .field("requests_per_s", t.requests_per_s)
      .field("output_tokens_per_s_per_gpu", t.output_tokens_per_s_per_gpu)
      .field("requests_per_s_per_gpu", t.requests_per_s_per_gpu)
      .end_object();
  if (r.cost.gpu_hour_usd > 0)
    w.key("cost")
        .begin_object()
        .field("gpu_hour_usd", r.cost.gpu_hour_usd)
        .field("usd_per_million_output_tokens", r.cost.usd_per_million_output_tokens)
        .field("usd_per_million_input_tokens", r.cost.usd_per_million_input_tokens)
        .field("usd_per_million_tokens_blended", r.cost.usd_per_million_tokens_blended)
        .end_object();
  const SimulationTrace& s = r.trace;
  w.field("duration_s", r.duration_s)
      .field("steps", s.steps)
      .key("scheduler")
      .begin_object()
      .field("busy_s", s.busy_us * 1e-6)
      .field("mean_running", s.mean_running)
      .field("mean_step_tokens", s.mean_step_tokens)
      .field("peak_running", s.peak_running)
      .field("peak_waiting", s.peak_waiting)
      .field("peak_kv_blocks_used", s.peak_kv_blocks_used)
      .field("preemptions", s.preemptions)
      .end_object();
  write_memory(w, r.memory);
  write_warnings(w, r.warnings);
  w.end_object();
  if (all_finite != nullptr) *all_finite = !w.wrote_non_finite();
  return w.take();
}

}  // namespace stepcalc
