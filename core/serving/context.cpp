// SPDX-License-Identifier: Apache-2.0
#include "serving/context.h"

#include <algorithm>
#include <string>

namespace stepcalc {

std::vector<Warning> context_warnings(const Request& request) {
  const int64_t context = request.model.spec.max_model_len;
  if (context <= 0) return {};
  int64_t longest = 0, count = 0;
  const auto check = [&](int64_t tokens) {
    longest = std::max(longest, tokens);
    if (tokens > context) ++count;
  };
  for (const PrefillRequest& p : request.step.prefill) check(p.progress_index + p.new_tokens);
  for (const DecodeRequest& d : request.step.decode) check(d.progress_index + 1);
  if (count == 0) return {};
  return {{"beyond_context", std::to_string(count) + " request(s) of the step hold more tokens (up to " +
                                 std::to_string(longest) + ") than the model's context of " + std::to_string(context) +
                                 " (max_position_embeddings): vLLM refuses such requests (--max-model-len); the "
                                 "estimate extrapolates past what the model was trained for."}};
}

}  // namespace stepcalc
