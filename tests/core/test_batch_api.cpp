// SPDX-License-Identifier: Apache-2.0
// Summary detail and the batch entry points of the front door: a summary result
// object, priced documents at summary detail, price_many, sweep columns and 2-D
// sweeps, each checked against pricing the same points one at a time in full.
#include <cmath>
#include <string>
#include <vector>

#include "api/api.h"
#include "doctest.h"
#include "estimators/reference/step_model.h"
#include "io/request_json.h"
#include "simdjson.h"
#include "test_support.h"

using namespace stepcalc;

namespace {

const std::string kRequest = R"({"id":"r1","model":"llama-3.1-8b-instruct","step":{
    "prefill_requests":[{"progress_index":0,"num_new_prefill_tokens":2048}],
    "decode_requests":[{"progress_index":1000},{"progress_index":3000}]}})";

/// The full result of `json` with `edit` applied to its parsed request.
template <typename Edit>
StepResult full_of(const std::string& json, Edit edit) {
  Request r = test::request_or_fail(json);
  edit(r);
  return test::price_or_fail(r);
}

void check_point(const SummaryColumns& c, size_t i, const StepResult& f) {
  CAPTURE(i);
  CHECK(c.step_time_us[i] == static_cast<double>(f.step_time_us));
  CHECK(c.total_us[i] == f.total_us_before_rounding);
  CHECK(c.prefill_s[i] == f.prefill.time_s());
  CHECK(c.decode_s[i] == f.decode.time_s());
  CHECK(c.overhead_us[i] == f.overhead_us);
  CHECK(static_cast<StepBound>(c.bound[i]) == f.bound);
}

}  // namespace

TEST_CASE("summary detail: a small result object with the full result's headline") {
  const std::string full = price_json(kRequest).value();
  const std::string summary = price_json(kRequest, Detail::kSummary).value();
  CHECK(summary.size() * 10 < full.size());
  simdjson::dom::parser p1, p2;
  simdjson::dom::element f, s;
  REQUIRE(p1.parse(full).get(f) == simdjson::SUCCESS);
  REQUIRE(p2.parse(summary).get(s) == simdjson::SUCCESS);
  CHECK(s["id"].get_string().value_unsafe() == "r1");
  CHECK(s["detail"].get_string().value_unsafe() == "summary");
  CHECK(s["mode"].get_string().value_unsafe() == f["mode"].get_string().value_unsafe());
  CHECK(s["step_time_us"].get_int64().value_unsafe() == f["step_time_us"].get_int64().value_unsafe());
  CHECK(s["bound"].get_string().value_unsafe() == f["bound"].get_string().value_unsafe());
  CHECK(s["total_us"].get_double().value_unsafe() ==
        f["breakdown"]["total_us_before_rounding"].get_double().value_unsafe());
  CHECK(s["prefill_s"].get_double().value_unsafe() == f["phases"]["prefill"]["time_s"].get_double().value_unsafe());
  CHECK(s["decode_s"].get_double().value_unsafe() == f["phases"]["decode"]["time_s"].get_double().value_unsafe());
  std::vector<std::string> codes;
  const simdjson::dom::array summary_codes = s["warning_codes"].get_array().value_unsafe();  // a copy
  for (simdjson::dom::element c : summary_codes) codes.emplace_back(c.get_string().value_unsafe());
  WarningSet full_codes;  // the distinct codes of the full result, in catalogue order
  const simdjson::dom::array warnings = f["warnings"].get_array().value_unsafe();
  for (simdjson::dom::element w : warnings)
    full_codes.add(static_cast<WarningCode>(warning_code_index(w["code"].get_string().value_unsafe())));
  CHECK(codes.size() == 7);
  CHECK(codes == full_codes.names());
}

TEST_CASE("a document priced at summary detail: one summary per element, errors in place") {
  auto doc = price_document("[" + kRequest + R"(,{"model":"nope","step":{}}])", "", Detail::kSummary);
  REQUIRE(doc.ok());
  CHECK(doc->failures == 1);
  CHECK(doc->json.find("\"detail\":\"summary\"") != std::string::npos);
  CHECK(doc->json.find("\"unknown_preset\"") != std::string::npos);
  CHECK(doc->json.find("\"breakdown\"") == std::string::npos);
}

