// SPDX-License-Identifier: Apache-2.0
#include "serving/validation.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace stepcalc {

ValidationMatch nearest_validation(const Request& request) {
  const ModelSpec& spec = request.model.spec;
  // The ledger's precision names (its CSV's gemm_quant_mode): fp8 covers block-scaled FP8.
  const WeightFormat main = precision_of(spec, request.quantization, request.kv_cache).main_format();
  const char* precision = main == WeightFormat::kFp8Block ? "fp8"
                          : main == WeightFormat::kInt4   ? "int4_wo"
                                                          : weight_format_name(main);
  const auto log_ratio = [](int64_t a, int64_t b) {
    return std::fabs(std::log2(static_cast<double>(a) / static_cast<double>(std::max<int64_t>(1, b))));
  };
  ValidationMatch best;
  double best_distance = 0;
  for (size_t i = 0; i < embedded::kValidationSubsetCount; ++i) {
    const ValidationSubset& s = embedded::kValidationSubsets[i];
    if (request.hardware.gpu != s.gpu || std::strcmp(precision, s.precision) != 0 || s.moe != spec.is_moe() ||
        s.runs < 1 || (s.dp > 1) != (request.dp > 1))
      continue;
    const double distance = log_ratio(s.tp, request.tp) + log_ratio(s.ep, request.ep) + log_ratio(s.dp, request.dp);
    if (best.subset == nullptr || distance < best_distance ||
        (distance == best_distance && s.runs > best.subset->runs)) {
      best.subset = &s;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace stepcalc
