// SPDX-License-Identifier: Apache-2.0
#include "estimators/reference/warnings.h"

#include <string>

#include "json/text_format.h"

namespace stepcalc {
namespace {

std::string num(double v) { return format_double(v); }

class Collector {
 public:
  /// Adds a warning unless the same one is there already (a step has a few dozen
  /// at most, so a linear look is cheaper in code and time than a set).
  void add(const std::string& code, const std::string& message) {
    for (const Warning& w : list_)
      if (w.code == code && w.message == message) return;
    list_.push_back(Warning{code, message});
  }
  std::vector<Warning> take() { return std::move(list_); }

 private:
  std::vector<Warning> list_;
};

void gemm_warnings(const GemmSet& set, const GemmTable& table, bool roofline, Collector* w) {
  for (int kind = 0; kind < kNumGemmKinds; ++kind) {
    const GemmTerm& g = set.terms[kind];
    const GemmLookup& l = g.lookup;
    const GemmPair& p = table.pairs[l.pair];
    if (l.pair_largest)
      w->add("gemm_shape_beyond_table",
             "GEMM " + std::string(gemm_kind_name(kind)) + " (k=" + num(g.k) + ", n=" + num(g.n) +
                 ") is larger than every measured shape; the largest, (" + num(p.k) + ", " + num(p.n) + "), was used.");
    else if (!l.pair_exact)
      w->add("gemm_shape_not_measured", "GEMM shape (k=" + num(g.k) + ", n=" + num(g.n) +
                                            ") is not measured; the nearest covering shape (" + num(p.k) + ", " +
                                            num(p.n) + ") was used.");
    if (l.provenance.clamped_low && roofline)
      w->add("gemm_m_below_table", "GEMMs with M=" + num(g.m) + " tokens are below the smallest measured M=" +
                                       num(p.m_axis.front()) + "; the measured M=" + num(p.m_axis.front()) +
                                       " kernel time is their floor (the weights are read anyway).");
    else if (l.provenance.clamped_low)
      w->add("gemm_m_below_table", "GEMMs with M=" + num(g.m) + " tokens are below the smallest measured M=" +
                                       num(p.m_axis.front()) + "; priced at M=" + num(p.m_axis.front()) + ".");
    if (l.provenance.clamped_high)
      w->add("gemm_m_above_table", "GEMMs with M=" + num(g.m) + " tokens are beyond the largest measured M=" +
                                       num(p.m_axis.back()) + "; its MFU was used.");
    if ((l.provenance.fallback || l.provenance.floor) && !roofline)
      w->add("gemm_mfu_fallback", "A GEMM MFU interpolated below 1e-4; the nearest non-zero measurement was used.");
  }
}

}  // namespace

std::vector<Warning> collect_warnings(const Request& r, const MfuTables& tables, const StepResult& out) {
  Collector w;
  const ModelShape& m = r.model;
  const CorrectedSettings& c = out.corrected;
  const bool roofline = c.has(kGemmRoofline), latency = c.has(kDecodeAttentionLatency);
  for (const Warning& note : m.notes) w.add(note.code, note.message);
  if (r.quantization != WeightFormat::kBf16 || r.kv_cache == KvCacheDtype::kFp8)
    w.add("quantization_not_priced",
          std::string(r.quantization != WeightFormat::kBf16
                          ? std::string("quantization ") + weight_format_name(r.quantization)
                          : std::string("kv_cache_dtype fp8")) +
              " changes only the memory and serving figures here: the reference modes price the step from "
              "bytes_per_param (" +
              num(m.bytes_per_param) + "); the measured mode prices the quantised kernels.");
  if (r.hardware.gpu != "H100")
    w.add("gpu_h100_tables", r.hardware.gpu + " is priced with the reference's H100 MFU tables and " + r.hardware.gpu +
                                 "'s datasheet constants (TFlopsPeak, BwPeakTBs): H100 efficiencies may not hold "
                                 "on it. The measured mode uses " +
                                 r.hardware.gpu + "'s own kernel tables.");
  if (out.attn_config_model != out.attn_config_used)
    w.add("attention_config_nearest", "No attention tables for config " + out.attn_config_model +
                                          " (heads-KV heads-head dim); the nearest measured config " +
                                          out.attn_config_used + " was used.");
  if (m.hidden_size % m.num_heads != 0)
    w.add("head_dim_not_integer", "hidden_size " + std::to_string(m.hidden_size) + " is not a multiple of " +
                                      std::to_string(m.num_heads) +
                                      " heads; GEMM shapes use the truncated head dim, memory the exact one.");
  // vLLM splits the attention heads evenly over the TP ranks, and the KV heads too
  // (or replicates each over TP / KV-heads ranks when TP is the larger); it refuses to
  // start otherwise. The reference still prices such a step (a public conformance case
  // does), so these are warnings that say so, not errors.
  const std::string tp = std::to_string(r.tp), heads = std::to_string(m.num_heads);
  const std::string kv_heads = std::to_string(m.num_kv_heads);
  if (r.tp > m.num_heads)
    w.add("tp_does_not_divide_heads", "TP " + tp + " is more than the " + heads +
                                          " attention heads: vLLM refuses to start with this. Priced anyway, with "
                                          "every time divided by TP.");
  else if (m.num_heads % r.tp != 0)
    w.add("tp_does_not_divide_heads", "TP " + tp + " does not divide the " + heads +
                                          " attention heads: vLLM refuses to start with this. Priced anyway, with "
                                          "every time divided by TP.");
  const bool kv_split = r.tp <= m.num_kv_heads ? m.num_kv_heads % r.tp == 0 : r.tp % m.num_kv_heads == 0;
  if (!kv_split)
    w.add("tp_does_not_divide_kv_heads",
          "TP " + tp + " and the " + kv_heads +
              " KV heads do not divide one another: vLLM refuses to start with this (it splits or replicates KV "
              "heads evenly over the GPUs). Priced anyway.");
  else if (r.tp > m.num_kv_heads)
    w.add("tp_above_kv_heads", "TP " + tp + " exceeds the " + kv_heads +
                                   " KV heads; real servers replicate KV heads, which the model ignores.");
  if (out.decode.present && out.decode_mfu_tp_used != r.tp)
    w.add("decode_tp_nearest", "No decode attention table for TP " + std::to_string(r.tp) + "; the TP " +
                                   std::to_string(out.decode_mfu_tp_used) + " table was used.");

  for (const PrefillBucket& b : out.prefill.buckets) {
    gemm_warnings(b.gemms, tables.gemm, roofline, &w);
    if (c.has(kPrefillAttentionLength)) continue;
    const Provenance& p = b.attn_lookup.provenance;
    if (p.clamped_low || p.clamped_high)
      w.add("prefill_bucket_clamped", "Prefill bucket " + std::to_string(b.bucket) +
                                          " lies outside the measured lengths; the attention MFU of the nearest "
                                          "end of the table was used.");
    if (p.fallback || p.floor)
      w.add("prefill_mfu_fallback", "The prefill attention MFU of bucket " + std::to_string(b.bucket) +
                                        " interpolated below 1e-4; the nearest non-zero row was used.");
  }
  for (const PrefillRequest& q : r.step.prefill) {
    if (q.new_tokens == 1 && !c.any())
      w.add("prefill_one_token",
            "A prefill of exactly one new token gets the decode memory discounts (reference quirk).");
    if (q.new_tokens == 0)
      w.add("prefill_zero_tokens", "A prefill request has no new tokens; it adds only memory traffic.");
  }
  if (!out.prefill.buckets.empty() && !c.has(kPrefillAttentionLength))
    w.add("prefill_bucketed",
          "Prefill attention MFU is read at the power-of-two bucket of prefix + new tokens "
          "(512..65536), not at the request's own length.");

  if (out.decode.present) {
    gemm_warnings(out.decode.gemms, tables.gemm, roofline, &w);
    int64_t clamped = 0, missing = 0, fallback = 0;
    for (const DecodeAttnGroup& g : out.decode.attn_groups) {
      const Provenance& p = g.lookup.provenance;
      if (p.clamped_low || p.clamped_high) clamped += g.count;
      if (p.missing_corner) missing += g.count;
      if (p.fallback || p.floor) fallback += g.count;
    }
    if (clamped > 0)
      w.add("decode_outside_table", std::to_string(clamped) +
                                        " decode request(s) fall outside the measured batch "
                                        "sizes or KV lengths; the table edge was used.");
    if (missing > 0 && !latency)
      w.add("decode_missing_corner", std::to_string(missing) +
                                         " decode lookup(s) touch an unmeasured table cell, "
                                         "read as MFU 0 (drags the MFU down).");
    if (fallback > 0 && !latency)
      w.add("decode_mfu_fallback", std::to_string(fallback) +
                                       " decode lookup(s) gave an MFU below 1e-4 (rounded "
                                       "zeros); the nearest non-zero measured cell was used.");
    const bool mixed_kv = out.decode.attn_groups.size() > 1;
    if (mixed_kv && !c.has(kDecodeHarmonicMean))
      w.add("decode_mfu_arithmetic_mean",
            "Decode attention uses the FLOP-weighted arithmetic mean of per-request "
            "MFUs; with mixed KV lengths this misprices attention time.");
  }
  if (out.prefill.present && out.decode.present && !c.has(kFusedMixedBatch))
    w.add("mixed_batch_overlap", "Prefill and decode are assumed to overlap fully: the step costs the slower phase.");
  if (r.tp > 1 && c.any() && !c.has(kTpAllreduce))
    w.add("no_communication_term", "Tensor-parallel all-reduces are not priced (switch tp_allreduce is off).");
  if (latency && out.decode.present && out.decode_mfu_tp_used != r.tp)
    w.add("decode_latency_tp_scaled", "Decode attention latency of the TP " + std::to_string(out.decode_mfu_tp_used) +
                                          " table is scaled by heads per GPU to TP " + std::to_string(r.tp) + ".");
  if (out.min_step_floor_applied) w.add("min_step_floor", "The step was shorter than 1 us; it is priced at 1 us.");
  return w.take();
}

}  // namespace stepcalc
