// SPDX-License-Identifier: Apache-2.0
// Checking the reference's conformance cases: same integer step time, every case.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace stepcalc {

struct ConformanceReport {
  int passed = 0;
  int failed = 0;
  std::vector<std::string> mismatches;  ///< one line each: "id: expected X, got Y"
};

/// Prices every case of a conformance file (an array of requests that carry
/// `expected.step_time_us`) in its own mode; a case without an expectation or that
/// fails to price counts as failed.
Expected<ConformanceReport> check_conformance(std::string_view json);

}  // namespace stepcalc
