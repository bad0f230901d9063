// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the core tests: small synthetic tables, file reading.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "doctest.h"
#include "estimators/reference/step_model.h"
#include "io/request_json.h"
#include "kernels/reference/mfu_tables.h"

namespace stepcalc::test {

inline std::string read_file(const std::string& relative) {
  std::ifstream in(std::string(STEPCALC_SOURCE_DIR) + "/" + relative, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << relative);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Tables built from CSV texts: {{"gemm/t/data", "m,k,n,latency_us,mfu\n..."}, ...}.
inline MfuTables tables_from_csv(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<RawTable> raw;
  for (const auto& [name, text] : files) {
    auto t = parse_csv_table(name, text);
    REQUIRE_MESSAGE(t.ok(), t.error().message);
    raw.push_back(t.value());
  }
  auto built = MfuTables::build(raw, "t");
  REQUIRE_MESSAGE(built.ok(), built.error().message);
  return built.value();
}

/// The request `json` denotes; fails the test (naming the field) when it is refused.
inline Request request_or_fail(const std::string& json) {
  auto r = parse_request(json);
  REQUIRE_MESSAGE(r.ok(), r.error().path << ": " << r.error().message);
  return r.value();
}

/// `r` priced against the embedded H100 tables; fails the test when it is refused.
inline StepResult price_or_fail(const Request& r) {
  auto result = price_step(r, embedded_h100_tables());
  REQUIRE_MESSAGE(result.ok(), result.error().path << ": " << result.error().message);
  return result.value();
}

}  // namespace stepcalc::test
