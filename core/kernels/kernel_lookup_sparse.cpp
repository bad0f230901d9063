// SPDX-License-Identifier: Apache-2.0
// Lookups for what only some models need: fused MoE (by tokens, for the measured
// shape or the nearest one scaled), MLA and DeepSeek sparse attention modules (bilinear in
// batch and tokens).
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/kernel_db_impl.h"

namespace stepcalc {

namespace {

// Expert weights a GPU touches for `tokens` tokens, up to a constant: the work and the
// bytes of a fused-MoE layer both scale with it (memory-bound while few experts are hit).
double moe_work(double tokens, double hidden, double inter, double experts, double topk, double tp, double ep) {
  return hidden * inter * std::min(experts, std::max(1.0, tokens * topk)) / (tp * ep);
}

}  // namespace

namespace {

/// The measured shape of `t` nearest `want` (hidden, intermediate, experts, top-k, moe_tp, moe_ep):
/// the least sum of |log(key / want)| over the six, the first of equals.
const MoeShapeCache::Entry& nearest_moe_shape(const MeasuredTable* t, const double (&want)[6], MoeShapeCache* cache) {
#if !defined(__EMSCRIPTEN__) || defined(STEPCALC_PLAN_MODULE)
  // Natively and in the planner's module; the first-view module (built for its size) searches.
  for (const MoeShapeCache::Entry& e : cache->entries)
    if (e.table == t && std::equal(want, want + 6, e.want)) return e;
#endif
  MoeShapeCache::Entry& out = cache->entries[cache->next];
  cache->next = (cache->next + 1) % std::size(cache->entries);
  out.table = t;
  std::copy(want, want + 6, out.want);
  out.best = -1;
  // Every measured shape is one entry of level 5 (moe_ep); walk up for its keys.
  const int kShapeLevel = 5;
  double best_distance = std::numeric_limits<double>::infinity();
  for (uint32_t i = 0; i < t->levels[kShapeLevel].value.size(); ++i) {
    double keys[6];
    uint32_t node = i;
    for (int d = kShapeLevel; d >= 0; --d) {
      keys[d] = static_cast<double>(t->levels[d].value[node]);
      node = t->levels[d].parent[node];
    }
    double distance = 0;
    for (int d = 0; d < 6; ++d) distance += std::fabs(std::log(keys[d] / want[d]));
    if (distance < best_distance) {
      best_distance = distance;
      out.best = i;
      std::copy(keys, keys + 6, out.keys);
    }
  }
  out.distance = best_distance;
  return out;
}

KernelTime moe_in(const MeasuredTable* t, KernelDtype dtype, double tokens, int hidden, int intermediate, int experts,
                  int topk, int moe_tp, int moe_ep, MoeShapeCache* cache) {
  if (t == nullptr) return missing_time(KernelTable::kMoe, dtype);
  if (!(tokens > 0) || hidden <= 0 || intermediate <= 0 || experts <= 0 || topk <= 0 || moe_tp <= 0 || moe_ep <= 0) {
    return KernelTime{};
  }
  const double want[6] = {double(hidden), double(intermediate), double(experts),
                          double(topk),   double(moe_tp),       double(moe_ep)};
  const MoeShapeCache::Entry& shape = nearest_moe_shape(t, want, cache);
  const int64_t best = shape.best;
  const double best_distance = shape.distance;
  const double(&best_keys)[6] = shape.keys;
  if (best < 0) return missing_time(KernelTable::kMoe, dtype);
  Sample s = interpolate_rows(*t, static_cast<uint32_t>(best), tokens, BeyondRule::kLinear, t->envelope_us);
  if (best_distance > 0) {
    s.us *= moe_work(tokens, want[0], want[1], want[2], want[3], want[4], want[5]) /
            moe_work(tokens, best_keys[0], best_keys[1], best_keys[2], best_keys[3], best_keys[4], best_keys[5]);
    s.worsen(LookupHow::kApproximated);
  }
  return kernel_time(s, KernelTable::kMoe, dtype);
}

}  // namespace

KernelTime KernelDb::moe(KernelDtype dtype, double tokens, int hidden, int intermediate, int experts, int topk,
                         int moe_tp, int moe_ep) const {
  const double d = 65536;  // the small integers two by two in one number (exactly)
  const Impl::MemoKey key{-1 - 256 * static_cast<int32_t>(dtype) - 16,
                          {tokens, static_cast<double>(hidden), static_cast<double>(intermediate),
                           static_cast<double>(experts) * d + topk, static_cast<double>(moe_tp) * d + moe_ep}};
  Impl::MemoEntry* slot = impl_->recall(key);
  if (Impl::holds(slot, key)) return slot->time;
  KernelTime t = moe_in(impl_->table(KernelTable::kMoe, dtype), dtype, tokens, hidden, intermediate, experts, topk,
                        moe_tp, moe_ep, &impl_->moe_shapes);
  const MeasuredTable* bf16 = impl_->table(KernelTable::kMoe, KernelDtype::kBf16);
  if (dtype != KernelDtype::kBf16 && bf16 != nullptr)
    t = no_slower_than_bf16(t, moe_in(bf16, KernelDtype::kBf16, tokens, hidden, intermediate, experts, topk, moe_tp,
                                      moe_ep, &impl_->moe_shapes));
  return Impl::keep(slot, key, t);
}

KernelTime KernelDb::attention_module(KernelTable kind, double batch, double tokens, int heads,
                                      KernelDtype kv_dtype) const {
  // DeepSeek sparse attention: each query reads the indexer's top-k tokens (2048), so beyond
  // the longest measured prefill its time grows along the line through the last two lengths
  // (the indexer's scoring of every earlier token is its only quadratic part).
  const BeyondRule beyond_tokens = kind == KernelTable::kMlaPrefill ? BeyondRule::kQuadratic : BeyondRule::kLinear;
  const auto in = [&](KernelDtype d) {
    const MeasuredTable* t = impl_->table(kind, d);
    if (t == nullptr) return missing_time(kind, d);
    if (!(batch > 0) || !(tokens >= 0) || heads <= 0) return KernelTime{};
    const uint32_t node = t->nearest_top(heads);
    const double scale = t->levels[0].value[node] == heads ? 1 : heads / static_cast<double>(t->levels[0].value[node]);
    Sample s = interpolate_grid(*t, node, batch, tokens, BeyondRule::kProportional, beyond_tokens);
    s.us *= scale;
    if (t->levels[0].value[node] != heads) s.worsen(LookupHow::kApproximated);
    return kernel_time(s, kind, d);
  };
  // An FP8 KV cache never prices the module slower than a BF16 one (as attention_lookup).
  const KernelTime t = in(kv_dtype);
  return kv_dtype != KernelDtype::kBf16 ? no_slower_than_bf16(t, in(KernelDtype::kBf16)) : t;
}

DecodeAttentionRow KernelDb::attention_module_row(KernelTable kind, double batch, int heads,
                                                  KernelDtype kv_dtype) const {
  DecodeAttentionRow row;  // as attention_module of a decode table (KV beyond the grid: linear)
  row.batch_ = batch;
  const auto part = [&](KernelDtype d) {
    DecodeAttentionRow::Part p;
    const MeasuredTable* t = impl_->table(kind, d);
    if (t == nullptr) return p;  // missing: NaN
    p.missing = false;
    if (!(batch > 0) || heads <= 0) {
      p.zero = true;
      return p;
    }
    const uint32_t node = t->nearest_top(heads);
    p.table = t;
    p.proportional_batch = true;
    p.scale = t->levels[0].value[node] == heads ? 1 : heads / static_cast<double>(t->levels[0].value[node]);
    p.spot = locate_grid(*t, node, batch);
    return p;
  };
  row.low_ = part(kv_dtype);
  row.compare_ = kv_dtype != KernelDtype::kBf16;
  if (row.compare_) row.bf16_ = part(KernelDtype::kBf16);
  return row;
}

}  // namespace stepcalc
