// SPDX-License-Identifier: Apache-2.0
#include "io/result_json.h"

#include "io/hardware_json.h"
#include "io/json_writer.h"
#include "io/model_json.h"
#include "io/serve_result_json.h"

namespace stepcalc {
namespace {

void write_provenance(JsonWriter& w, const Provenance& p) {
  w.field("how", p.how());
  if (p.row >= 0) w.field("row", static_cast<int64_t>(p.row));
  if (p.clamped_low) w.field("clamped_low", true);
  if (p.clamped_high) w.field("clamped_high", true);
  if (p.missing_corner) w.field("missing_corner", true);
}

void write_bracket(JsonWriter& w, const char* name, const Bracket& b, const std::vector<double>& axis) {
  w.key(name).begin_array().value(axis[b.i0]).value(axis[b.i1]).end_array();
  if (!b.degenerate()) w.field(std::string(name) + "_t", b.t);
}

void write_gemms(JsonWriter& w, const GemmSet& set, const MfuTables& t) {
  w.key("gemms").begin_array();
  for (int kind = 0; kind < kNumGemmKinds; ++kind) {
    const GemmTerm& g = set.terms[kind];
    const GemmPair& pair = t.gemm.pairs[g.lookup.pair];
    w.begin_object()
        .field("kind", gemm_kind_name(kind))
        .field("m", g.m)
        .field("k", g.k)
        .field("n", g.n)
        .field("flops_per_layer", g.flops)
        .field("mfu", g.mfu)
        .field("compute_s_per_layer", g.compute_s)
        .field("weight_floor_s_per_layer", g.floor_s)
        .field("floor_won", g.floor_won)
        .field("time_s", g.time_s);
    if (g.kernel_floor_s > 0) w.field("kernel_floor_s_per_layer", g.kernel_floor_s);
    w.key("lookup").begin_object();
    w.key("table_pair").begin_array().value(pair.k).value(pair.n).end_array();
    w.field("pair_exact", g.lookup.pair_exact);
    if (g.lookup.pair_largest) w.field("pair_largest", true);
    write_bracket(w, "m_rows", g.lookup.m, pair.m_axis);
    write_provenance(w, g.lookup.provenance);
    w.end_object().end_object();
  }
  w.end_array();
}

void write_bytes(JsonWriter& w, const MemoryBytes& b) {
  w.key("memory_bytes")
      .begin_object()
      .field("weights", b.weights)
      .field("kv_read", b.kv_read)
      .field("kv_write", b.kv_write)
      .field("activations", b.activations)
      .end_object();
}

void write_phase_common(JsonWriter& w, const PhaseResult& p) {
  w.field("compute_s", p.compute_s)
      .field("memory_s", p.memory_s)
      .field("time_s", p.time_s())
      .field("bound_by", p.memory_bound() ? "memory" : "compute")
      .field("gemm_time_s", p.gemm_time_s)
      .field("attn_core_time_s", p.attn_core_time_s)
      .field("attn_core_flops", p.attn_core_flops);
  if (p.comm_s > 0) w.field("comm_s", p.comm_s);
  write_bytes(w, p.bytes);
}

/// Writes `key` and, for an absent phase, null; true when the phase's object follows.
bool phase_present(JsonWriter& w, const char* key, bool present) {
  w.key(key);
  if (!present) w.null();
  return present;
}

void write_prefill(JsonWriter& w, const PrefillResult& p, const MfuTables& t, const std::string& attn_key) {
  if (!phase_present(w, "prefill", p.present)) return;
  w.begin_object().field("num_requests", p.num_requests).field("new_tokens", p.new_tokens);
  write_phase_common(w, p);
  const PrefillTable* table = t.find_prefill(attn_key);
  w.key("buckets").begin_array();
  for (const PrefillBucket& b : p.buckets) {
    w.begin_object()
        .field("bucket", b.bucket)
        .field("num_requests", b.num_requests)
        .field("total_new_tokens", b.total_new_tokens)
        .field("attn_mfu", b.attn_mfu)
        .field("attn_core_flops", b.attn_core_flops)
        .field("attn_core_time_s", b.attn_core_time_s)
        .field("gemm_time_s", b.gemms.total_s);
    w.key("attn_lookup").begin_object();
    w.field("table", attn_key);
    if (table != nullptr) write_bracket(w, "seq_rows", b.attn_lookup.seq, table->seq_axis);
    write_provenance(w, b.attn_lookup.provenance);
    w.end_object();
    write_gemms(w, b.gemms, t);
    w.end_object();
  }
  w.end_array().end_object();
}

void write_decode(JsonWriter& w, const DecodeResult& d, const MfuTables& t, const std::string& attn_key, int64_t tp) {
  if (!phase_present(w, "decode", d.present)) return;
  w.begin_object().field("batch_size", d.batch_size).field("attn_effective_mfu", d.attn_effective_mfu);
  write_phase_common(w, d);
  const DecodeTable* table = decode_table_for(t, attn_key, tp);
  w.key("attn_lookups").begin_array();
  for (const DecodeAttnGroup& g : d.attn_groups) {
    w.begin_object().field("kv_len", g.kv_len).field("count", g.count).field("mfu", g.lookup.mfu);
    if (table != nullptr) {
      write_bracket(w, "bs_rows", g.lookup.bs, table->bs_axis);
      write_bracket(w, "kv_rows", g.lookup.kv, table->kv_axis);
    }
    write_provenance(w, g.lookup.provenance);
    w.end_object();
  }
  w.end_array();
  write_gemms(w, d.gemms, t);
  w.end_object();
}

/// The flat breakdown of the conformance files, field for field.
void write_breakdown(JsonWriter& w, const StepResult& r) {
  const PrefillResult& p = r.prefill;
  const DecodeResult& d = r.decode;
  w.key("breakdown")
      .begin_object()
      .field("prefill_compute_s", p.compute_s)
      .field("prefill_memory_s", p.memory_s)
      .field("decode_compute_s", d.compute_s)
      .field("decode_memory_s", d.memory_s)
      .field("gemm_time_s", p.gemm_time_s + d.gemm_time_s)
      .field("attn_core_time_s", p.attn_core_time_s + d.attn_core_time_s)
      .field("overhead_us", r.overhead_us)
      .field("decode_gemm_time_s", d.gemm_time_s)
      .field("decode_attn_core_time_s", d.attn_core_time_s)
      .field("decode_attn_core_flops", d.attn_core_flops)
      .field("decode_attn_effective_mfu", d.attn_effective_mfu)
      .field("prefill_gemm_time_s", p.gemm_time_s)
      .field("prefill_attn_core_time_s", p.attn_core_time_s);
  w.key("prefill_buckets").begin_array();
  for (const PrefillBucket& b : p.buckets)
    w.begin_object()
        .field("bucket", b.bucket)
        .field("num_requests", b.num_requests)
        .field("total_new_tokens", b.total_new_tokens)
        .field("attn_mfu", b.attn_mfu)
        .field("attn_core_flops", b.attn_core_flops)
        .field("gemm_time_s", b.gemms.total_s)
        .field("attn_core_time_s", b.attn_core_time_s)
        .end_object();
  w.end_array()
      .field("step_hardware_s", r.step_hardware_s)
      .field("total_us_before_rounding", r.total_us_before_rounding)
      .field("min_step_floor_applied", r.min_step_floor_applied)
      .end_object();
}

/// Corrected mode (or overrides given): every switch, every parameter, and the parts
/// of the step that only the corrected mode has.
void write_corrected(JsonWriter& w, const Request& q, const StepResult& r, const MfuTables& t) {
  const CorrectedSettings& c = r.corrected;
  w.key("corrected").begin_object().key("switches").begin_object();
  for (int s = 0; s < kNumCorrectedSwitches; ++s) w.field(corrected_switch_name(s), c.on[s]);
  w.end_object().key("params").begin_object();
  for (int p = 0; p < kNumCorrectedParams; ++p) w.field(corrected_param_name(p), c.param[p]);
  w.end_object();
  const double requests = static_cast<double>(q.step.prefill.size() + q.step.decode.size());
  w.field("requests", static_cast<int64_t>(requests))
      .field("comm_s", r.prefill.comm_s + r.decode.comm_s)
      .field("prefill_comm_s", r.prefill.comm_s)
      .field("decode_comm_s", r.decode.comm_s);
  w.key("fused");
  if (!r.fused.present) {
    w.null();
  } else {
    w.begin_object()
        .field("tokens", r.fused.tokens)
        .field("compute_s", r.fused.compute_s)
        .field("memory_s", r.fused.memory_s)
        .field("comm_s", r.fused.comm_s)
        .field("time_s", r.fused.time_s())
        .field("gemm_time_s", r.fused.gemm_time_s)
        .field("attn_core_time_s", r.fused.attn_core_time_s);
    write_gemms(w, r.fused.gemms, t);
    w.end_object();
  }
  w.end_object();
}

}  // namespace

std::string result_to_json(const Request& q, const StepResult& r, const MfuTables& t, bool* all_finite,
                           const ServingMemory* memory, const std::function<void(JsonWriter&)>& extra) {
  JsonWriter w;
  w.begin_object();
  if (q.has_id) w.field("id", q.id);
  const int64_t prefill_tokens = r.prefill.new_tokens;
  const int64_t decode_tokens = r.decode.batch_size;
  const double seconds = static_cast<double>(r.step_time_us) / 1e6;
  w.field("mode", r.mode)
      .field("step_time_us", r.step_time_us)
      .field("step_time_ms", static_cast<double>(r.step_time_us) / 1e3)
      .field("bound", r.bound);
  w.key("tokens")
      .begin_object()
      .field("prefill", prefill_tokens)
      .field("decode", decode_tokens)
      .field("total", prefill_tokens + decode_tokens)
      .end_object();
  w.field("tokens_per_s", static_cast<double>(prefill_tokens + decode_tokens) / seconds)
      .field("attn_config_model", r.attn_config_model)
      .field("attn_config_used", r.attn_config_used)
      .field("decode_mfu_tp_used", r.decode_mfu_tp_used)
      .field("overhead_us", r.overhead_us);
  write_breakdown(w, r);
  if (r.corrected.listed || r.corrected.any()) write_corrected(w, q, r, t);
  if (extra) extra(w);
  w.key("phases").begin_object();
  write_prefill(w, r.prefill, t, r.attn_config_used);
  write_decode(w, r.decode, t, r.attn_config_used, r.decode_mfu_tp_used);
  w.end_object();
  w.key("model").begin_object().field("name", q.model_name).field("source", q.model.source);
  write_model_shape(w, q.model);
  w.end_object();
  w.key("hardware").begin_object().field("gpu", q.hardware.gpu);
  write_hardware_constants(w, q.hardware);
  w.end_object();
  w.field("tp", q.tp);
  if (memory != nullptr) write_memory(w, *memory);
  w.key("warnings").begin_array();
  for (const Warning& warning : r.warnings)
    w.begin_object().field("code", warning.code).field("message", warning.message).end_object();
  w.end_array();
  w.end_object();
  if (all_finite != nullptr) *all_finite = !w.wrote_non_finite();
  return w.take();
}

void write_summary_fields(JsonWriter& w, const StepSummary& s) {
  w.field("step_time_us", s.step_time_us)
      .field("total_us", s.total_us)
      .field("bound", step_bound_name(s.bound))
      .field("prefill_s", s.prefill_s)
      .field("decode_s", s.decode_s)
      .field("overhead_us", s.overhead_us);
  w.key("warning_codes").begin_array();
  for (int c = 0; c < kNumWarningCodes; ++c)
    if (s.warnings.has(static_cast<WarningCode>(c))) w.value(warning_code_name(c));
  w.end_array();
}

std::string summary_to_json(const Request& q, const StepSummary& s) {
  JsonWriter w;
  w.begin_object();
  if (q.has_id) w.field("id", q.id);
  w.field("mode", q.mode).field("detail", "summary");
  write_summary_fields(w, s);
  w.end_object();
  return w.take();
}

std::string summary_columns_to_json(const SummaryColumns& c) {
  JsonWriter w;
  w.begin_object();
  const std::pair<const char*, const std::vector<double>*> numbers[] = {{"step_time_us", &c.step_time_us},
                                                                        {"total_us", &c.total_us},
                                                                        {"prefill_s", &c.prefill_s},
                                                                        {"decode_s", &c.decode_s},
                                                                        {"overhead_us", &c.overhead_us}};
  for (const auto& [name, column] : numbers) {
    w.key(name).begin_array();
    for (double v : *column) w.value(v);  // NaN (a failed point) is written as null
    w.end_array();
  }
  w.key("bound").begin_array();
  for (uint8_t b : c.bound) b == SummaryColumns::kFailedPoint ? w.null() : w.value(step_bound_name(StepBound(b)));
  w.end_array().key("warning_codes").begin_array();
  for (uint64_t bits : c.warnings) {
    w.begin_array();
    for (const std::string& code : WarningSet{bits}.names()) w.value(code);
    w.end_array();
  }
  w.end_array().key("errors").begin_array();
  for (size_t i = 0; i < c.errors.size(); ++i) {
    const Error& e = c.errors[i];
    w.begin_object()
        .field("index", static_cast<int64_t>(c.error_index[i]))
        .field("code", e.code)
        .field("path", e.path)
        .field("message", e.message)
        .end_object();
  }
  w.end_array().end_object();
  return w.take();
}

void write_error(JsonWriter& w, const Error& e) {
  w.key("error").begin_object().field("code", e.code).field("path", e.path).field("message", e.message).end_object();
}

std::string error_to_json(const Error& e, const std::string& id, bool has_id) {
  JsonWriter w;
  w.begin_object();
  if (has_id) w.field("id", id);
  write_error(w, e);
  w.end_object();
  return w.take();
}

}  // namespace stepcalc
