// SPDX-License-Identifier: Apache-2.0
// The model's context, as vLLM enforces it: a request whose prompt and output (or a
// step's KV length) exceed max_model_len is refused by vLLM (`--max-model-len`, by
// default the config's max_position_embeddings, rope-scaled).
#pragma once

#include <vector>

#include "base/error.h"
#include "request/request.h"

namespace stepcalc {

/// `beyond_context` when a request of the step would hold more tokens than the model's
/// context (prefix + new tokens of a prefill, KV + 1 of a decode); none when the model
/// gives no context (explicit fields).
std::vector<Warning> context_warnings(const Request& request);

}  // namespace stepcalc
