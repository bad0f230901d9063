// JSON out: a priced step (or an error) as the result object of docs/RESULT.md.
#pragma once

#include <functional>
#include <string>

#include "error.h"
#include "estimators/step_result.h"
#include "io/json_writer.h"
#include "kernels/tables.h"
#include "model/model.h"
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

/// Writes the field "error": {"code", "path", "message"} into the open object of `w`.
void write_error(JsonWriter& w, const Error& error);

/// {"error": {"code", "path", "message"}} (plus "id" when the request had one).
std::string error_to_json(const Error& error, const std::string& id = "", bool has_id = false);

}  // namespace stepcalc
