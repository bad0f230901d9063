// SPDX-License-Identifier: Apache-2.0
// Request fields the core reads but cannot price yet (ep, dp) are refused with code
// `unsupported` naming the field, never priced as something else; `quantization` names
// every format (whether a GPU measures it is the measured mode's check: test_precisions).
#include <string>

#include "doctest.h"
#include "io/request_json.h"

namespace stepcalc {
namespace {

const std::string kServe = R"("workload": {"input_tokens": 64, "output_tokens": 4, "concurrency": 1})";

Expected<Request> parse_with(const std::string& fields) {
  return parse_request(R"({"model": "qwen3-30b-a3b", "tp": 2, )" + fields + ", " + kServe + "}");
}

TEST_CASE("ep and dp: 1 is the default and priced; above 1 is refused as unsupported, naming the field") {
  auto plain = parse_with(R"("mode": "measured")");
  REQUIRE(plain.ok());
  CHECK(plain->ep == 1);
  CHECK(plain->dp == 1);
  auto ones = parse_with(R"("ep": 1, "dp": 1)");
  REQUIRE(ones.ok());
  for (const char* field : {"ep", "dp"}) {
    auto r = parse_with("\"" + std::string(field) + "\": 2");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "unsupported");
    CHECK(r.error().path == field);
    CHECK(r.error().message.find("cannot be priced yet") != std::string::npos);
    for (const char* bad : {"0", "-1", "1.5", "\"2\""}) {
      auto e = parse_with("\"" + std::string(field) + "\": " + bad);
      REQUIRE_FALSE(e.ok());
      CHECK(e.error().path == field);
      CHECK(e.error().code != "unsupported");
    }
  }
}

TEST_CASE("quantization: every format is a named choice; an unknown one is refused naming the choices") {
  for (const char* q : {"none", "fp8", "nvfp4", "mxfp4", "int4"}) {
    auto r = parse_with(R"("quantization": ")" + std::string(q) + "\"");
    REQUIRE_MESSAGE(r.ok(), q);
  }
  CHECK(parse_with(R"("quantization": "nvfp4")")->quantization == WeightFormat::kNvfp4);
  auto unknown = parse_with(R"("quantization": "int8")");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().code == "invalid_value");
  CHECK(unknown.error().path == "quantization");
  CHECK(unknown.error().message.find("\"nvfp4\"") != std::string::npos);
}

}  // namespace
}  // namespace stepcalc
