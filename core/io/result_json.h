// SPDX-License-Identifier: Apache-2.0
// JSON out: a priced step (or an error) as the result object of docs/RESULT.md.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/error.h"
#include "estimators/step_result.h"
#include "estimators/step_summary.h"
#include "json/json_writer.h"
#include "kernels/reference/mfu_tables.h"
#include "request/request.h"
#include "serving/memory.h"

namespace stepcalc {

/// The result object for `request` priced as `result`. `all_finite` (if given) is
/// set to false when some number was NaN or infinite (written as null). `memory`
/// (if given) is written as the result's "memory" object. `extra` (if given) writes
/// mode-specific fields (the measured mode's `measured` section) into the result
/// object after `breakdown`.
std::string result_to_json(const Request& request, const StepResult& result, const MfuTables& tables,
                           bool* all_finite = nullptr, const ServingMemory* memory = nullptr,
                           const std::function<void(JsonWriter&)>& extra = {});

/// The summary-detail result object (docs/RESULT.md): {id?, mode, detail, step_time_us,
/// total_us, bound, prefill_s, decode_s, overhead_us, warning_codes}.
std::string summary_to_json(const Request& request, const StepSummary& summary);

/// Writes the summary's fields (all but id and mode) into the open object of `w`.
void write_summary_fields(JsonWriter& w, const StepSummary& summary);

/// Summary columns as one JSON object of arrays: step_time_us, total_us, prefill_s,
/// decode_s, overhead_us (null where a point failed), bound (null where failed),
/// warning_codes (an array of codes per point) and errors [{index, code, path, message}].
std::string summary_columns_to_json(const SummaryColumns& columns);

/// Writes the field "error": {"code", "path", "message"} into the open object of `w`.
void write_error(JsonWriter& w, const Error& error);

/// Writes the field "warnings": [{"code", "message"}...] into the open object of `w`.
void write_warnings(JsonWriter& w, const std::vector<Warning>& warnings);

/// {"error": {"code", "path", "message"}} (plus "id" when the request had one).
std::string error_to_json(const Error& error, const std::string& id = "", bool has_id = false);

}  // namespace stepcalc
