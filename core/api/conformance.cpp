// SPDX-License-Identifier: Apache-2.0
#include "api/conformance.h"

#include "estimators/reference/step_model.h"
#include "io/request_json.h"

namespace stepcalc {

Expected<ConformanceReport> check_conformance(std::string_view json) {
  auto batch = parse_requests(json);
  if (!batch) return batch.error();
  ConformanceReport report;
  const MfuTables& tables = embedded_h100_tables();
  size_t index = 0;
  for (const Expected<Request>& parsed : batch->requests) {
    const std::string label = "case " + std::to_string(index++);
    if (!parsed) {
      ++report.failed;
      report.mismatches.push_back(label + ": " + parsed.error().path + ": " + parsed.error().message);
      continue;
    }
    const Request& r = parsed.value();
    const std::string name = r.has_id ? r.id : label;
    if (!r.has_expected) {
      ++report.failed;
      report.mismatches.push_back(name + ": no expected.step_time_us");
      continue;
    }
    auto priced = price_step(r, tables, false);
    if (!priced) {
      ++report.failed;
      report.mismatches.push_back(name + ": expected " + std::to_string(r.expected_step_time_us) + ", got error " +
                                  priced.error().code + " at " + priced.error().path + ": " + priced.error().message);
    } else if (priced->step_time_us != r.expected_step_time_us) {
      ++report.failed;
      report.mismatches.push_back(name + ": expected " + std::to_string(r.expected_step_time_us) + ", got " +
                                  std::to_string(priced->step_time_us));
    } else {
      ++report.passed;
    }
  }
  return report;
}

}  // namespace stepcalc
