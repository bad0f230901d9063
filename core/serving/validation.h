// SPDX-License-Identifier: Apache-2.0
// How well the nearest measured runs of the public accuracy ledger (docs/VALIDATION.md)
// are predicted: every serving estimate carries the ledger subset most like it, so its
// figures come with the error measured on runs of the same kind (its MAPE, and its bias:
// which way the estimates erred). The subsets are compiled in from docs/validation.json
// (tools/validate-summary.mjs, at build time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "request/request.h"

namespace stepcalc {

/// One priced subset of the ledger: model x GPU x precision x layout.
struct ValidationSubset {
  const char* key;  ///< "Qwen/Qwen3-32B | H100 | bf16 | TP4", as in docs/validation.json
  const char* gpu;  ///< "H100"
  /// The weights' smallest format, as the ledger names it: "bf16", "fp8", "nvfp4", "mxfp4", "int4_wo".
  const char* precision;
  bool moe;            ///< a mixture-of-experts model
  uint8_t tp, ep, dp;  ///< the layout: "TP4 EP16 DP4" is 4, 16, 4
  /// The runs its figures are over: its priced runs less those that measured fewer requests in
  /// flight than clients (a smaller load than their row says; docs/VALIDATION.md, "The error
  /// beside an estimate"), and how many those were.
  int16_t runs, runs_left_out;
  /// MAPE in hundredths of a percent (two decimals, as the ledger rounds them; kept small
  /// in the first view's module): ttft_mape() and tpot_mape() give percent.
  uint16_t ttft_mape_x100, tpot_mape_x100;
  /// Bias, the mean signed error (predicted - measured) / measured, the same way: negative
  /// where the estimates ran low. ttft_bias() and tpot_bias() give percent.
  int16_t ttft_bias_x100, tpot_bias_x100;
  double ttft_mape() const { return ttft_mape_x100 / 100.0; }
  double tpot_mape() const { return tpot_mape_x100 / 100.0; }
  double ttft_bias() const { return ttft_bias_x100 / 100.0; }
  double tpot_bias() const { return tpot_bias_x100 / 100.0; }
};

namespace embedded {
extern const ValidationSubset kValidationSubsets[];
extern const size_t kValidationSubsetCount;
}  // namespace embedded

/// The subset nearest a request, or none (`subset` null).
struct ValidationMatch {
  const ValidationSubset* subset = nullptr;
};

/// The priced subset with the request's GPU, weight precision (the smallest format of its
/// weights, as the request or the checkpoint says), dense/MoE kind and kind of layout (with
/// attention data parallelism or without) whose TP, EP and DP are nearest (the sum of the
/// log ratios; a tie goes to more runs); none when no subset shares the four.
ValidationMatch nearest_validation(const Request& request);

}  // namespace stepcalc
