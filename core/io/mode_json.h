// SPDX-License-Identifier: Apache-2.0
// A request's mode options: the optional `corrected` object
// {"switches": {NAME: bool}, "params": {NAME: number}}. Every parameter is checked
// here, once, against its range in kCorrectedParamInfo.
#pragma once

#include "base/error.h"
#include "json/json_read.h"
#include "request/corrected_config.h"

namespace stepcalc {

/// The overrides of `e`; unknown names are unknown_field, a parameter outside its
/// range invalid_value (below) or out_of_range (above, or beyond a double).
Expected<CorrectedOverrides> corrected_from_json(json::element e, const json::Path& path);

}  // namespace stepcalc
