// SPDX-License-Identifier: Apache-2.0
// Gated DeltaNet (linear attention) lookups: the conv1d and delta-rule kernels vLLM runs
// for a Qwen3-Next / Qwen3.5 linear-attention layer, decode by batch and prefill by batch
// and sequence (docs/KERNELS.md, "Lookup rules").
#include <cmath>
#include <limits>

#include "kernels/kernel_db_impl.h"

namespace stepcalc {
namespace {

constexpr int kShapeLevel = 5;  // d_conv, head_k_dim, head_v_dim, k_heads, v_heads, d_model

bool is_conv(KernelTable t) { return t == KernelTable::kGdnConvDecode || t == KernelTable::kGdnConvPrefill; }
bool is_prefill(KernelTable t) { return t == KernelTable::kGdnConvPrefill || t == KernelTable::kGdnPrefill; }

/// What a kernel's time grows with, up to a constant: the conv's channels times its width,
/// or the delta rule's recurrent state (v_heads x head_k_dim x head_v_dim per sequence).
double gdn_work(KernelTable table, const double k[6]) {
  if (is_conv(table)) return (2 * k[3] * k[1] + k[4] * k[2]) * k[0];
  return k[4] * k[1] * k[2];
}

KernelTime gdn_in(const MeasuredTable* t, KernelTable table, double batch, double seq, const GdnShape& g) {
  if (t == nullptr) return missing_time(table, KernelDtype::kBf16);
  if (!(batch > 0) || (is_prefill(table) && !(seq > 0)) || g.d_conv <= 0 || g.head_k_dim <= 0 || g.head_v_dim <= 0 ||
      g.k_heads <= 0 || g.v_heads <= 0)
    return KernelTime{};
  if (static_cast<int>(t->levels.size()) <= kShapeLevel + 1) return missing_time(table, KernelDtype::kBf16);
  const double want[6] = {double(g.d_conv),  double(g.head_k_dim), double(g.head_v_dim),
                          double(g.k_heads), double(g.v_heads),    double(g.d_model > 0 ? g.d_model : 1)};
  // The nearest measured geometry (sum of |log ratio| over the kernel's own axes); among
  // equals, the nearest d_model (which names the model measured, not a kernel input).
  int64_t best = -1;
  double best_shape = std::numeric_limits<double>::infinity(), best_model = best_shape;
  double best_keys[6] = {};
  for (uint32_t i = 0; i < t->levels[kShapeLevel].value.size(); ++i) {
    double keys[6];
    uint32_t node = i;
    for (int d = kShapeLevel; d >= 0; --d) {
      keys[d] = static_cast<double>(t->levels[d].value[node]);
      node = t->levels[d].parent[node];
    }
    double shape = 0;
    for (int d = 0; d < 5; ++d) shape += std::fabs(std::log(keys[d] / want[d]));
    const double model = std::fabs(std::log(keys[5] / want[5]));
    if (shape < best_shape || (shape == best_shape && model < best_model)) {
      best_shape = shape;
      best_model = model;
      best = i;
      std::copy(keys, keys + 6, best_keys);
    }
  }
  if (best < 0) return missing_time(table, KernelDtype::kBf16);
  const uint32_t node = static_cast<uint32_t>(best);
  // Beyond the largest batch the time grows in proportion (each sequence its own state);
  // beyond the longest sequence along the line through the last two (linear in tokens).
  Sample s = is_prefill(table) ? interpolate_grid(*t, node, batch, seq, BeyondRule::kProportional, BeyondRule::kLinear)
                               : interpolate_rows(*t, node, batch, BeyondRule::kProportional, t->latency_us);
  if (best_shape > 0) {
    s.us *= gdn_work(table, want) / gdn_work(table, best_keys);
    s.worsen(LookupHow::kApproximated);
  }
  return kernel_time(s, table, KernelDtype::kBf16);
}

}  // namespace

KernelTime KernelDb::gdn(KernelTable table, double batch, double seq, const GdnShape& g) const {
  if (table != KernelTable::kGdnConvDecode && table != KernelTable::kGdnDecode &&
      table != KernelTable::kGdnConvPrefill && table != KernelTable::kGdnPrefill)
    return missing_time(table, KernelDtype::kBf16);
  const double d = 65536;  // two small integers in one number (exactly)
  const Impl::MemoKey key{-2000 - static_cast<int32_t>(table),
                          {batch, is_prefill(table) ? seq : 0, double(g.k_heads) * d + g.v_heads,
                           double(g.head_k_dim) * d + g.head_v_dim, double(g.d_conv) * d * d + g.d_model}};
  Impl::MemoEntry* slot = impl_->recall(key);
  if (Impl::holds(slot, key)) return slot->time;
  return Impl::keep(slot, key, gdn_in(impl_->table(table, KernelDtype::kBf16), table, batch, seq, g));
}

}  // namespace stepcalc
