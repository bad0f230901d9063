// SPDX-License-Identifier: Apache-2.0
#include "io/serve_result_json.h"

#include "io/result_json.h"

namespace stepcalc {
namespace {

void write_stats(JsonWriter& w, const char* name, const LatencyStats& s) {
  if (s.count == 0) {  // nothing measured (e.g. TPOT when every request has one output token): absent, not 0
    w.key(name).begin_object();
    for (const char* k : {"mean", "p50", "p90", "p99"}) w.key(k).null();
    w.field("count", s.count).end_object();
    return;
  }
  w.object(name, {{"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"count", s.count}});
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

}  // namespace

void write_validation(JsonWriter& w, const ValidationMatch& validation) {
  if (const ValidationSubset* v = validation.subset)
    w.object("validation", {{"subset", v->key},
                            {"gpu", v->gpu},
                            {"precision", v->precision},
                            {"moe", v->moe},
                            {"tp", static_cast<int64_t>(v->tp)},
                            {"runs", static_cast<int64_t>(v->runs)},
                            {"runs_left_out", static_cast<int64_t>(v->runs_left_out)},
                            {"ttft_mape", v->ttft_mape()},
                            {"tpot_mape", v->tpot_mape()},
                            {"ttft_bias", v->ttft_bias()},
                            {"tpot_bias", v->tpot_bias()}});
  else
    w.key("validation").begin_object().key("subset").null().field("note", "no measured runs like this").end_object();
}

void write_memory(JsonWriter& w, const ServingMemory& m) {
  w.key("memory").begin_object();
  w.fields({{"gpu", m.gpu},
            {"tp", m.tp},
            {"gpu_memory_bytes", m.gpu_memory_bytes},
            {"gpu_memory_utilization", m.gpu_memory_utilization},
            {"budget_bytes", m.budget_bytes},
            {"weights_bytes", m.weights_bytes},
            {"activation_bytes", m.activation_bytes},
            {"non_torch_bytes", m.non_torch_bytes},
            {"kv_cache_bytes", m.kv_cache_bytes},
            {"kv_bytes_per_token", m.kv_bytes_per_token},
            {"block_size", m.block_size},
            {"kv_cache_blocks", m.kv_cache_blocks},
            {"kv_cache_tokens", m.kv_cache_tokens},
            {"cuda_graph_bytes", m.cuda_graph_bytes},
            {"headroom_bytes", m.headroom_bytes},
            {"fits", m.fits}});
  if (m.kv_state_groups > 0)  // gated DeltaNet models: vLLM's hybrid allocator (docs/SERVING.md, "Memory")
    w.fields({{"kv_full_groups", m.kv_full_groups},
              {"kv_state_groups", m.kv_state_groups},
              {"page_bytes", m.page_bytes},
              {"state_bytes_per_layer", m.state_bytes_per_layer},
              {"state_bytes_per_request", m.state_bytes_per_request}});
  w.end_object();
}

std::string serve_result_to_json(const Request& q, const ServeResult& r, bool* all_finite) {
  const Workload& wl = q.workload;
  JsonWriter w;
  w.begin_object();
  if (q.has_id) w.field("id", q.id);
  w.fields({{"mode", mode_name(q.mode)}, {"model", q.model_name}, {"gpu", q.hardware.gpu}, {"tp", q.tp}});
  w.object("engine", {{"max_num_batched_tokens", r.engine.max_num_batched_tokens},
                      {"max_num_seqs", r.engine.max_num_seqs},
                      {"gpu_memory_utilization", r.engine.gpu_memory_utilization},
                      {"block_size", r.engine.block_size}});
  w.key("workload").begin_object();
  write_length(w, "input_tokens", wl.input_tokens);
  write_length(w, "output_tokens", wl.output_tokens);
  if (wl.concurrency > 0)
    w.field("concurrency", wl.concurrency);
  else
    w.field("request_rate", wl.request_rate_per_s);
  w.field("num_requests", r.num_requests);
  if (r.warmup_requests > 0) w.field("warmup_requests", r.warmup_requests);
  if (r.warmup_requests > 0 && wl.concurrency > 0) w.field("warmup_drain", wl.warmup_drain);
  w.fields({{"prefix_cache_hit_ratio", wl.prefix_cache_hit_ratio},
            {"seed", static_cast<int64_t>(wl.seed)},
            {"api_overhead_ms", r.api_overhead_us * 1e-3},
            {"mean_input_tokens", r.mean_input_tokens},
            {"mean_output_tokens", r.mean_output_tokens}});
  w.end_object();
  write_stats(w, "ttft_ms", r.ttft_ms);
  write_stats(w, "tpot_ms", r.tpot_ms);
  write_stats(w, "itl_ms", r.itl_ms);
  write_stats(w, "e2e_ms", r.e2e_ms);
  const ServeThroughput& t = r.throughput;
  w.object("throughput", {{"output_tokens_per_s", t.output_tokens_per_s},
                          {"input_tokens_per_s", t.input_tokens_per_s},
                          {"requests_per_s", t.requests_per_s},
                          {"output_tokens_per_s_per_gpu", t.output_tokens_per_s_per_gpu},
                          {"requests_per_s_per_gpu", t.requests_per_s_per_gpu}});
  const ServeCost& c = r.cost;
  if (c.gpu_hour_usd > 0)
    w.object("cost", {{"gpu_hour_usd", c.gpu_hour_usd},
                      {"usd_per_million_output_tokens", c.usd_per_million_output_tokens},
                      {"usd_per_million_input_tokens", c.usd_per_million_input_tokens},
                      {"usd_per_million_tokens_blended", c.usd_per_million_tokens_blended}});
  const SteadyState& st = r.steady;
  if (st.measured)
    w.object("steady_state", {{"window_s", st.window_s},
                              {"offered_request_rate", st.offered_request_rate},
                              {"completed_request_rate", st.completed_request_rate},
                              {"sustainable_request_rate", st.sustainable_request_rate},
                              {"queue_growth_per_s", st.queue_growth_per_s},
                              {"waiting_at_end", st.waiting_at_end},
                              {"latencies_in_window", st.latencies_in_window},
                              {"queued_share", st.queued_share},
                              {"overloaded", st.overloaded},
                              {"settled", st.settled},
                              {"passes", static_cast<int64_t>(st.passes)}});
  const SimulationTrace& s = r.trace;
  w.fields({{"duration_s", r.duration_s}, {"steps", s.steps}});
  w.object("scheduler", {{"busy_s", s.busy_us * 1e-6},
                         {"mean_running", s.mean_running},
                         {"mean_step_tokens", s.mean_step_tokens},
                         {"peak_running", s.peak_running},
                         {"peak_waiting", s.peak_waiting},
                         {"peak_kv_blocks_used", s.peak_kv_blocks_used},
                         {"preemptions", s.preemptions}});
  write_memory(w, r.memory);
  write_validation(w, r.validation);
  write_warnings(w, r.warnings);
  w.end_object();
  if (all_finite != nullptr) *all_finite = !w.wrote_non_finite();
  return w.take();
}

}  // namespace stepcalc
