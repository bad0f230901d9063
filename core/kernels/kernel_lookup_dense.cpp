// SPDX-License-Identifier: Apache-2.0
// Lookups of what a dense model needs: GEMM, decode and prefill attention, all-reduce.
// Rules (docs/KERNELS.md): GEMM piecewise-linear in m over the lower monotone
// envelope, efficiency (not time) interpolated between measured (n, k) in log n and
// log k; attention bilinear in batch and tokens for the measured head configuration,
// else the nearest one scaled; all-reduce piecewise-linear in message size.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/kernel_db_impl.h"

namespace stepcalc {

namespace {

// Where x falls in a sorted list of measured values: the exact entry, or the
// neighbours (lo = -1 below the first, hi = -1 beyond the last).
struct Bracket {
  int64_t exact = -1, lo = -1, hi = -1;
};

Bracket bracket(const MeasuredTable& t, int d, uint32_t node, double x) {
  auto [first, end] = t.children(d, node);
  const std::vector<int64_t>& v = t.levels[d + 1].value;
  Bracket b;
  for (uint32_t i = first; i < end; ++i) {
    const double vi = static_cast<double>(v[i]);
    if (vi == x) {
      b.exact = i;
      return b;
    }
    if (vi < x) b.lo = i;
    if (vi > x && b.hi < 0) b.hi = i;
  }
  return b;
}

// Time at x between two measured points of work proportional to x, interpolating the
// efficiency x / time in log x; below the first point the time is clamped, beyond the
// last the efficiency is (the time grows with x).
Sample efficiency_between(const Sample* lo, double x_lo, const Sample* hi, double x_hi, double x) {
  Sample s;
  if (lo != nullptr && hi != nullptr) {
    const double w = std::log(x / x_lo) / std::log(x_hi / x_lo);
    const double e = (x_lo / lo->us) + ((x_hi / hi->us) - (x_lo / lo->us)) * w;
    s = *lo;
    s.add_cells(*hi);
    s.us = x / e;
    s.worsen(lookup_how_rank(hi->how) > lookup_how_rank(lo->how) ? hi->how : lo->how);
    s.worsen(LookupHow::kInterpolated);
  } else if (lo != nullptr) {
    s = *lo;
    s.us = lo->us * (x / x_lo);
    s.worsen(LookupHow::kExtrapolated);
  } else {
    s = *hi;
    s.worsen(LookupHow::kClamped);
  }
  return s;
}

// GEMM time at measured n (entry n_node at level 0) for any k and m.
Sample gemm_at_n(const MeasuredTable& t, uint32_t n_node, double k, double m) {
  const Bracket b = bracket(t, 0, n_node, k);
  auto at = [&](int64_t k_node) {
    return interpolate_rows(t, static_cast<uint32_t>(k_node), m, BeyondRule::kProportional, t.envelope_us);
  };
  if (b.exact >= 0) return at(b.exact);
  Sample lo, hi;
  if (b.lo >= 0) lo = at(b.lo);
  if (b.hi >= 0) hi = at(b.hi);
  const std::vector<int64_t>& ks = t.levels[1].value;
  return efficiency_between(b.lo >= 0 ? &lo : nullptr, b.lo >= 0 ? static_cast<double>(ks[b.lo]) : 0,
                            b.hi >= 0 ? &hi : nullptr, b.hi >= 0 ? static_cast<double>(ks[b.hi]) : 0, k);
}

// The measured (kv_heads, heads) entry for an attention table under head_dim entry
// `hd`: exact, else the nearest in log kv_heads + log heads (same ratio preferred);
// `scale` gets the factor applied to its time.
int64_t heads_entry(const MeasuredTable& t, uint32_t hd, int heads, int kv_heads, bool by_kv_heads, double& scale,
                    bool& exact) {
  const int64_t kv = t.find_child(0, hd, kv_heads);
  if (kv >= 0) {
    const int64_t h = t.find_child(1, static_cast<uint32_t>(kv), heads);
    if (h >= 0) {
      exact = true;
      scale = 1;
      return h;
    }
  }
  exact = false;
  int64_t best = -1;
  double best_distance = std::numeric_limits<double>::infinity();
  auto [kv_first, kv_end] = t.children(0, hd);
  for (uint32_t i = kv_first; i < kv_end; ++i) {
    auto [h_first, h_end] = t.children(1, i);
    for (uint32_t j = h_first; j < h_end; ++j) {
      const double kv_i = static_cast<double>(t.levels[1].value[i]), h_j = static_cast<double>(t.levels[2].value[j]);
      const bool same_ratio = h_j * kv_heads == heads * kv_i;
      const double distance =
          std::fabs(std::log(kv_i / kv_heads)) + std::fabs(std::log(h_j / heads)) + (same_ratio ? 0 : 100);
      if (distance < best_distance) {
        best_distance = distance;
        best = j;
        scale = by_kv_heads ? kv_heads / kv_i : heads / h_j;
      }
    }
  }
  return best;
}

// The measured entry an attention lookup reads under the nearest head_dim: the heads' node
// (-1: none), the factor on its time, and whether it is another shape's.
struct AttentionEntry {
  int64_t node = -1;
  double scale = 1;
  bool approximated = false;
};

AttentionEntry attention_entry(const MeasuredTable& t, int heads, int kv_heads, int head_dim, bool decode) {
  // head_dim: exact, else the nearest measured, time scaled by the ratio.
  const uint32_t hd = t.nearest_top(head_dim);
  const bool exact = t.levels[0].value[hd] == head_dim;
  const double scale = exact ? 1 : head_dim / static_cast<double>(t.levels[0].value[hd]);
  double heads_scale = 1;
  bool heads_exact = false;
  AttentionEntry e;
  e.node = heads_entry(t, hd, heads, kv_heads, decode, heads_scale, heads_exact);
  e.scale = scale * heads_scale;
  e.approximated = !exact || !heads_exact;
  return e;
}

bool attention_args_valid(double batch, int heads, int kv_heads, int head_dim) {
  return batch > 0 && heads > 0 && kv_heads > 0 && head_dim > 0;
}

KernelTime attention(const MeasuredTable* t, KernelTable kind, KernelDtype kv_dtype, double batch, double tokens,
                     int heads, int kv_heads, int head_dim, BeyondRule beyond_batch, BeyondRule beyond_tokens) {
  if (t == nullptr) return missing_time(kind, kv_dtype);
  if (!attention_args_valid(batch, heads, kv_heads, head_dim) || !(tokens >= 0)) return KernelTime{};
  const AttentionEntry e = attention_entry(*t, heads, kv_heads, head_dim, kind == KernelTable::kDecodeAttention);
  if (e.node < 0) return missing_time(kind, kv_dtype);
  Sample s = interpolate_grid(*t, static_cast<uint32_t>(e.node), batch, tokens, beyond_batch, beyond_tokens);
  s.us *= e.scale;
  if (e.approximated) s.worsen(LookupHow::kApproximated);
  return kernel_time(s, kind, kv_dtype);
}

}  // namespace

namespace {

KernelTime gemm_in(const MeasuredTable* t, KernelDtype dtype, double m, double n, double k) {
  if (t == nullptr) return missing_time(KernelTable::kGemm, dtype);
  if (!(m > 0) || !(n > 0) || !(k > 0)) return KernelTime{};
  const Bracket b = bracket(*t, -1, 0, n);
  if (b.exact >= 0) return kernel_time(gemm_at_n(*t, static_cast<uint32_t>(b.exact), k, m), KernelTable::kGemm, dtype);
  Sample lo, hi;
  if (b.lo >= 0) lo = gemm_at_n(*t, static_cast<uint32_t>(b.lo), k, m);
  if (b.hi >= 0) hi = gemm_at_n(*t, static_cast<uint32_t>(b.hi), k, m);
  const std::vector<int64_t>& ns = t->levels[0].value;
  const Sample s = efficiency_between(b.lo >= 0 ? &lo : nullptr, b.lo >= 0 ? static_cast<double>(ns[b.lo]) : 0,
                                      b.hi >= 0 ? &hi : nullptr, b.hi >= 0 ? static_cast<double>(ns[b.hi]) : 0, n);
  return kernel_time(s, KernelTable::kGemm, dtype);
}

}  // namespace

KernelTime KernelDb::gemm(KernelDtype dtype, double m, double n, double k) const {
  const Impl::MemoKey key{static_cast<int32_t>(dtype), {m, n, k, 0, 0}};
  Impl::MemoEntry* slot = impl_->recall(key);
  if (Impl::holds(slot, key)) return slot->time;
  KernelTime t = gemm_in(impl_->table(KernelTable::kGemm, dtype), dtype, m, n, k);
  const MeasuredTable* bf16 = impl_->table(KernelTable::kGemm, KernelDtype::kBf16);
  if (dtype != KernelDtype::kBf16 && bf16 != nullptr)
    t = no_slower_than_bf16(t, gemm_in(bf16, KernelDtype::kBf16, m, n, k));
  return Impl::keep(slot, key, t);
}

KernelTime KernelDb::decode_attention(double batch, double kv_len, int heads, int kv_heads, int head_dim,
                                      KernelDtype kv_dtype) const {
  return attention_lookup(KernelTable::kDecodeAttention, batch, kv_len, heads, kv_heads, head_dim, kv_dtype);
}

KernelTime KernelDb::prefill_attention(double batch, double seq, int heads, int kv_heads, int head_dim,
                                       KernelDtype kv_dtype) const {
  return attention_lookup(KernelTable::kPrefillAttention, batch, seq, heads, kv_heads, head_dim, kv_dtype);
}

DecodeAttentionRow KernelDb::decode_attention_row(double batch, int heads, int kv_heads, int head_dim,
                                                  KernelDtype kv_dtype) const {
  DecodeAttentionRow row;
  row.batch_ = batch;
  const auto part = [&](KernelDtype d) {
    DecodeAttentionRow::Part out;
    const MeasuredTable* t = impl_->table(KernelTable::kDecodeAttention, d);
    if (t == nullptr) return out;  // missing
    out.missing = false;
    if (!attention_args_valid(batch, heads, kv_heads, head_dim)) {
      out.zero = true;
      return out;
    }
    const AttentionEntry e = attention_entry(*t, heads, kv_heads, head_dim, true);
    if (e.node < 0) {
      out.missing = true;
      return out;
    }
    out.table = t;
    out.spot = locate_grid(*t, static_cast<uint32_t>(e.node), batch);
    out.scale = e.scale;
    return out;
  };
  row.low_ = part(kv_dtype);
  row.compare_ = kv_dtype != KernelDtype::kBf16;
  if (row.compare_) row.bf16_ = part(KernelDtype::kBf16);
  return row;
}

DecodeKvSpots::Slot* DecodeKvSpots::at(double kv_len) {
  if (!(kv_len >= 0 && kv_len < 9e15) || kv_len != std::floor(kv_len)) return nullptr;
  const auto k = static_cast<uint64_t>(kv_len);
  if (k >= entries_.size() && entries_.size() < kEntries) {  // grows with the lengths seen, to kEntries
    size_t size = std::max<size_t>(entries_.size(), 1024);
    while (size <= k && size < kEntries) size *= 2;
    entries_.resize(size);
  }
  Entry& e = entries_[k & (entries_.size() - 1)];
  if (e.kv != kv_len) {
    e.kv = kv_len;
    for (Slot& s : e.slots) s.node = UINT32_MAX;
  }
  return e.slots;
}

double DecodeAttentionRow::part_us(const Part& p, double kv_len, DecodeKvSpots::Slot* slots) const {
  if (p.missing) return std::numeric_limits<double>::quiet_NaN();
  if (p.zero || !(kv_len >= 0)) return 0;
  if (slots == nullptr)
    return grid_us(*p.table, p.spot, batch_, kv_len,
                   p.proportional_batch ? BeyondRule::kProportional : BeyondRule::kLinear, BeyondRule::kLinear) *
           p.scale;
  const auto row_us = [&](DecodeKvSpots::Slot& s, uint32_t node) {  // as grid_us reads its rows
    if (s.node != node)
      s.node = node, s.us = rows_us(*p.table, node, kv_len, BeyondRule::kLinear, p.table->envelope_us);
    return s.us;
  };
  const double at = row_us(slots[0], p.spot.row);
  const double before = grid_reads_before(p.spot) ? row_us(slots[1], p.spot.row - 1) : at;
  return grid_combine(p.spot, batch_, p.proportional_batch ? BeyondRule::kProportional : BeyondRule::kLinear, before,
                      at) *
         p.scale;
}

double DecodeAttentionRow::us(double kv_len, DecodeKvSpots* spots) const {
  DecodeKvSpots::Slot* slots = spots != nullptr ? spots->at(kv_len) : nullptr;
  const double low = part_us(low_, kv_len, slots);
  if (!compare_ || low_.missing || bf16_.missing) return low;  // as no_slower_than_bf16
  const double bf16 = part_us(bf16_, kv_len, slots != nullptr ? slots + 2 : nullptr);
  return bf16 < low ? bf16 : low;
}

KernelTime KernelDb::attention_lookup(KernelTable table, double batch, double length, int heads, int kv_heads,
                                      int head_dim, KernelDtype kv_dtype) const {
  const Impl::MemoKey key{
      (static_cast<int32_t>(table) + 1) << 8 | static_cast<int32_t>(kv_dtype),
      {batch, length, static_cast<double>(heads), static_cast<double>(kv_heads), static_cast<double>(head_dim)}};
  Impl::MemoEntry* slot = impl_->recall(key);
  if (Impl::holds(slot, key)) return slot->time;
  // Decode: beyond the grid linear in both; prefill: proportional in batch, quadratic in length.
  const bool decode = table == KernelTable::kDecodeAttention;
  const auto in = [&](KernelDtype d) {
    return attention(impl_->table(table, d), table, d, batch, length, heads, kv_heads, head_dim,
                     decode ? BeyondRule::kLinear : BeyondRule::kProportional,
                     decode ? BeyondRule::kLinear : BeyondRule::kQuadratic);
  };
  KernelTime t = in(kv_dtype);
  if (kv_dtype != KernelDtype::kBf16) t = no_slower_than_bf16(t, in(KernelDtype::kBf16));
  return Impl::keep(slot, key, t);
}

KernelTime KernelDb::allreduce(int tp, double elements) const {
  if (tp <= 1 || !(elements > 0)) return KernelTime{};
  const MeasuredTable* t = impl_->table(KernelTable::kAllreduce, KernelDtype::kBf16);
  if (t == nullptr) return missing_time(KernelTable::kAllreduce, KernelDtype::kBf16);
  const Impl::MemoKey key{-2, {static_cast<double>(tp), elements, 0, 0, 0}};
  Impl::MemoEntry* slot = impl_->recall(key);
  if (Impl::holds(slot, key)) return slot->time;
  // Exact, else the nearest measured GPU count; a ring moves 2 (tp - 1) / tp of the
  // message per GPU.
  const uint32_t node = t->nearest_top(tp);
  double scale = 1;
  if (t->levels[0].value[node] != tp) {
    const double measured = static_cast<double>(t->levels[0].value[node]);
    scale = ((tp - 1.0) / tp) / ((measured - 1) / measured);
  }
  Sample s = interpolate_rows(*t, node, elements, BeyondRule::kLinear, t->envelope_us);
  s.us *= scale;
  if (t->levels[0].value[node] != tp) s.worsen(LookupHow::kApproximated);
  return Impl::keep(slot, key, kernel_time(s, KernelTable::kAllreduce, KernelDtype::kBf16));
}

KernelDb::Impl::MemoEntry* KernelDb::Impl::recall(const MemoKey& key) const {
  uint64_t h = 1469598103934665603ULL ^ static_cast<uint32_t>(key.what);
  for (double v : key.x) {
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    h = (h ^ bits) * 1099511628211ULL;
    h ^= h >> 29;
  }
  if (!memo) memo.reset(new MemoEntry[kMemoSize]);
  return &memo[h & (kMemoSize - 1)];
}

}  // namespace stepcalc
