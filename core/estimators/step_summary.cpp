// SPDX-License-Identifier: Apache-2.0
#include "estimators/step_summary.h"

#include <cmath>
#include <limits>
#include <utility>

#include "base/enum_table.h"

namespace stepcalc {

StepSummary summarize(const StepResult& full) {
  StepSummary s;
  s.step_time_us = full.step_time_us;
  s.total_us = full.total_us_before_rounding;
  s.step_hardware_s = full.step_hardware_s;
  s.prefill_s = full.prefill.time_s();
  s.decode_s = full.decode.time_s();
  s.overhead_us = full.overhead_us;
  s.bound = full.bound;
  s.min_step_floor_applied = full.min_step_floor_applied;
  for (const Warning& w : full.warnings) {
    const int code = warning_code_index(w.code);
    if (code >= 0) s.warnings.add(static_cast<WarningCode>(code));
  }
  return s;
}

void SummaryColumns::reserve(size_t points) {
  for (std::vector<double>* column : {&step_time_us, &total_us, &prefill_s, &decode_s, &overhead_us})
    column->reserve(points);
  bound.reserve(points);
  warnings.reserve(points);
}

void SummaryColumns::add(const StepSummary& point) {
  step_time_us.push_back(static_cast<double>(point.step_time_us));
  total_us.push_back(point.total_us);
  prefill_s.push_back(point.prefill_s);
  decode_s.push_back(point.decode_s);
  overhead_us.push_back(point.overhead_us);
  bound.push_back(static_cast<uint8_t>(point.bound));
  warnings.push_back(point.warnings.bits);
}

void SummaryColumns::add_error(Error error) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  error_index.push_back(size());
  errors.push_back(std::move(error));
  for (std::vector<double>* column : {&step_time_us, &total_us, &prefill_s, &decode_s, &overhead_us})
    column->push_back(nan);
  bound.push_back(kFailedPoint);
  warnings.push_back(0);
}

bool summary_is_finite(const StepSummary& s) {
  return std::isfinite(s.total_us) && std::isfinite(s.step_hardware_s) && std::isfinite(s.prefill_s) &&
         std::isfinite(s.decode_s) && std::isfinite(s.overhead_us);
}

}  // namespace stepcalc
