// SPDX-License-Identifier: Apache-2.0
// A serving request's `workload` and `engine` objects (docs/SERVING.md, limits in
// docs/INPUT.md). Errors name the field (`workload.output_tokens.max`, ...).
#pragma once

#include "base/error.h"
#include "json/json_read.h"
#include "request/workload.h"

namespace stepcalc {

/// The `workload` object of `e`.
Expected<Workload> workload_from_json(json::element e, const json::Path& path);

/// The `engine` object of `e` (fields left out stay 0: vLLM's default for the GPU).
Expected<EngineSettings> engine_from_json(json::element e, const json::Path& path);

}  // namespace stepcalc
