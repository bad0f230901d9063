// SPDX-License-Identifier: Apache-2.0
// The seven weight GEMMs of a layer for m tokens (reference-model.md, gemmTimes).
#pragma once

#include "estimators/reference/pricing_setup.h"
#include "estimators/step_result.h"
#include "estimators/warning_codes.h"

namespace stepcalc {

/// The phase's GEMM time in seconds for `m` tokens: (sum of the seven per-layer
/// times) / tp * L, summed in the reference's order. GEMMs of the same weight shape
/// share one lookup. `set` (full detail; may be null) receives every term, `codes`
/// (may be null) the warning codes of the lookups.
double gemm_set_s(const PricingSetup& setup, double m, GemmSet* set, WarningSet* codes);

}  // namespace stepcalc
