// SPDX-License-Identifier: Apache-2.0
// A request's `step` object: prefill_requests [{progress_index,
// num_new_prefill_tokens}] and decode_requests [{progress_index,
// num_new_decode_tokens?}], at most limits::kMaxRequestsPerStep in all.
#pragma once

#include "base/error.h"
#include "json/json_read.h"
#include "request/request.h"

namespace stepcalc {

/// The step of `e`; errors name the item and field (`step.decode_requests[3].progress_index`).
Expected<Step> step_from_json(json::element e, const json::Path& path);

}  // namespace stepcalc
