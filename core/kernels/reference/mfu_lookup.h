// SPDX-License-Identifier: Apache-2.0
// The three MFU lookups of the reference model, with the provenance of each answer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/reference/mfu_tables.h"

namespace stepcalc {

/// MFUs below this are treated as missing (the reference's zero threshold).
constexpr double kMinMfu = 1e-4;

/// Position of x on a sorted axis: indices i0 <= i1 and the lerp weight t.
/// Degenerate (i0 == i1) on an exact hit or a clamp; `clamped` -1 below, +1 above.
struct Bracket {
  size_t i0 = 0, i1 = 0;
  double t = 0;
  int clamped = 0;
  bool degenerate() const { return i0 == i1; }
};

Bracket bracket(const double* axis, size_t size, double x);
inline double lerp(double a, double b, double t) { return a + (b - a) * t; }

/// How a looked-up MFU was obtained, for the breakdown and the warnings.
struct Provenance {
  bool exact = false;           ///< every axis hit a measured point
  bool clamped_low = false;     ///< some axis below the table (the edge value was used)
  bool clamped_high = false;    ///< some axis above the table
  bool missing_corner = false;  ///< a decode corner with no measurement read as 0
  bool fallback = false;        ///< interpolation gave < 1e-4; nearest non-zero row used
  bool floor = false;           ///< no non-zero row at all: 1e-4
  int row = -1;                 ///< the file row used when exact or fallback
  const char* how() const;      ///< "exact", "interpolated", "clamped", "fallback", "floor"
};

struct GemmLookup {
  double mfu = 0;
  size_t pair = 0;            ///< index into GemmTable::pairs
  bool pair_exact = false;    ///< table (K, N) equals the requested (k, n)
  bool pair_largest = false;  ///< no pair covered (k, n); the largest one was used
  Bracket m;                  ///< along the pair's m axis
  Provenance provenance;
};

struct PrefillLookup {
  double mfu = 0;
  Bracket seq;
  Provenance provenance;
};

struct DecodeLookup {
  double mfu = 0;
  Bracket bs, kv;
  Provenance provenance;
};

GemmLookup gemm_mfu(const GemmTable& table, double m, double k, double n);
PrefillLookup prefill_mfu(const PrefillTable& table, double seq);
DecodeLookup decode_mfu(const DecodeTable& table, double bs, double kv);

/// The GEMM table pair that prices a (k, n) weight: the nearest covering pair, else
/// the largest. It depends on the model only, so a pricing finds it once per shape.
struct GemmPairChoice {
  size_t pair = 0;
  bool exact = false;    ///< table (K, N) equals (k, n)
  bool largest = false;  ///< no pair covered (k, n)
};
GemmPairChoice gemm_pair(const GemmTable& table, double k, double n);

/// gemm_mfu with the pair already chosen by gemm_pair(table, k, n): same answer.
GemmLookup gemm_mfu(const GemmTable& table, const GemmPairChoice& pair, double m, double k, double n);

/// decode_mfu with `bs_bracket` = bracket(table.bs_axis, bs) found once for a step
/// (every decode request of a step shares the batch size): same answer.
DecodeLookup decode_mfu(const DecodeTable& table, const Bracket& bs_bracket, double bs, double kv);

/// The decode fallback: the file row with MFU >= 1e-4 nearest to (bs, kv) by the
/// reference's sqrt((bs_r - bs)^2 + (kv_r - kv)^2), the first in file order on ties;
/// -1 when the table has none.
int nearest_decode_row(const DecodeTable& table, double bs, double kv);

/// The attention config used for a model's key: itself if measured, else the
/// nearest (Euclidean over H, Hkv, D; ties to the byte-wise first key).
const PrefillTable* nearest_attention_config(const MfuTables& tables, int64_t heads, int64_t kv_heads,
                                             int64_t head_dim);

/// The decode table for (key, tp), else the key's table with the nearest TP (ties to
/// the smaller TP); null when the key has no decode tables.
const DecodeTable* decode_table_for(const MfuTables& tables, const std::string& key, int64_t tp);

}  // namespace stepcalc
