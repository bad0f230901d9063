// SPDX-License-Identifier: Apache-2.0
#include "estimators/reference/pricing_setup.h"

#include <atomic>
#include <cmath>
#include <cstring>

#include "estimators/reference/corrected.h"

namespace stepcalc {
namespace {

ModelConstants derive(const Request& r, const GemmTable& gemm) {
  const ModelShape& m = r.model;
  ModelConstants d;
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
  d.gemm_k = {d.hidden, d.hidden, d.hidden, d.hidden, d.hidden, d.hidden, d.ffn};
  d.gemm_n = {d.hidden, d.kv_dim, d.kv_dim, d.hidden, d.ffn, d.ffn, d.hidden};
  for (int kind = 0; kind < kNumGemmKinds; ++kind) {  // 4 distinct shapes of 7: each scanned once
    int same = 0;
    while (same < kind && (d.gemm_k[same] != d.gemm_k[kind] || d.gemm_n[same] != d.gemm_n[kind])) ++same;
    d.same_shape_as[kind] = same;
    d.gemm_pairs[kind] = same < kind ? d.gemm_pairs[same] : gemm_pair(gemm, d.gemm_k[kind], d.gemm_n[kind]);
  }
  return d;
}

std::string config_key(int64_t h, int64_t hkv, int64_t dim) {
  return std::to_string(h) + "-" + std::to_string(hkv) + "-" + std::to_string(dim);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

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

Expected<PricingSetup> prepare_pricing(const Request& r, const MfuTables& tables) {
  const Expected<bool> valid = validate_for_pricing(r);
  if (!valid) return valid.error();
  if (tables.prefill.empty() || tables.gemm.pairs.empty())
    return make_error("no_tables", "gpu", "No MFU tables are available for " + r.hardware.gpu + ".");
  PricingSetup s;
  static std::atomic<uint64_t> next_id{0};
  s.id = ++next_id;
  s.tables = &tables;
  s.corrected = switches_for_request(r);
  s.constants = derive(r, tables.gemm);
  const ModelShape& m = r.model;
  const int64_t head_dim = m.hidden_size / m.num_heads;
  s.attn_config_model = config_key(m.num_heads, m.num_kv_heads, head_dim);
  s.attn = nearest_attention_config(tables, m.num_heads, m.num_kv_heads, head_dim);
  s.decode_table = decode_table_for(tables, s.attn->key, r.tp);
  if (s.decode_table != nullptr) s.decode_mfu_tp_used = s.decode_table->tp;

  // The warnings that do not depend on the step, as collect_warnings words them.
  const CorrectedSettings& c = s.corrected;
  for (const Warning& note : m.notes) {
    const int code = warning_code_index(note.code);
    if (code >= 0) s.warnings.add(static_cast<WarningCode>(code));
  }
  if (r.quantization != WeightFormat::kBf16 || r.kv_cache == KvCacheDtype::kFp8)
    s.warnings.add(kWarnQuantizationNotPriced);
  if (r.hardware.gpu != "H100") s.warnings.add(kWarnGpuH100Tables);
  if (s.attn_config_model != s.attn->key) s.warnings.add(kWarnAttentionConfigNearest);
  if (m.hidden_size % m.num_heads != 0) s.warnings.add(kWarnHeadDimNotInteger);
  if (m.num_heads % r.tp != 0) s.warnings.add(kWarnTpDoesNotDivideHeads);
  const bool kv_split = r.tp <= m.num_kv_heads ? m.num_kv_heads % r.tp == 0 : r.tp % m.num_kv_heads == 0;
  if (!kv_split)
    s.warnings.add(kWarnTpDoesNotDivideKvHeads);
  else if (r.tp > m.num_kv_heads)
    s.warnings.add(kWarnTpAboveKvHeads);
  if (r.tp > 1 && c.any() && !c.has(kTpAllreduce)) s.warnings.add(kWarnNoCommunicationTerm);
  if (s.decode_mfu_tp_used != r.tp) {
    s.decode_warnings.add(kWarnDecodeTpNearest);
    if (c.has(kDecodeAttentionLatency)) s.decode_warnings.add(kWarnDecodeLatencyTpScaled);
  }
  return s;
}

bool same_pricing_inputs(const Request& a, const Request& b) {
  const ModelShape &x = a.model, &y = b.model;
  if (x.num_layers != y.num_layers || x.hidden_size != y.hidden_size || x.num_heads != y.num_heads ||
      x.num_kv_heads != y.num_kv_heads || x.intermediate_size != y.intermediate_size ||
      !same_bits(x.bytes_per_param, y.bytes_per_param) || x.notes.size() != y.notes.size())
    return false;
  for (size_t i = 0; i < x.notes.size(); ++i)
    if (x.notes[i].code != y.notes[i].code || x.notes[i].message != y.notes[i].message) return false;
  const Hardware &g = a.hardware, &h = b.hardware;
  if (g.gpu != h.gpu || !same_bits(g.tflops_peak, h.tflops_peak) || !same_bits(g.bw_peak_tbs, h.bw_peak_tbs) ||
      !same_bits(g.bw_efficiency, h.bw_efficiency) || !same_bits(g.per_layer_overhead_us, h.per_layer_overhead_us))
    return false;
  if (a.tp != b.tp || a.mode != b.mode || a.quantization != b.quantization || a.kv_cache != b.kv_cache) return false;
  const CorrectedOverrides &o = a.corrected, &p = b.corrected;
  if (o.present != p.present || o.switch_state != p.switch_state || o.param_set != p.param_set) return false;
  for (int i = 0; i < kNumCorrectedParams; ++i)
    if (!same_bits(o.param[i], p.param[i])) return false;
  return true;
}

}  // namespace stepcalc