TEST_CASE("price_many: columns equal each request priced in full, in order; bad elements fail in place") {
  const std::string doc =
      "[" + kRequest + R"(,{"model":"llama-2-70b-hf","tp":4,"step":{}},{"model":7,"step":{}})" + "," + kRequest + "]";
  auto many = price_many(doc);
  REQUIRE(many.ok());
  REQUIRE(many->size() == 4);
  check_point(many.value(), 0, full_of(kRequest, [](Request&) {}));
  check_point(many.value(), 1, full_of(R"({"model":"llama-2-70b-hf","tp":4,"step":{}})", [](Request&) {}));
  check_point(many.value(), 3, full_of(kRequest, [](Request&) {}));
  REQUIRE(many->error_index == std::vector<size_t>{2});
  CHECK(many->errors[0].path == "[2].model");
  CHECK(std::isnan(many->step_time_us[2]));
  CHECK(many->bound[2] == SummaryColumns::kFailedPoint);
  auto corrected = price_many(doc, "corrected");
  REQUIRE(corrected.ok());
  check_point(corrected.value(), 0, full_of(kRequest, [](Request& r) { r.mode = Mode::kCorrected; }));
  CHECK(corrected->step_time_us[0] != many->step_time_us[0]);
}

TEST_CASE("sweep columns: each point equals the request edited and priced in full") {
  const std::vector<double> values = {1, 100, 1000, 5000, 1.5, -3};
  auto cols = sweep_columns(kRequest, "decode_kv", values);
  REQUIRE(cols.ok());
  REQUIRE(cols->size() == values.size());
  for (size_t i = 0; i < 4; ++i)
    check_point(cols.value(), i, full_of(kRequest, [&](Request& r) {
                  for (DecodeRequest& d : r.step.decode) d.progress_index = static_cast<int64_t>(values[i]);
                }));
  CHECK(cols->error_index == std::vector<size_t>{4, 5});
  CHECK(cols->errors[1].path == "values[5]");
  CHECK(sweep_columns(kRequest, "width", {1}).error().path == "axis");
}

TEST_CASE("2-D sweep: row-major points, decode_batch applied before the other axis") {
  const std::vector<double> kv = {512, 4096, 16384}, batch = {1, 8};
  auto grid = sweep_2d(kRequest, "decode_kv", kv, "decode_batch", batch);
  REQUIRE(grid.ok());
  REQUIRE(grid->size() == 6);
  for (size_t i = 0; i < batch.size(); ++i)
    for (size_t j = 0; j < kv.size(); ++j)
      check_point(grid.value(), i * kv.size() + j, full_of(kRequest, [&](Request& r) {
                    r.step.decode.assign(static_cast<size_t>(batch[i]), {static_cast<int64_t>(kv[j]), 1});
                  }));
  // The same grid with the axes swapped holds the same points, transposed.
  auto swapped = sweep_2d(kRequest, "decode_batch", batch, "decode_kv", kv);
  REQUIRE(swapped.ok());
  for (size_t i = 0; i < batch.size(); ++i)
    for (size_t j = 0; j < kv.size(); ++j)
      CHECK(swapped->total_us[j * batch.size() + i] == grid->total_us[i * kv.size() + j]);
  CHECK(sweep_2d(kRequest, "tp", {1}, "tp", {2}).error().path == "axis_y");
  CHECK(
      sweep_2d(kRequest, "tp", std::vector<double>(1000, 1), "decode_kv", std::vector<double>(1000, 1)).error().code ==
      "out_of_range");
  auto bad = sweep_2d(kRequest, "tp", {1, 0}, "decode_kv", {7});
  REQUIRE(bad.ok());
  CHECK(bad->error_index == std::vector<size_t>{1});
  CHECK(bad->errors[0].path == "values_x[1]");
}

TEST_CASE("presets list the warning-code catalogue") {
  const std::string p = presets_json();
  for (int c = 0; c < kNumWarningCodes; ++c)
    CHECK(p.find(std::string("\"") + warning_code_name(c) + "\"") != std::string::npos);
}

TEST_CASE("a request's own \"detail\" field: summary or full; the caller's choice wins") {
  const std::string summary_request = R"({"detail":"summary","model":"llama-3.1-8b-instruct","step":{}})";
  CHECK(price_json(summary_request).value().find("\"detail\":\"summary\"") != std::string::npos);
  CHECK(price_json(summary_request, Detail::kFull).value().find("\"breakdown\"") != std::string::npos);
  const std::string full_request = R"({"detail":"full","model":"llama-3.1-8b-instruct","step":{}})";
  CHECK(price_json(full_request).value().find("\"breakdown\"") != std::string::npos);
  CHECK(price_json(full_request, Detail::kSummary).value().find("\"breakdown\"") == std::string::npos);
  auto bad = price_json(R"({"detail":"brief","model":"llama-3.1-8b-instruct","step":{}})");
  REQUIRE(!bad.ok());
  CHECK(bad.error().code == "invalid_value");
  CHECK(bad.error().path == "detail");
  CHECK(price_json(R"({"detail":1,"model":"llama-3.1-8b-instruct","step":{}})").error().path == "detail");
}
