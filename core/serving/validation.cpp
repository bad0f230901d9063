// SPDX-License-Identifier: Apache-2.0
#include "serving/validation.h"

#include <cmath>
#include <cstring>

namespace stepcalc {

ValidationMatch nearest_validation(const Request& request) {
  const ModelSpec& spec = request.model.spec;
  const Precision p = precision_of(spec, request.quantize_fp8, request.kv_cache_fp8);
  const char* precision = (p.attention_fp8 || p.mlp_fp8 || p.experts_fp8) ? "fp8" : "bf16";
  ValidationMatch best;
  double best_distance = 0;
  for (size_t i = 0; i < embedded::kValidationSubsetCount; ++i) {
    const ValidationSubset& s = embedded::kValidationSubsets[i];
    if (request.hardware.gpu != s.gpu || std::strcmp(precision, s.precision) != 0 || s.moe != spec.is_moe() ||
        s.runs < 1)
      continue;
    const double distance = std::fabs(std::log2(static_cast<double>(s.tp) / static_cast<double>(request.tp)));
    if (best.subset == nullptr || distance < best_distance ||
        (distance == best_distance && s.runs > best.subset->runs)) {
      best.subset = &s;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace stepcalc
