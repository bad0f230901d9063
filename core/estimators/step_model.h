// Pricing one engine step: the reference model "blis-v2" and its corrected variant.
#pragma once

#include "error.h"
#include "estimators/step_result.h"
#include "kernels/tables.h"
#include "model/model.h"

namespace stepcalc {

/// Checks what the reference refuses to price (heads, layers, width, bytes per
/// parameter, hardware constants, tp); the error names the field.
Expected<bool> validate_for_pricing(const Request& request);

/// Prices `request.step` in `request.mode` against `tables`. Never throws; an error
/// names the field at fault. `detail` false skips the per-KV-length lookup groups
/// (for sweeps, where only the times matter).
Expected<StepResult> price_step(const Request& request, const MfuTables& tables, bool detail = true);

/// Round half away from zero, as the reference rounds the step time.
int64_t round_half_away(double us);

}  // namespace stepcalc
