// SPDX-License-Identifier: Apache-2.0
// MFU lookups, exactly as reference-model.md "MFU lookups" specifies.
#include "kernels/reference/mfu_lookup.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace stepcalc {

const char* Provenance::how() const {
  if (floor) return "floor";
  if (fallback) return "fallback";
  if (clamped_low || clamped_high) return "clamped";
  if (exact) return "exact";
  return "interpolated";
}

Bracket bracket(const double* axis, size_t size, double x) {
  Bracket b;
  if (size == 0) return b;
  const size_t last = size - 1;
  if (x <= axis[0]) {
    b.clamped = x < axis[0] ? -1 : 0;
    return b;
  }
  if (x >= axis[last]) {
    b.i0 = b.i1 = last;
    b.clamped = x > axis[last] ? 1 : 0;
    return b;
  }
  const size_t i = static_cast<size_t>(std::lower_bound(axis, axis + size, x) - axis);
  if (axis[i] == x) {
    b.i0 = b.i1 = i;
    return b;
  }
  b.i0 = i - 1;
  b.i1 = i;
  b.t = (x - axis[b.i0]) / (axis[b.i1] - axis[b.i0]);
  return b;
}

namespace {

void note_clamp(const Bracket& b, Provenance* p) {
  if (b.clamped < 0) p->clamped_low = true;
  if (b.clamped > 0) p->clamped_high = true;
}

double sq(double x) { return x * x; }

/// The MFU at bracket `b` of one sorted axis: the measured value on a degenerate
/// bracket (exact hit or clamp), else the linear interpolation.
double along_axis(const Bracket& b, const std::vector<double>& mfu, const std::vector<int>& rows, bool exact_key,
                  Provenance* p) {
  note_clamp(b, p);
  if (!b.degenerate()) return lerp(mfu[b.i0], mfu[b.i1], b.t);
  p->exact = b.clamped == 0 && exact_key;
  p->row = rows[b.i0];
  return mfu[b.i0];
}

/// The reference's answer to an MFU below 1e-4: the MFU of the row with MFU >= 1e-4
/// nearest by `distance(row)` (the first in file order on ties), or 1e-4 if none.
template <typename Distance>
double nearest_nonzero(const std::vector<double>& mfu, Distance distance, Provenance* p) {
  int row = -1;
  double nearest = std::numeric_limits<double>::infinity();
  for (size_t r = 0; r < mfu.size(); ++r) {
    if (mfu[r] < kMinMfu) continue;
    const double d = distance(r);
    if (d < nearest) nearest = d, row = static_cast<int>(r);
  }
  p->fallback = row >= 0;
  p->floor = row < 0;
  p->row = row;
  return row >= 0 ? mfu[row] : kMinMfu;
}

}  // namespace

GemmPairChoice gemm_pair(const GemmTable& table, double k, double n) {
  GemmPairChoice out;
  double best = std::numeric_limits<double>::infinity();
  bool covered = false;
  for (size_t i = 0; i < table.pairs.size(); ++i) {
    const GemmPair& p = table.pairs[i];
    if (p.k >= k && p.n >= n) {
      const double distance = sq(p.k - k) + sq(p.n - n);
      if (!covered || distance < best) best = distance, out.pair = i, covered = true;
    }
  }
  if (!covered) {
    double largest = -1;
    for (size_t i = 0; i < table.pairs.size(); ++i) {
      const double size = sq(table.pairs[i].k) + sq(table.pairs[i].n);
      if (size > largest) largest = size, out.pair = i;
    }
    out.largest = true;
  }
  if (!table.pairs.empty()) out.exact = table.pairs[out.pair].k == k && table.pairs[out.pair].n == n;
  return out;
}

GemmLookup gemm_mfu(const GemmTable& table, double m, double k, double n) {
  return gemm_mfu(table, gemm_pair(table, k, n), m, k, n);
}

GemmLookup gemm_mfu(const GemmTable& table, const GemmPairChoice& choice, double m, double k, double n) {
  GemmLookup out;
  out.pair = choice.pair;
  out.pair_largest = choice.largest;
  if (table.pairs.empty()) return out;
  const GemmPair& p = table.pairs[out.pair];
  out.pair_exact = choice.exact;
  out.m = bracket(p.m_axis.data(), p.m_axis.size(), m);
  out.mfu = along_axis(out.m, p.mfu, p.row, out.pair_exact, &out.provenance);
  if (out.mfu < kMinMfu) {
    auto distance = [&](size_t r) { return sq(table.m[r] - m) + sq(table.k[r] - k) + sq(table.n[r] - n); };
    out.mfu = nearest_nonzero(table.mfu, distance, &out.provenance);
  }
  return out;
}

PrefillLookup prefill_mfu(const PrefillTable& table, double seq) {
  PrefillLookup out;
  out.seq = bracket(table.seq_axis.data(), table.seq_axis.size(), seq);
  out.mfu = along_axis(out.seq, table.mfu, table.row, true, &out.provenance);
  if (out.mfu < kMinMfu) {
    auto distance = [&](size_t r) { return std::fabs(table.file_seq[r] - seq); };
    out.mfu = nearest_nonzero(table.file_mfu, distance, &out.provenance);
  }
  return out;
}

