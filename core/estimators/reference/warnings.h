// SPDX-License-Identifier: Apache-2.0
// Plain-language warnings for every fallback, clamp and approximation of a pricing.
#pragma once

#include <vector>

#include "estimators/step_result.h"
#include "kernels/reference/mfu_tables.h"
#include "request/request.h"

namespace stepcalc {

/// Warnings about `result` (already priced from `request`), one per distinct cause.
std::vector<Warning> collect_warnings(const Request& request, const MfuTables& tables, const StepResult& result);

}  // namespace stepcalc
