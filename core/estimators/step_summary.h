// SPDX-License-Identifier: Apache-2.0
// The summary detail level: the few numbers a sweep, a simulation or a page's
// background work needs, computed by the same kernel as the full result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/error.h"
#include "estimators/step_result.h"
#include "estimators/warning_codes.h"

namespace stepcalc {

/// A priced step at summary detail. Each field equals its counterpart in the full
/// result: step_time_us, breakdown.total_us_before_rounding, breakdown.step_hardware_s,
/// phases.prefill.time_s and phases.decode.time_s (0 when the phase is absent),
/// overhead_us, bound, and the distinct codes of warnings.
struct StepSummary {
  int64_t step_time_us = 0;
  double total_us = 0;  ///< before rounding and before the 1 us floor
  double step_hardware_s = 0;
  double prefill_s = 0;
  double decode_s = 0;
  double overhead_us = 0;
  StepBound bound = StepBound::kOverhead;
  bool min_step_floor_applied = false;
  WarningSet warnings;
};

/// Summaries of many points as columns, one entry per point in order (sweeps, 2-D
/// sweeps, batches): what plots and tables read without one object per point. A
/// point that failed has NaN numbers, bound kFailedPoint and its error listed.
struct SummaryColumns {
  static constexpr uint8_t kFailedPoint = 255;
  std::vector<double> step_time_us, total_us, prefill_s, decode_s, overhead_us;
  std::vector<uint8_t> bound;       ///< StepBound, or kFailedPoint
  std::vector<uint64_t> warnings;   ///< WarningSet bits
  std::vector<size_t> error_index;  ///< the failed points, ascending
  std::vector<Error> errors;        ///< their errors, parallel to error_index
  size_t size() const { return step_time_us.size(); }
  void reserve(size_t points);
  void add(const StepSummary& point);
  void add_error(Error error);
};

/// The summary of a full result (what the summary level must reproduce exactly).
StepSummary summarize(const StepResult& full);

/// True when every number of `s` is finite (a result that is not is refused).
bool summary_is_finite(const StepSummary& s);

}  // namespace stepcalc
