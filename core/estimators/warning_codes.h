// SPDX-License-Identifier: Apache-2.0
// The stable warning codes of a pricing (docs/RESULT.md), as a small set. A full
// result explains each warning in words; a summary carries only the set of codes,
// which every detail level computes the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stepcalc {

/// Every code a pricing can warn with, in catalogue order (the order a summary lists
/// them in): model notes first, then the setup, the GEMMs, prefill, decode, the step.
enum WarningCode {
  kWarnMoeIgnored,
  kWarnMlaIgnored,
  kWarnSlidingWindowIgnored,
  kWarnHeadDimDiffers,
  kWarnDtypeAssumed,
  kWarnAttentionConfigNearest,
  kWarnHeadDimNotInteger,
  kWarnTpDoesNotDivideHeads,
  kWarnTpAboveKvHeads,
  kWarnDecodeTpNearest,
  kWarnGemmShapeBeyondTable,
  kWarnGemmShapeNotMeasured,
  kWarnGemmMBelowTable,
  kWarnGemmMAboveTable,
  kWarnGemmMfuFallback,
  kWarnPrefillBucketClamped,
  kWarnPrefillMfuFallback,
  kWarnPrefillOneToken,
  kWarnPrefillZeroTokens,
  kWarnPrefillBucketed,
  kWarnDecodeOutsideTable,
  kWarnDecodeMissingCorner,
  kWarnDecodeMfuFallback,
  kWarnDecodeMfuArithmeticMean,
  kWarnMixedBatchOverlap,
  kWarnNoCommunicationTerm,
  kWarnDecodeLatencyTpScaled,
  kWarnMinStepFloor,
  // Added with the GPUs and the measured mode: the setup, the model spec's notes, the
  // measured plan and lookups outside a measured table's grid.
  kWarnTpDoesNotDivideKvHeads,
  kWarnGpuH100Tables,
  kWarnFp8BlockScaled,
  kWarnQuantizationNotPriced,
  kWarnMoeWithoutTopk,
  kWarnSlidingWindowApproximated,
  kWarnChunkedAttentionApproximated,
  kWarnActivationApproximated,
  kWarnVisionNotPriced,
  kWarnSparseAttentionApproximated,
  kWarnMtpNotPriced,
  kWarnOneByteWeights,
  kWarnHeadDimNotMeasured,
  kWarnMlaApproximated,
  kWarnMlaShapeDiffers,
  kWarnKvFp8NotMeasured,
  kWarnFp8NotMeasured,
  kWarnMoeApproximated,
  kWarnFp8MoeNotMeasured,
  kWarnTableClamped,
  kWarnTableExtrapolated,
  kWarnTableApproximated,
  kWarnTableMissing,
  kWarnTableOutlier,
  kWarnGpuTablesScaled,
  kWarnBeyondContext,
  kWarnModelDoesNotFit,
  kWarnKvCacheOverflow,
  kWarnCudaGraphsExceedHeadroom,
  kNumWarningCodes
};
static_assert(kNumWarningCodes <= 64, "WarningSet holds 64 codes");

/// The code's stable word, e.g. "decode_mfu_fallback"; "?" out of range.
const char* warning_code_name(int code);

/// The index of a code word; -1 when it is not in the catalogue.
int warning_code_index(std::string_view name);

/// A set of warning codes (one bit per code of the catalogue).
struct WarningSet {
  uint64_t bits = 0;
  void add(WarningCode code) { bits |= uint64_t{1} << code; }
  bool has(WarningCode code) const { return (bits >> code) & 1; }
  WarningSet& operator|=(WarningSet other) {
    bits |= other.bits;
    return *this;
  }
  bool operator==(WarningSet other) const { return bits == other.bits; }
  bool operator!=(WarningSet other) const { return bits != other.bits; }
  /// The codes' words in catalogue order.
  std::vector<std::string> names() const;
};

}  // namespace stepcalc
