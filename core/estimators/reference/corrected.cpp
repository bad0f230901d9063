// SPDX-License-Identifier: Apache-2.0
// The corrected mode's pieces (docs/CORRECTED-MODE.md). Every function here is
// allocation-free: it reads the immutable tables and returns a number.
#include "estimators/reference/corrected.h"

#include <algorithm>
#include <cmath>

#include "base/input_limits.h"
#include "json/text_format.h"
#include "kernels/reference/mfu_lookup.h"
#include "request/modes.h"

namespace stepcalc {
namespace {

constexpr double kActivationBytes = 2;  // activations are 16-bit even for FP8 weights

/// Latency of cell (ib, ik); an unmeasured cell scales the largest measured smaller
/// batch at the same KV by the batch ratio (per-sequence time is flat at large batch).
double cell_latency_us(const DecodeTable& t, size_t ib, size_t ik) {
  if (t.cell_row(ib, ik) >= 0) return t.latency_us[ib * t.kv_axis.size() + ik];
  for (size_t j = ib; j-- > 0;)
    if (t.cell_row(j, ik) >= 0) return t.latency_us[j * t.kv_axis.size() + ik] * t.bs_axis[ib] / t.bs_axis[j];
  return 0;
}

}  // namespace

/// Batch latency at measured KV index `ik`, interpolated (or scaled) in batch.
double decode_latency_at_kv(const DecodeTable& t, double batch, size_t ik) {
  const size_t last = t.bs_axis.size() - 1;
  if (batch >= t.bs_axis[last]) return cell_latency_us(t, last, ik) * batch / t.bs_axis[last];
  const Bracket b = bracket(t.bs_axis.data(), t.bs_axis.size(), batch);
  const double a = cell_latency_us(t, b.i0, ik);
  return b.degenerate() ? a : lerp(a, cell_latency_us(t, b.i1, ik), b.t);
}

namespace {

/// Prefill efficiency (fraction of `peak_flops`) measured at sequence length row i.
double prefill_efficiency(const PrefillTable& t, size_t i, double peak_flops) {
  const double s = t.seq_axis[i];
  const double flops = 2 * static_cast<double>(t.heads) * s * s * static_cast<double>(t.head_dim);  // causal
  return t.latency_us[i] > 0 ? flops / (t.latency_us[i] * 1e-6) / peak_flops : 0;
}

}  // namespace

CorrectedSettings switches_for_mode(Mode mode) {
  CorrectedSettings sw;
  if (mode == Mode::kCorrected) {
    sw.on.fill(true);
    sw.listed = true;
  }
  return sw;
}

CorrectedSettings switches_for_request(const Request& r) {
  CorrectedSettings sw = switches_for_mode(r.mode);
  const CorrectedOverrides& o = r.corrected;
  if (!o.present) return sw;
  sw.listed = true;
  for (int s = 0; s < kNumCorrectedSwitches; ++s)
    if (o.switch_state[s] >= 0) sw.on[s] = o.switch_state[s] == 1;
  for (int p = 0; p < kNumCorrectedParams; ++p)
    if (o.param_set[p]) sw.param[p] = o.param[p];  // range-checked by the request reader
  return sw;
}

std::vector<std::string> mode_names() {
  std::vector<std::string> names;
  for (const ModeInfo& m : kModes) names.push_back(m.name);
  return names;
}

double overhead_us(const CorrectedSettings& sw, const Request& r) {
  if (sw.has(kCpuOverhead)) {
    const double requests = static_cast<double>(r.step.prefill.size() + r.step.decode.size());
    return sw.get(kCpuStepUs) + sw.get(kCpuPerRequestUs) * requests;
  }
  return r.hardware.per_layer_overhead_us * static_cast<double>(r.model.num_layers) / static_cast<double>(r.tp);
}

double decode_batch_latency_us(const DecodeTable& t, double batch, double kv) {
  if (t.bs_axis.empty() || t.kv_axis.empty()) return 0;
  const size_t last = t.kv_axis.size() - 1;
  if (kv >= t.kv_axis[last]) return decode_latency_at_kv(t, batch, last) * kv / t.kv_axis[last];
  const Bracket b = bracket(t.kv_axis.data(), t.kv_axis.size(), kv);
  const double a = decode_latency_at_kv(t, batch, b.i0);
  return b.degenerate() ? a : lerp(a, decode_latency_at_kv(t, batch, b.i1), b.t);
}

DecodeLatencyShare decode_latency_share(const Request& r, const DecodeTable& t, const PrefillTable& config,
                                        double batch) {
  const double model_width =
      static_cast<double>(r.model.num_heads) * static_cast<double>(r.model.hidden_size / r.model.num_heads);
  const double table_width = static_cast<double>(config.heads) * static_cast<double>(config.head_dim);
  DecodeLatencyShare share;
  if (table_width > 0 && batch > 0)
    share.factor =
        1e-6 / batch * static_cast<double>(r.model.num_layers) * model_width / table_width * static_cast<double>(t.tp);
  return share;
}

double prefill_chunk_attn_s(const Request& r, const PrefillTable& t, double progress, double new_tokens,
                            double layers) {
  const double heads = static_cast<double>(r.model.num_heads);
  const double head_dim = static_cast<double>(r.model.hidden_size / r.model.num_heads);
  const double flops = 2 * heads * new_tokens * (2 * progress + new_tokens) * head_dim * layers;
  if (!(flops > 0) || t.seq_axis.empty()) return 0;
  const double peak = 1e12;  // any reference peak: it cancels between efficiency and time
  const Bracket b = bracket(t.seq_axis.data(), t.seq_axis.size(), progress + new_tokens);
  const double e0 = prefill_efficiency(t, b.i0, peak);
  const double efficiency = b.degenerate() ? e0 : lerp(e0, prefill_efficiency(t, b.i1, peak), b.t);
  return efficiency > 0 ? flops / (peak * efficiency) : 0;
}

double gemm_roofline_s(const CorrectedSettings& sw, const GemmTable& table, double peak_flops_bf16, double peak_bw,
                       double bpp, GemmTerm* g) {
  const GemmPair& p = table.pairs[g->lookup.pair];
  g->compute_s = g->floor_s = g->kernel_floor_s = 0;
  if (!(g->m > 0) || p.m_axis.empty()) return 0;  // no tokens: no GEMM is launched
  // Best measured tensor-core efficiency of this (K, N), relative to the table's peak:
  // the largest 2 m k n / latency over the pair's rows, divided once (dividing by a
  // positive number keeps the order, so this equals the largest of the quotients).
  const double table_peak = sw.get(kGemmTablePeakTflops) * 1e12;
  const double best = std::max(0.0, p.best_flops / table_peak);
  const double dtype_peak = peak_flops_bf16 * 2 / bpp;  // tensor-core peak halves per extra byte of operand
  g->compute_s = best > 0 ? g->flops / (dtype_peak * best) : 0;
  g->floor_s = peak_bw > 0 ? g->k * g->n * bpp / peak_bw : 0;
  // Measured kernel time at this M (clamped below: M < 8 costs the M = 8 kernel),
  // linear in M beyond the table, scaled from the pair's shape to (k, n).
  const size_t last = p.m_axis.size() - 1;
  double latency_us = 0;
  if (g->m >= p.m_axis[last]) {
    latency_us = p.latency_us[last] * g->m / p.m_axis[last];
  } else {
    const Bracket b = bracket(p.m_axis.data(), p.m_axis.size(), g->m);
    latency_us = b.degenerate() ? p.latency_us[b.i0] : lerp(p.latency_us[b.i0], p.latency_us[b.i1], b.t);
  }
  g->kernel_floor_s = latency_us * 1e-6 * (g->k * g->n) / (p.k * p.n);
  g->floor_won = std::max(g->floor_s, g->kernel_floor_s) > g->compute_s;
  return std::max(g->compute_s, std::max(g->floor_s, g->kernel_floor_s));
}

double allreduce_s(const CorrectedSettings& sw, const Request& r, double tokens) {
  if (r.tp <= 1 || !(tokens > 0)) return 0;
  const double tp = static_cast<double>(r.tp);
  const double bytes = tokens * static_cast<double>(r.model.hidden_size) * kActivationBytes;
  const double one = sw.get(kAllreduceLatencyUs) * 1e-6 + 2 * (tp - 1) / tp * bytes / (sw.get(kNvlinkBwGBs) * 1e9);
  return 2 * static_cast<double>(r.model.num_layers) * one;
}

}  // namespace stepcalc
