// SPDX-License-Identifier: Apache-2.0
#include "estimators/reference/gemm_times.h"

#include <algorithm>

#include "estimators/reference/corrected.h"

namespace stepcalc {
namespace {

/// One GEMM for m tokens; every field of `g` is assigned. Its per-layer time.
double price_gemm(const PricingSetup& s, int kind, double m, GemmTerm* g) {
  const ModelConstants& d = s.constants;
  g->m = m, g->k = d.gemm_k[kind], g->n = d.gemm_n[kind];
  g->lookup = gemm_mfu(s.tables->gemm, d.gemm_pairs[kind], g->m, g->k, g->n);
  g->mfu = g->lookup.mfu;
  g->flops = 2 * g->m * g->k * g->n;
  double efficiency = d.peak_flops * g->mfu;
  if (efficiency <= 0) efficiency = 1;
  g->compute_s = g->flops / efficiency;
  g->floor_s = d.peak_bw > 0 ? g->k * g->n * d.bpp / d.peak_bw : 0;
  g->floor_won = g->floor_s > g->compute_s;
  g->kernel_floor_s = 0;
  double per_layer = std::max(g->compute_s, g->floor_s);
  if (s.corrected.has(kGemmRoofline))
    per_layer = gemm_roofline_s(s.corrected, s.tables->gemm, d.peak_flops, d.peak_bw, d.bpp, g);
  g->time_s = per_layer * d.tp_scaling * d.layers;
  return per_layer;
}

void note_gemm_codes(const GemmLookup& l, bool roofline, WarningSet* codes) {
  if (l.pair_largest)
    codes->add(kWarnGemmShapeBeyondTable);
  else if (!l.pair_exact)
    codes->add(kWarnGemmShapeNotMeasured);
  if (l.provenance.clamped_low) codes->add(kWarnGemmMBelowTable);
  if (l.provenance.clamped_high) codes->add(kWarnGemmMAboveTable);
  if ((l.provenance.fallback || l.provenance.floor) && !roofline) codes->add(kWarnGemmMfuFallback);
}

}  // namespace

double gemm_set_s(const PricingSetup& s, double m, GemmSet* set, WarningSet* codes) {
  const ModelConstants& d = s.constants;
  double per_layer[kNumGemmKinds];
  double sum = 0;
  for (int kind = 0; kind < kNumGemmKinds; ++kind) {
    const int same = d.same_shape_as[kind];
    if (same < kind) {
      per_layer[kind] = per_layer[same];
      if (set != nullptr) set->terms[kind] = set->terms[same];
    } else {
      GemmTerm local;
      GemmTerm* g = set != nullptr ? &set->terms[kind] : &local;
      per_layer[kind] = price_gemm(s, kind, m, g);
      if (codes != nullptr) note_gemm_codes(g->lookup, s.corrected.has(kGemmRoofline), codes);
    }
    sum += per_layer[kind];
  }
  const double total_s = sum * d.tp_scaling * d.layers;
  if (set != nullptr) set->m = m, set->total_s = total_s;
  return total_s;
}

}  // namespace stepcalc
