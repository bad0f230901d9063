// SPDX-License-Identifier: Apache-2.0
// JSON out for the `measured` mode: its own section of the result object.
#pragma once

#include "estimators/measured.h"
#include "json/json_writer.h"

namespace stepcalc {

/// Writes the field "measured": {gpu, kernels, gpu_time_us, cpu_time_us, cpu, rows,
/// totals_us, constants, weight_bytes_per_gpu, kv_bytes_per_token_per_gpu,
/// kv_cache_dtype, operators[]} into the open object of `w` (docs/RESULT.md).
void write_measured(JsonWriter& w, const MeasuredPlan& plan, const MeasuredBreakdown& breakdown);

}  // namespace stepcalc
