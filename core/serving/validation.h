// SPDX-License-Identifier: Apache-2.0
// How well the nearest measured runs of the public accuracy ledger (docs/VALIDATION.md)
// are predicted: every serving estimate carries the ledger subset most like it, so its
// figures come with the error measured on runs of the same kind. The subsets are compiled
// in from docs/validation.json (tools/validate-summary.mjs, at build time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "request/request.h"

namespace stepcalc {

/// One priced subset of the ledger: model x GPU x precision x layout.
struct ValidationSubset {
  const char* key;        ///< "Qwen/Qwen3-32B | H100 | bf16 | TP4", as in docs/validation.json
  const char* gpu;        ///< "H100"
  const char* precision;  ///< "bf16" or "fp8" (the weights)
  bool moe;               ///< a mixture-of-experts model
  int64_t tp;
  int64_t runs;                 ///< priced runs
  double ttft_mape, tpot_mape;  ///< percent
};

namespace embedded {
extern const ValidationSubset kValidationSubsets[];
extern const size_t kValidationSubsetCount;
}  // namespace embedded

/// The subset nearest a request, or none (`subset` null).
struct ValidationMatch {
  const ValidationSubset* subset = nullptr;
};

/// The priced subset with the request's GPU, weight precision (FP8 when the request or
/// the checkpoint says so, else BF16) and dense/MoE kind whose TP is nearest (by ratio;
/// a tie goes to more runs); none when no subset shares the three.
ValidationMatch nearest_validation(const Request& request);

}  // namespace stepcalc
