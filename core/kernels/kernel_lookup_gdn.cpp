// SPDX-License-Identifier: Apache-2.0
// Gated DeltaNet (linear attention) lookups: the conv1d and delta-rule kernels vLLM runs
// for a Qwen3-Next / Qwen3.5 linear-attention layer, decode by batch and prefill by batch
// and sequence (docs/KERNELS.md, "Lookup rules"); Kimi delta attention's fused decode and
// chunked prefill, keyed the same way, by the same rules.
#include <cmath>
#include <limits>

#include "kernels/kernel_db_impl.h"

namespace stepcalc {
namespace {

constexpr int kShapeLevel = 5;  // levels d_conv, head_k_dim, head_v_dim, k_heads, v_heads, d_model

bool is_conv(KernelTable t) { return t == KernelTable::kGdnConvDecode || t == KernelTable::kGdnConvPrefill; }
bool is_prefill(KernelTable t) {
  return t == KernelTable::kGdnConvPrefill || t == KernelTable::kGdnPrefill || t == KernelTable::kKdaPrefill;
}

/// What a kernel's time grows with, up to a constant: the conv's channels times its width,
/// or the delta rule's recurrent state (v_heads x head_k_dim x head_v_dim per sequence).
double gdn_work(KernelTable table, const double k[6]) {
  if (is_conv(table)) return (2 * k[3] * k[1] + k[4] * k[2]) * k[0];
  return k[4] * k[1] * k[2];
}

KernelTime gdn_in(const MeasuredTable* t, KernelTable table, double batch, double seq, const GdnShape& g) {
  if (t == nullptr || static_cast<int>(t->levels.size()) <= kShapeLevel + 1)
    return missing_time(table, KernelDtype::kBf16);
  if (!(batch > 0) || (is_prefill(table) && !(seq > 0)) || g.d_conv <= 0 || g.head_k_dim <= 0 || g.head_v_dim <= 0 ||
      g.k_heads <= 0 || g.v_heads <= 0)
    return KernelTime{};
  const double want[6] = {double(g.d_conv),  double(g.head_k_dim), double(g.head_v_dim),
                          double(g.k_heads), double(g.v_heads),    double(g.d_model > 0 ? g.d_model : 1)};
  // The measured geometry axis by axis: the value asked, else the nearest in ratio (d_model
  // last: it names the model measured, not a kernel input, and never makes a time approximated).
  double got[6];
  uint32_t node = 0;
  bool same = true;
  for (int d = 0; d <= kShapeLevel; ++d) {
    auto [lo, hi] = t->children(d - 1, node);
    double best = std::numeric_limits<double>::infinity();
    for (uint32_t i = lo; i < hi; ++i) {
      const double v = static_cast<double>(t->levels[d].value[i]), far = std::fabs(std::log(v / want[d]));
      if (far < best) best = far, node = i, got[d] = v;
    }
    if (d < kShapeLevel) same = same && best == 0;
  }
  // Beyond the largest batch the time grows in proportion (each sequence its own state);
  // beyond the longest sequence along the line through the last two (linear in tokens).
  Sample s = is_prefill(table) ? interpolate_grid(*t, node, batch, seq, BeyondRule::kProportional, BeyondRule::kLinear)
                               : interpolate_rows(*t, node, batch, BeyondRule::kProportional, t->envelope_us);
  if (!same) {
    s.us *= gdn_work(table, want) / gdn_work(table, got);
    s.worsen(LookupHow::kApproximated);
  }
  return kernel_time(s, table, KernelDtype::kBf16);
}

}  // namespace

KernelTime KernelDb::gdn(KernelTable table, double batch, double seq, const GdnShape& g) const {
  // Not memoised: a step asks a few of these, each a short descent and one interpolation.
  // The Kimi delta attention tables (kKdaDecode, kKdaPrefill) are keyed and read as the delta rule's
  // (the DSA tables between them have too few key levels: missing).
  if (table < KernelTable::kGdnConvDecode || table > KernelTable::kKdaPrefill)
    return missing_time(table, KernelDtype::kBf16);
  return gdn_in(impl_->table(table, KernelDtype::kBf16), table, batch, seq, g);
}

}  // namespace stepcalc
