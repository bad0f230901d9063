// SPDX-License-Identifier: Apache-2.0
#include "io/result_json.h"

#include "io/hardware_json.h"
#include "io/model_json.h"
#include "io/serve_result_json.h"
#include "json/json_writer.h"

namespace stepcalc {
namespace {

void write_error_fields(JsonWriter& w, const Error& e) {
  w.fields({{"code", e.code}, {"path", e.path}, {"message", e.message}});
}

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
    w.begin_object().fields({{"kind", gemm_kind_name(kind)},
                             {"m", g.m},
                             {"k", g.k},
                             {"n", g.n},
                             {"flops_per_layer", g.flops},
                             {"mfu", g.mfu},
                             {"compute_s_per_layer", g.compute_s},
                             {"weight_floor_s_per_layer", g.floor_s},
                             {"floor_won", g.floor_won},
                             {"time_s", g.time_s}});
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

void write_phase_common(JsonWriter& w, const PhaseResult& p) {
  w.fields({{"compute_s", p.compute_s},
            {"memory_s", p.memory_s},
            {"time_s", p.time_s()},
            {"bound_by", p.memory_bound() ? "memory" : "compute"},
            {"gemm_time_s", p.gemm_time_s},
            {"attn_core_time_s", p.attn_core_time_s},
            {"attn_core_flops", p.attn_core_flops}});
  if (p.comm_s > 0) w.field("comm_s", p.comm_s);
  const MemoryBytes& b = p.bytes;
  w.object("memory_bytes",
           {{"weights", b.weights}, {"kv_read", b.kv_read}, {"kv_write", b.kv_write}, {"activations", b.activations}});
}

/// The fields a prefill bucket has both in the breakdown and in the prefill phase.
void write_bucket_counts(JsonWriter& w, const PrefillBucket& b) {
  w.fields({{"bucket", b.bucket},
            {"num_requests", b.num_requests},
            {"total_new_tokens", b.total_new_tokens},
            {"attn_mfu", b.attn_mfu},
            {"attn_core_flops", b.attn_core_flops}});
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
    write_bucket_counts(w.begin_object(), b);
    w.field("attn_core_time_s", b.attn_core_time_s).field("gemm_time_s", b.gemms.total_s);
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

/// `reference_gemms`: the seven GEMM terms of the reference's pricing; false in the
/// measured mode, whose operators are in "measured" (the list is then empty).
void write_decode(JsonWriter& w, const DecodeResult& d, const MfuTables& t, const std::string& attn_key, int64_t tp,
                  bool reference_gemms) {
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
  if (reference_gemms)
    write_gemms(w, d.gemms, t);
  else
    w.key("gemms").begin_array().end_array();
  w.end_object();
}

/// The flat breakdown of the conformance files, field for field.
void write_breakdown(JsonWriter& w, const StepResult& r) {
  const PrefillResult& p = r.prefill;
  const DecodeResult& d = r.decode;
  w.key("breakdown")
      .begin_object()
      .fields({{"prefill_compute_s", p.compute_s},
               {"prefill_memory_s", p.memory_s},
               {"decode_compute_s", d.compute_s},
               {"decode_memory_s", d.memory_s},
               {"gemm_time_s", p.gemm_time_s + d.gemm_time_s},
               {"attn_core_time_s", p.attn_core_time_s + d.attn_core_time_s},
               {"overhead_us", r.overhead_us},
               {"decode_gemm_time_s", d.gemm_time_s},
               {"decode_attn_core_time_s", d.attn_core_time_s},
               {"decode_attn_core_flops", d.attn_core_flops},
               {"decode_attn_effective_mfu", d.attn_effective_mfu},
               {"prefill_gemm_time_s", p.gemm_time_s},
               {"prefill_attn_core_time_s", p.attn_core_time_s}});
  w.key("prefill_buckets").begin_array();
  for (const PrefillBucket& b : p.buckets) {
    write_bucket_counts(w.begin_object(), b);
    w.field("gemm_time_s", b.gemms.total_s).field("attn_core_time_s", b.attn_core_time_s).end_object();
  }
  w.end_array().fields({{"step_hardware_s", r.step_hardware_s},
                        {"total_us_before_rounding", r.total_us_before_rounding},
                        {"min_step_floor_applied", r.min_step_floor_applied}});
  w.end_object();
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
  w.fields({{"requests", static_cast<int64_t>(requests)},
            {"comm_s", r.prefill.comm_s + r.decode.comm_s},
            {"prefill_comm_s", r.prefill.comm_s},
            {"decode_comm_s", r.decode.comm_s}});
  w.key("fused");
  const FusedPass& f = r.fused;
  if (!f.present) {
    w.null();
  } else {
    w.begin_object().fields({{"tokens", f.tokens},
                             {"compute_s", f.compute_s},
                             {"memory_s", f.memory_s},
                             {"comm_s", f.comm_s},
                             {"time_s", f.time_s()},
                             {"gemm_time_s", f.gemm_time_s},
                             {"attn_core_time_s", f.attn_core_time_s}});
    write_gemms(w, f.gemms, t);
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
  w.fields({{"mode", mode_name(r.mode)},
            {"step_time_us", r.step_time_us},
            {"step_time_ms", static_cast<double>(r.step_time_us) / 1e3},
            {"bound", step_bound_name(r.bound)}});
  w.object("tokens",
           {{"prefill", prefill_tokens}, {"decode", decode_tokens}, {"total", prefill_tokens + decode_tokens}});
  w.fields({{"tokens_per_s", static_cast<double>(prefill_tokens + decode_tokens) / seconds},
            {"attn_config_model", r.attn_config_model},
            {"attn_config_used", r.attn_config_used},
            {"decode_mfu_tp_used", r.decode_mfu_tp_used},
            {"overhead_us", r.overhead_us}});
  write_breakdown(w, r);
  if (r.corrected.listed || r.corrected.any()) write_corrected(w, q, r, t);
  if (extra) extra(w);
  w.key("phases").begin_object();
  write_prefill(w, r.prefill, t, r.attn_config_used);
  write_decode(w, r.decode, t, r.attn_config_used, r.decode_mfu_tp_used, r.mode != Mode::kMeasured);
  w.end_object();
  w.key("model").begin_object().field("name", q.model_name).field("source", q.model.source);
  write_model_shape(w, q.model);
  w.end_object();
  w.key("hardware").begin_object().field("gpu", q.hardware.gpu);
  write_hardware_constants(w, q.hardware);
  w.end_object();
  w.field("tp", q.tp);
  if (memory != nullptr) write_memory(w, *memory);
  write_warnings(w, r.warnings);
  w.end_object();
  if (all_finite != nullptr) *all_finite = !w.wrote_non_finite();
  return w.take();
}

void write_summary_fields(JsonWriter& w, const StepSummary& s) {
  w.fields({{"step_time_us", s.step_time_us},
            {"total_us", s.total_us},
            {"bound", step_bound_name(s.bound)},
            {"prefill_s", s.prefill_s},
            {"decode_s", s.decode_s},
            {"overhead_us", s.overhead_us}});
  w.key("warning_codes").begin_array();
  for (int c = 0; c < kNumWarningCodes; ++c)
    if (s.warnings.has(static_cast<WarningCode>(c))) w.value(warning_code_name(c));
  w.end_array();
}

std::string summary_to_json(const Request& q, const StepSummary& s) {
  JsonWriter w;
  w.begin_object();
  if (q.has_id) w.field("id", q.id);
  w.field("mode", mode_name(q.mode)).field("detail", "summary");
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
    w.begin_object().field("index", static_cast<int64_t>(c.error_index[i]));
    write_error_fields(w, c.errors[i]);
    w.end_object();
  }
  w.end_array().end_object();
  return w.take();
}

void write_error(JsonWriter& w, const Error& e) {
  w.key("error").begin_object();
  write_error_fields(w, e);
  w.end_object();
}

void write_warnings(JsonWriter& w, const std::vector<Warning>& warnings) {
  w.key("warnings").begin_array();
  for (const Warning& x : warnings) w.object({{"code", x.code}, {"message", x.message}});
  w.end_array();
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
