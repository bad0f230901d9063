// SPDX-License-Identifier: Apache-2.0
// JSON out for serving: the memory object every result carries, and the result of
// a serving estimate (docs/RESULT.md, "Serving").
#pragma once

#include <string>

#include "json/json_writer.h"
#include "serving/memory.h"
#include "serving/serve.h"

namespace stepcalc {

/// Writes "memory": {...} into the open object of `w`.
void write_memory(JsonWriter& w, const ServingMemory& memory);

/// Writes "validation": the ledger subset nearest the request, or {subset: null, note}.
void write_validation(JsonWriter& w, const ValidationMatch& validation);

/// The serving result object. `all_finite` (if given) is set to false when some
/// number was NaN or infinite.
std::string serve_result_to_json(const Request& request, const ServeResult& result, bool* all_finite = nullptr);

}  // namespace stepcalc
