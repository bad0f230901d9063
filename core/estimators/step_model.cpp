// The reference step model "blis-v2" (spec: docs/REFERENCE-MODEL.md). Every
// expression keeps the reference's order of IEEE double operations, because the
// integer step time must match it exactly; the build uses -ffp-contract=off.
#include "estimators/step_model.h"

#include <algorithm>
#include <cmath>

#include "estimators/corrected.h"
#include "estimators/warnings.h"

namespace stepcalc {

const char* gemm_kind_name(int kind) {
  static const char* const kNames[kNumGemmKinds] = {"q", "k", "v", "o", "gate", "up", "down"};
  return kind >= 0 && kind < kNumGemmKinds ? kNames[kind] : "?";
}

int64_t round_half_away(double us) { return static_cast<int64_t>(std::round(us)); }

namespace {

/// The constants every phase uses, derived once per pricing.
struct Derived {
  double peak_flops = 0;
  double peak_bw = 0;
  double tp_scaling = 0;
  double layers = 0, hidden = 0, heads = 0, kv_heads = 0, ffn = 0, bpp = 0;
  double head_dim = 0;        ///< d / H, integer division (GEMM shapes, attention FLOPs)
  double head_dim_float = 0;  ///< d / H, floating (memory bytes)
  double kv_dim = 0;          ///< Hkv * head_dim (integer)
  double weights_bytes = 0;   ///< all layers, unsharded
  double kv_bytes_per_token = 0;
  std::array<GemmPairChoice, kNumGemmKinds> gemm_pairs;  ///< table pair per GEMM (model-only)
};

Derived derive(const Request& r, const GemmTable& gemm) {
  const ModelShape& m = r.model;
  Derived d;
  d.peak_flops = r.hardware.tflops_peak * 1e12;
  d.peak_bw = r.hardware.bw_peak_tbs * 1e12;
  if (r.hardware.bw_efficiency != 0) d.peak_bw = d.peak_bw * r.hardware.bw_efficiency;
  d.tp_scaling = 1.0 / static_cast<double>(r.tp);
  d.layers = static_cast<double>(m.num_layers);
  d.hidden = static_cast<double>(m.hidden_size);
  d.heads = static_cast<double>(m.num_heads);
  d.kv_heads = static_cast<double>(m.num_kv_heads);
  d.ffn = static_cast<double>(m.intermediate_size);
  d.bpp = m.bytes_per_param;
  d.head_dim = static_cast<double>(m.hidden_size / m.num_heads);
  d.head_dim_float = d.hidden / d.heads;
  d.kv_dim = static_cast<double>(m.num_kv_heads * (m.hidden_size / m.num_heads));
  d.weights_bytes =
      (d.hidden * (d.hidden + 2 * d.kv_heads * d.head_dim_float) + d.hidden * d.hidden + 3 * d.hidden * d.ffn) *
      d.layers * d.bpp;
  d.kv_bytes_per_token = 2 * d.layers * d.kv_heads * d.head_dim_float * d.bpp;
  const double shapes[kNumGemmKinds][2] = {{d.hidden, d.hidden}, {d.hidden, d.kv_dim}, {d.hidden, d.kv_dim},
                                           {d.hidden, d.hidden}, {d.hidden, d.ffn},    {d.hidden, d.ffn},
                                           {d.ffn, d.hidden}};
  for (int kind = 0; kind < kNumGemmKinds; ++kind) {  // 4 distinct shapes of 7: each scanned once
    int same = 0;
    while (same < kind && (shapes[same][0] != shapes[kind][0] || shapes[same][1] != shapes[kind][1])) ++same;
    d.gemm_pairs[kind] = same < kind ? d.gemm_pairs[same] : gemm_pair(gemm, shapes[kind][0], shapes[kind][1]);
  }
  return d;
}

GemmSet gemm_times(const Derived& d, const MfuTables& t, double m, const CorrectedSettings& sw) {
  const double shapes[kNumGemmKinds][2] = {{d.hidden, d.hidden}, {d.hidden, d.kv_dim}, {d.hidden, d.kv_dim},
                                           {d.hidden, d.hidden}, {d.hidden, d.ffn},    {d.hidden, d.ffn},
                                           {d.ffn, d.hidden}};
  GemmSet set;
  set.m = m;
  double sum = 0;
  for (int kind = 0; kind < kNumGemmKinds; ++kind) {
    GemmTerm& g = set.terms[kind];
    g.m = m, g.k = shapes[kind][0], g.n = shapes[kind][1];
    g.lookup = gemm_mfu(t.gemm, d.gemm_pairs[kind], g.m, g.k, g.n);
    g.mfu = g.lookup.mfu;
    g.flops = 2 * g.m * g.k * g.n;
    double efficiency = d.peak_flops * g.mfu;
    if (efficiency <= 0) efficiency = 1;
    g.compute_s = g.flops / efficiency;
    g.floor_s = d.peak_bw > 0 ? g.k * g.n * d.bpp / d.peak_bw : 0;
    g.floor_won = g.floor_s > g.compute_s;
    double per_layer = std::max(g.compute_s, g.floor_s);
    if (sw.has(kGemmRoofline)) per_layer = gemm_roofline_s(sw, t.gemm, d.peak_flops, d.peak_bw, d.bpp, &g);
    g.time_s = per_layer * d.tp_scaling * d.layers;
    sum += per_layer;
  }
  set.total_s = sum * d.tp_scaling * d.layers;
  return set;
}

double attn_flops(const Derived& d, double batch, double seq) {
  return 2 * d.heads * batch * seq * d.head_dim + 2 * d.heads * batch * seq * d.head_dim;
}

/// mem(seq, newT) of the reference, split by kind; `dynamic` is total - weights.
struct RequestBytes {
  double growth, access, activations, dynamic;
};

RequestBytes request_bytes(const Derived& d, double seq, double new_tokens) {
  const bool one = new_tokens == 1;  // QUIRK: also a 1-token prefill
  RequestBytes b;
  b.growth = d.kv_bytes_per_token * new_tokens;
  b.access = d.kv_bytes_per_token * seq * (one ? 0.80 : 0.92);
  b.activations = d.layers * d.hidden * d.bpp * new_tokens * (one ? 0.75 : 0.85);
  const double total = b.activations + b.access + b.growth + d.weights_bytes;
  b.dynamic = total - d.weights_bytes;
  return b;
}

void add_bytes(const Derived& d, const RequestBytes& b, MemoryBytes* bytes) {
  bytes->kv_write += b.growth * d.tp_scaling;
  bytes->kv_read += b.access * d.tp_scaling;
  bytes->activations += b.activations * d.tp_scaling;
}

int64_t prefill_bucket(int64_t tokens) {
  int64_t bucket = 512;
  while (bucket < tokens && bucket < 65536) bucket *= 2;
  return bucket;
}

void price_decode(const Request& r, const Derived& d, const MfuTables& t, const DecodeTable* table,
                  const PrefillTable& config, const CorrectedSettings& sw, bool detail, DecodeResult* out) {
  const std::vector<DecodeRequest>& reqs = r.step.decode;
  out->present = true;
  out->batch_size = static_cast<int64_t>(reqs.size());
  const double batch = static_cast<double>(reqs.size());
  out->gemms = gemm_times(d, t, batch, sw);
  const Bracket bs_bracket = bracket(table->bs_axis.data(), table->bs_axis.size(), batch);  // same for all
  double flops = 0, weighted = 0, dynamic = 0, per_request_s = 0;
  for (const DecodeRequest& q : reqs) {
    const double kv = static_cast<double>(q.progress_index);
    const double f = attn_flops(d, 1, kv) * d.layers;
    const DecodeLookup lookup = decode_mfu(*table, bs_bracket, batch, kv);
    double mfu = lookup.mfu;
    if (sw.has(kDecodeAttentionLatency)) mfu = decode_latency_mfu(r, *table, config, batch, kv, f, d.peak_flops);
    flops += f;
    weighted += f * mfu;
    if (mfu > 0) per_request_s += f / (d.peak_flops * mfu);  // harmonic: the sum of the requests' times
    const RequestBytes b = request_bytes(d, kv, 1);
    dynamic += b.dynamic * d.tp_scaling;
    add_bytes(d, b, &out->bytes);
  }
  out->attn_core_flops = flops;
  double attn_s = 0;
  if (flops > 0 && weighted / flops > 0) {
    out->attn_effective_mfu = weighted / flops;
    attn_s = flops / (d.peak_flops * (weighted / flops)) * d.tp_scaling;
  }
  if (sw.has(kDecodeHarmonicMean)) {
    attn_s = per_request_s * d.tp_scaling;
    out->attn_effective_mfu = attn_s > 0 ? flops * d.tp_scaling / (d.peak_flops * attn_s) : 0;
  }
  out->attn_core_time_s = attn_s;
  out->gemm_time_s = out->gemms.total_s;
  out->compute_s = out->gemms.total_s + attn_s;
  out->bytes.weights = d.weights_bytes * d.tp_scaling;
  out->memory_s = (d.weights_bytes * d.tp_scaling + dynamic) / d.peak_bw;
  if (detail) {
    // Groups by KV length, ascending: one sort of the lengths, no allocation per group.
    std::vector<int64_t> kvs(reqs.size());
    for (size_t i = 0; i < reqs.size(); ++i) kvs[i] = reqs[i].progress_index;
    std::sort(kvs.begin(), kvs.end());
    for (size_t i = 0, j = 0; i < kvs.size(); i = j) {
      while (j < kvs.size() && kvs[j] == kvs[i]) ++j;
      out->attn_groups.push_back(DecodeAttnGroup{kvs[i], static_cast<int64_t>(j - i),
                                                 decode_mfu(*table, bs_bracket, batch, static_cast<double>(kvs[i]))});
    }
  }
}

void price_prefill(const Request& r, const Derived& d, const MfuTables& t, const PrefillTable& table,
                   const CorrectedSettings& sw, PrefillResult* out) {
  const bool at_length = sw.has(kPrefillAttentionLength);
  const std::vector<PrefillRequest>& reqs = r.step.prefill;
  out->present = true;
  out->num_requests = static_cast<int64_t>(reqs.size());
  std::vector<int64_t> bucket_of(reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    bucket_of[i] = prefill_bucket(reqs[i].progress_index + reqs[i].new_tokens);
    out->new_tokens += reqs[i].new_tokens;
  }
  std::vector<int64_t> buckets = bucket_of;
  std::sort(buckets.begin(), buckets.end());
  buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
  for (int64_t bucket : buckets) {
    PrefillBucket b;
    b.bucket = bucket;
    double tokens = 0, flops = 0, corrected_attn_s = 0;
    for (size_t i = 0; i < reqs.size(); ++i) {
      if (bucket_of[i] != bucket) continue;
      const double n = static_cast<double>(reqs[i].new_tokens);
      const double p = static_cast<double>(reqs[i].progress_index);
      ++b.num_requests;
      b.total_new_tokens += reqs[i].new_tokens;
      tokens += n;
      const double f = attn_flops(d, n, p + n) * d.layers;
      flops += f;
      if (at_length) corrected_attn_s += prefill_chunk_attn_s(r, table, p, n, d.layers);
    }
    b.gemms = gemm_times(d, t, tokens, sw);
    b.attn_lookup = prefill_mfu(table, static_cast<double>(bucket));
    b.attn_mfu = b.attn_lookup.mfu;
    b.attn_core_flops = flops;
    b.attn_core_time_s = flops / 1.8 / (d.peak_flops * b.attn_mfu) * d.tp_scaling;
    if (at_length) {
      b.attn_core_time_s = corrected_attn_s * d.tp_scaling;
      b.attn_mfu = b.attn_core_time_s > 0 ? flops / 1.8 * d.tp_scaling / (d.peak_flops * b.attn_core_time_s) : 0;
    }
    out->compute_s += b.gemms.total_s + b.attn_core_time_s;
    out->gemm_time_s += b.gemms.total_s;
    out->attn_core_time_s += b.attn_core_time_s;
    out->attn_core_flops += flops;
    out->buckets.push_back(std::move(b));
  }
  double dynamic = 0;
  for (const PrefillRequest& q : reqs) {
    const RequestBytes b = request_bytes(d, static_cast<double>(q.progress_index), static_cast<double>(q.new_tokens));
    dynamic += b.dynamic * d.tp_scaling;
    add_bytes(d, b, &out->bytes);
  }
  out->bytes.weights = d.weights_bytes * d.tp_scaling;
  out->memory_s = (d.weights_bytes * d.tp_scaling + dynamic) / d.peak_bw;
}

/// `fused_mixed_batch`: both phases as one forward pass over all their tokens.
void price_fused(const Request& r, const Derived& d, const MfuTables& t, const CorrectedSettings& sw, StepResult* out) {
  FusedPass& f = out->fused;
  f.present = true;
  f.tokens = static_cast<double>(out->prefill.new_tokens + out->decode.batch_size);
  f.gemms = gemm_times(d, t, f.tokens, sw);
  f.gemm_time_s = f.gemms.total_s;
  f.attn_core_time_s = out->prefill.attn_core_time_s + out->decode.attn_core_time_s;
  f.compute_s = f.gemm_time_s + f.attn_core_time_s;
  const MemoryBytes& p = out->prefill.bytes;
  const MemoryBytes& q = out->decode.bytes;
  const double dynamic = p.kv_read + p.kv_write + p.activations + q.kv_read + q.kv_write + q.activations;
  f.memory_s = (d.weights_bytes * d.tp_scaling + dynamic) / d.peak_bw;
  if (sw.has(kTpAllreduce)) f.comm_s = allreduce_s(sw, r, f.tokens);
}

std::string config_key(int64_t h, int64_t hkv, int64_t dim) {
  return std::to_string(h) + "-" + std::to_string(hkv) + "-" + std::to_string(dim);
}

}  // namespace

Expected<bool> validate_for_pricing(const Request& r) {
  const ModelShape& m = r.model;
  if (m.num_heads <= 0)
    return make_error("invalid_value", "model.num_attention_heads", "The model needs at least one attention head.");
  if (m.num_layers <= 0)
    return make_error("invalid_value", "model.num_hidden_layers", "The model needs at least one layer.");
  if (m.hidden_size <= 0) return make_error("invalid_value", "model.hidden_size", "The hidden size must be positive.");
  if (!(m.bytes_per_param > 0) || !std::isfinite(m.bytes_per_param))
    return make_error("invalid_value", "model.bytes_per_param",
                      "Bytes per parameter must be positive: give a known torch_dtype or model.bytes_per_param.");
  const Hardware& h = r.hardware;
  if (!(h.tflops_peak > 0) || !std::isfinite(h.tflops_peak))
    return make_error("invalid_value", "hardware.TFlopsPeak", "TFlopsPeak must be a positive finite number.");
  if (!(h.bw_peak_tbs > 0) || !std::isfinite(h.bw_peak_tbs))
    return make_error("invalid_value", "hardware.BwPeakTBs", "BwPeakTBs must be a positive finite number.");
  if (!(h.bw_efficiency == 0 || (h.bw_efficiency > 0 && h.bw_efficiency <= 1)))
    return make_error("invalid_value", "hardware.bwEfficiencyFactor",
                      "bwEfficiencyFactor must be 0 (none) or in (0, 1].");
  if (!(h.per_layer_overhead_us >= 0) || !std::isfinite(h.per_layer_overhead_us))
    return make_error("invalid_value", "hardware.perLayerOverhead",
                      "perLayerOverhead must be a finite number >= 0 (microseconds per layer).");
  if (r.tp < 1) return make_error("invalid_value", "tp", "tp must be at least 1.");
  return true;
}

Expected<StepResult> price_step(const Request& r, const MfuTables& tables, bool detail) {
  const Expected<bool> valid = validate_for_pricing(r);
  if (!valid) return valid.error();
  const Expected<CorrectedSettings> switches = switches_for_request(r);
  if (!switches) return switches.error();
  if (tables.prefill.empty() || tables.gemm.pairs.empty())
    return make_error("no_tables", "gpu", "No MFU tables are available for " + r.hardware.gpu + ".");
  const CorrectedSettings& sw = switches.value();
  const Derived d = derive(r, tables.gemm);

  StepResult out;
  out.mode = r.mode;
  out.corrected = sw;
  const ModelShape& m = r.model;
  const int64_t head_dim = m.hidden_size / m.num_heads;
  out.attn_config_model = config_key(m.num_heads, m.num_kv_heads, head_dim);
  const PrefillTable* attn = nearest_attention_config(tables, m.num_heads, m.num_kv_heads, head_dim);
  out.attn_config_used = attn->key;

  const DecodeTable* decode_table = decode_table_for(tables, attn->key, r.tp);
  if (decode_table != nullptr) out.decode_mfu_tp_used = decode_table->tp;  // reported even without decodes

  if (!r.step.prefill.empty()) price_prefill(r, d, tables, *attn, sw, &out.prefill);
  if (!r.step.decode.empty()) {
    if (decode_table == nullptr)
      return make_error("no_tables", "gpu", "No decode attention table for config " + attn->key + ".");
    price_decode(r, d, tables, decode_table, *attn, sw, detail, &out.decode);
  }
  if (sw.has(kTpAllreduce)) {
    if (out.prefill.present) out.prefill.comm_s = allreduce_s(sw, r, static_cast<double>(out.prefill.new_tokens));
    if (out.decode.present) out.decode.comm_s = allreduce_s(sw, r, static_cast<double>(out.decode.batch_size));
  }
  if (sw.has(kFusedMixedBatch) && out.prefill.present && out.decode.present) price_fused(r, d, tables, sw, &out);

  const double prefill_s = out.prefill.time_s(), decode_s = out.decode.time_s();
  double hw = 0;
  if (out.fused.present)
    hw = out.fused.time_s();
  else if (out.prefill.present && out.decode.present)
    hw = std::max(prefill_s, decode_s);
  else if (out.prefill.present)
    hw = prefill_s;
  else if (out.decode.present)
    hw = decode_s;
  out.bound = !out.prefill.present && !out.decode.present                               ? "overhead"
              : (out.prefill.present && (!out.decode.present || prefill_s >= decode_s)) ? "prefill"
                                                                                        : "decode";
  out.step_hardware_s = hw;
  out.overhead_us = overhead_us(sw, r);
  double us = (hw + out.overhead_us / 1e6) * 1e6;
  out.total_us_before_rounding = us;
  if (us < 1) {
    us = 1;
    out.min_step_floor_applied = true;
  }
  if (!std::isfinite(us) || us > 9e15)
    return make_error("out_of_range", "step", "The step time overflows: check the hardware constants and lengths.");
  out.step_time_us = round_half_away(us);
  if (detail) out.warnings = collect_warnings(r, tables, out);
  return out;
}

}  // namespace stepcalc
