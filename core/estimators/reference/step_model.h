// SPDX-License-Identifier: Apache-2.0
// Pricing one engine step: the reference model "blis-v2" and its corrected variant.
// One kernel serves every detail level: the summary is the full result's headline,
// computed by the same code without the breakdown, its strings or allocations.
#pragma once

#include "base/error.h"
#include "estimators/reference/decode_groups.h"
#include "estimators/reference/pricing_setup.h"
#include "estimators/step_result.h"
#include "estimators/step_summary.h"
#include "kernels/reference/mfu_tables.h"
#include "request/request.h"

namespace stepcalc {

/// Buffers a pricing reuses. A caller that prices many steps keeps one, so that
/// pricings after the largest step seen allocate nothing.
struct PricingScratch {
  DecodeKvGroups decode;
  /// Set by a caller whose steps follow one another (the serving simulation): the
  /// summary's decode terms that do not depend on the batch are kept in `decode_terms`
  /// for the steps after. Off for one-off and repeated pricing, where it would only cost
  /// its memory.
  bool remember_decode_terms = false;
  DecodeKvCache decode_terms;
};

/// Prices `request.step` in `request.mode` against `tables`. Never throws; an error
/// names the field at fault. `detail` false skips the per-KV-length lookup groups
/// and the warnings.
Expected<StepResult> price_step(const Request& request, const MfuTables& tables, bool detail = true);

/// The full result of `request.step` against `setup` (prepared from a request with
/// the same pricing inputs, see same_pricing_inputs).
Expected<StepResult> price_full(const PricingSetup& setup, const Request& request, PricingScratch* scratch,
                                bool detail = true);

/// The summary of `request.step` against `setup`: exactly summarize(price_full(...)),
/// without building the breakdown. Allocation-free once `scratch` is warm.
Expected<StepSummary> price_summary(const PricingSetup& setup, const Request& request, PricingScratch* scratch);

/// Round half away from zero, as the reference rounds the step time.
int64_t round_half_away(double us);

}  // namespace stepcalc