// Hot for big batches at long KV, where unmeasured corners read as 0. Every file row
// is a cell of the (batch, KV) grid, so instead of scanning all rows this visits the
// grid's KV lengths outwards from kv, all batch cells of each: no cell at a KV length
// can be nearer than |kv_len - kv| (rounding is monotone), so each side stops at the
// first length that is farther than the nearest cell so far. Ties keep the smallest
// file row, as the reference's scan in file order does.
int nearest_decode_row(const DecodeTable& t, double bs, double kv) {
  const size_t columns = t.bs_axis.size(), cells = t.kv_axis.size();
  double nearest = std::numeric_limits<double>::infinity();
  double nearest_squared = nearest;  // a squared distance whose sqrt is `nearest`
  int row = -1;
  auto visit = [&](size_t k) {
    const double dk = sq(t.kv_axis[k] - kv);
    for (size_t ib = 0; ib < columns; ++ib) {
      const size_t cell = ib * cells + k;
      const int r = t.row[cell];
      if (r < 0 || t.mfu[cell] < kMinMfu) continue;
      const double squared = sq(t.bs_axis[ib] - bs) + dk;
      if (squared > nearest_squared && r > row) continue;  // farther, or a tie it would lose
      const double distance = std::sqrt(squared);
      if (distance < nearest) {
        nearest = distance, nearest_squared = squared, row = r;
      } else if (distance == nearest && r < row) {
        row = r;
      }
    }
  };
  const size_t pos = static_cast<size_t>(std::lower_bound(t.kv_axis.begin(), t.kv_axis.end(), kv) - t.kv_axis.begin());
  size_t up = pos, down = pos;  // next lengths to visit: up, down - 1
  for (;;) {
    const double up_gap = up < cells ? std::sqrt(sq(t.kv_axis[up] - kv)) : 0;
    const double down_gap = down > 0 ? std::sqrt(sq(t.kv_axis[down - 1] - kv)) : 0;
    const bool use_up = up < cells && up_gap <= nearest;
    const bool use_down = down > 0 && down_gap <= nearest;
    if (!use_up && !use_down) return row;
    if (use_up && (!use_down || up_gap <= down_gap))
      visit(up++);
    else
      visit(--down);
  }
}

DecodeLookup decode_mfu(const DecodeTable& table, double bs, double kv) {
  return decode_mfu(table, bracket(table.bs_axis.data(), table.bs_axis.size(), bs), bs, kv);
}

DecodeLookup decode_mfu(const DecodeTable& table, const Bracket& bs_bracket, double bs, double kv) {
  DecodeLookup out;
  out.bs = bs_bracket;
  out.kv = bracket(table.kv_axis.data(), table.kv_axis.size(), kv);
  note_clamp(out.bs, &out.provenance);
  note_clamp(out.kv, &out.provenance);
  // A corner with no measurement reads as 0 (reference QUIRK).
  auto corner = [&](size_t ib, size_t ik) {
    if (table.cell_row(ib, ik) < 0) out.provenance.missing_corner = true;
    return table.cell_mfu(ib, ik);
  };
  const double q00 = corner(out.bs.i0, out.kv.i0);
  if (out.bs.degenerate() && out.kv.degenerate()) {
    out.mfu = q00;
    out.provenance.exact = out.bs.clamped == 0 && out.kv.clamped == 0;
    out.provenance.row = table.cell_row(out.bs.i0, out.kv.i0);
  } else if (out.bs.degenerate()) {
    out.mfu = lerp(q00, corner(out.bs.i0, out.kv.i1), out.kv.t);
  } else if (out.kv.degenerate()) {
    out.mfu = lerp(q00, corner(out.bs.i1, out.kv.i0), out.bs.t);
  } else {
    const double q10 = corner(out.bs.i1, out.kv.i0);
    const double q01 = corner(out.bs.i0, out.kv.i1);
    const double q11 = corner(out.bs.i1, out.kv.i1);
    out.mfu = lerp(lerp(q00, q10, out.bs.t), lerp(q01, q11, out.bs.t), out.kv.t);
  }
  if (out.mfu < kMinMfu) {
    const int row = nearest_decode_row(table, bs, kv);
    out.provenance.fallback = row >= 0;
    out.provenance.floor = row < 0;
    out.provenance.row = row;
    out.mfu = row >= 0 ? table.file_mfu[row] : kMinMfu;
  }
  return out;
}

const PrefillTable* nearest_attention_config(const MfuTables& tables, int64_t heads, int64_t kv_heads,
                                             int64_t head_dim) {
  const PrefillTable* best = nullptr;
  double nearest = std::numeric_limits<double>::infinity();
  for (const PrefillTable& p : tables.prefill) {  // sorted by key: ties keep the first
    const double distance =
        std::sqrt(sq(static_cast<double>(p.heads - heads)) + sq(static_cast<double>(p.kv_heads - kv_heads)) +
                  sq(static_cast<double>(p.head_dim - head_dim)));
    if (p.heads == heads && p.kv_heads == kv_heads && p.head_dim == head_dim) return &p;
    if (distance < nearest) nearest = distance, best = &p;
  }
  return best;
}

const DecodeTable* decode_table_for(const MfuTables& tables, const std::string& key, int64_t tp) {
  const DecodeTable* best = nullptr;
  for (const DecodeTable& d : tables.decode) {  // sorted by tp within a key
    if (d.key != key) continue;
    if (d.tp == tp) return &d;
    if (best == nullptr || std::llabs(d.tp - tp) < std::llabs(best->tp - tp)) best = &d;
  }
  return best;
}

}  // namespace stepcalc
