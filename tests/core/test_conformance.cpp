// SPDX-License-Identifier: Apache-2.0
// The arbiter: the reference's conformance cases, integer step time AND every
// breakdown number bit-identical.
#include <string>
#include <vector>

#include "api/api.h"
#include "api/conformance.h"
#include "doctest.h"
#include "simdjson.h"
#include "test_support.h"

using namespace stepcalc;

TEST_CASE("every public conformance case gives the reference's integer step time") {
  auto report = check_conformance(test::read_file("tests/data/conformance-cases.json"));
  REQUIRE(report.ok());
  for (const std::string& line : report->mismatches) FAIL_CHECK(line);
  CHECK(report->passed == 160);
  CHECK(report->failed == 0);
}

TEST_CASE("a wrong expectation is reported as a mismatch") {
  auto report = check_conformance(R"([{"id":"x","model":"llama-3.1-8b-instruct","step":{},
      "expected":{"step_time_us":3201}}])");
  REQUIRE(report.ok());
  CHECK(report->failed == 1);
  CHECK(report->mismatches.at(0) == "x: expected 3201, got 3200");
}

namespace {

std::vector<simdjson::dom::element> items(simdjson::dom::element array) {
  std::vector<simdjson::dom::element> out;
  const simdjson::dom::array list = array.get_array().value_unsafe();  // a copy: the result is a temporary
  for (simdjson::dom::element e : list) out.push_back(e);
  return out;
}

// Compares every field of `want` (the reference's breakdown) with `got`, exactly.
void check_same(simdjson::dom::element want, simdjson::dom::element got, const std::string& path) {
  using simdjson::dom::element_type;
  if (want.is_object()) {
    const simdjson::dom::object fields = want.get_object().value_unsafe();
    for (auto field : fields) {
      simdjson::dom::element g;
      if (got.at_key(field.key).get(g) != simdjson::SUCCESS) {
        FAIL_CHECK(path << "." << field.key << " missing");
        continue;
      }
      check_same(field.value, g, path + "." + std::string(field.key));
    }
  } else if (want.is_array()) {
    REQUIRE(got.is_array());
    const std::vector<simdjson::dom::element> w = items(want), g = items(got);
    REQUIRE(w.size() == g.size());
    for (size_t i = 0; i < w.size(); ++i) check_same(w[i], g[i], path + "[" + std::to_string(i) + "]");
  } else if (want.is_number()) {
    if (want.get_double().value_unsafe() != got.get_double().value_unsafe())
      FAIL_CHECK(path << ": want " << want.get_double().value_unsafe() << " got " << got.get_double().value_unsafe());
  } else if (want.is_string()) {
    CHECK_MESSAGE(want.get_string().value_unsafe() == got.get_string().value_unsafe(), path);
  } else if (want.is_bool()) {
    CHECK_MESSAGE(want.get_bool().value_unsafe() == got.get_bool().value_unsafe(), path);
  }
}

}  // namespace

TEST_CASE("every breakdown number of every case equals the reference's, bit for bit") {
  const std::string cases = test::read_file("tests/data/conformance-cases.json");
  auto priced = price_document(cases);
  REQUIRE(priced.ok());
  REQUIRE(priced->failures == 0);
  simdjson::dom::parser want_parser, got_parser;
  simdjson::dom::element want, got;
  REQUIRE(want_parser.parse(cases).get(want) == simdjson::SUCCESS);
  REQUIRE(got_parser.parse(priced->json).get(got) == simdjson::SUCCESS);
  const std::vector<simdjson::dom::element> cases_in = items(want), results = items(got);
  REQUIRE(cases_in.size() == results.size());
  for (size_t i = 0; i < cases_in.size(); ++i) {
    simdjson::dom::element expected = cases_in[i]["expected"].value_unsafe();
    simdjson::dom::element result = results[i];
    const std::string id(cases_in[i]["id"].get_string().value_unsafe());
    for (const char* key : {"attn_config_model", "attn_config_used", "decode_mfu_tp_used", "breakdown"})
      check_same(expected[key].value_unsafe(), result[key].value_unsafe(), id + "." + key);
  }
}
