// SPDX-License-Identifier: Apache-2.0
// The JSON front door: result documents, batches, sweeps, presets.
#include <cstdlib>
#include <string>
#include <vector>

#include "api/api.h"
#include "doctest.h"
#include "json/json_writer.h"
#include "kernel_test_support.h"
#include "simdjson.h"

using namespace stepcalc;

namespace {

const std::string kRequest = R"({"model":"llama-3.1-8b-instruct","step":{
    "prefill_requests":[{"progress_index":0,"num_new_prefill_tokens":2048}],
    "decode_requests":[{"progress_index":1000},{"progress_index":3000}]}})";

int64_t step_time(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE(parser.parse(json).get(doc) == simdjson::SUCCESS);
  int64_t us = -1;
  REQUIRE(doc["step_time_us"].get_int64().get(us) == simdjson::SUCCESS);
  return us;
}

std::vector<simdjson::dom::element> items(simdjson::dom::element array) {
  std::vector<simdjson::dom::element> out;
  const simdjson::dom::array list = array.get_array().value_unsafe();  // a copy: the result is a temporary
  for (simdjson::dom::element e : list) out.push_back(e);
  return out;
}

}  // namespace

TEST_CASE("format_double writes the shortest text that reads back exactly") {
  CHECK(format_double(0.1) == "0.1");
  CHECK(format_double(0.1 + 0.2) == "0.30000000000000004");
  CHECK(format_double(3200) == "3200");
  CHECK(format_double(1e-9) == "1e-09");
  for (double v : {1.0000000000000002e-9, 0.1 * 3, 1.0 / 3, 6.02214076e23, 5e-324})
    CHECK(std::strtod(format_double(v).c_str(), nullptr) == v);
  CHECK(format_double(-2.5) == "-2.5");
  CHECK(format_double(1.0 / 0.0) == "null");
  CHECK(json_quote("a\"b\\\n\x01") == "\"a\\\"b\\\\\\n\\u0001\"");
}

TEST_CASE("price_json gives a complete result document") {
  auto out = price_json(kRequest);
  REQUIRE(out.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE(parser.parse(out.value()).get(doc) == simdjson::SUCCESS);
  CHECK(doc["step_time_us"].get_int64().value_unsafe() == 55011);
  CHECK(std::string(doc["bound"].get_string().value_unsafe()) == "prefill");
  CHECK(doc["tokens"]["total"].get_int64().value_unsafe() == 2050);
  CHECK(doc["phases"]["prefill"]["buckets"].get_array().value_unsafe().size() == 1);
  CHECK(doc["phases"]["decode"]["gemms"].get_array().value_unsafe().size() == 7);
  CHECK(doc["breakdown"]["overhead_us"].get_double().value_unsafe() == 3200);
  CHECK(doc["model"]["num_key_value_heads"].get_int64().value_unsafe() == 8);
  CHECK(doc["warnings"].get_array().value_unsafe().size() > 0);
}

TEST_CASE("price_document keeps order and puts each error in its slot") {
  auto out = price_document("[" + kRequest + R"(,{"model":"nope","step":{}},)" + kRequest + "]");
  REQUIRE(out.ok());
  CHECK(out->failures == 1);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE(parser.parse(out->json).get(doc) == simdjson::SUCCESS);
  CHECK(items(doc)[0]["step_time_us"].get_int64().value_unsafe() == 55011);
  CHECK(std::string(items(doc)[1]["error"]["code"].get_string().value_unsafe()) == "unknown_preset");
  CHECK(std::string(items(doc)[1]["error"]["path"].get_string().value_unsafe()) == "[1].model");
  CHECK(items(doc)[2]["step_time_us"].get_int64().value_unsafe() == 55011);
}

TEST_CASE("mode override applies to every element") {
  auto out = price_document(kRequest, "no-such-mode");
  REQUIRE(out.ok());
  CHECK(out->failures == 1);
}

TEST_CASE("sweep: one point per value, the current step reproduced exactly") {
  auto out = sweep_json(kRequest, "prefill_tokens", {1024, 2048, 4096});
  REQUIRE(out.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE(parser.parse(out.value()).get(doc) == simdjson::SUCCESS);
  REQUIRE(doc.get_array().value_unsafe().size() == 3);
  CHECK(items(doc)[1]["step_time_us"].get_int64().value_unsafe() == step_time(price_json(kRequest).value()));
  CHECK(items(doc)[0]["step_time_us"].get_int64().value_unsafe() <
        items(doc)[2]["step_time_us"].get_int64().value_unsafe());
}

TEST_CASE("sweep axes and their errors") {
  for (const char* axis : {"prefill_tokens", "decode_batch", "decode_kv", "tp"}) {
    auto out = sweep_json(kRequest, axis, {1, 2, 4});
    CHECK_MESSAGE(out.ok(), axis);
  }
  CHECK(sweep_json(kRequest, "width", {1}).error().path == "axis");
  auto bad = sweep_json(kRequest, "tp", {0, 1.5});
  REQUIRE(bad.ok());
  CHECK(bad.value().find("\"path\":\"values[0]\"") != std::string::npos);
  CHECK(bad.value().find("\"path\":\"values[1]\"") != std::string::npos);
  auto batch = sweep_json(R"({"model":"llama-3.1-8b-instruct","step":{}})", "decode_batch", {64});
  REQUIRE(batch.ok());
  CHECK(batch.value().find("\"step_time_us\"") != std::string::npos);
}

TEST_CASE("presets list models, GPUs and modes") {
  const std::string p = presets_json();
  CHECK(p.find("\"llama-3.1-8b-instruct\"") != std::string::npos);
  CHECK(p.find("\"H100\"") != std::string::npos);
  CHECK(p.find("\"blis-v2\"") != std::string::npos);
}

TEST_CASE("price_document refuses a mode override longer than a string may be, as a request's mode") {
  auto long_mode = price_document(kRequest, std::string(1025, 'm'));
  REQUIRE_FALSE(long_mode.ok());
  CHECK(long_mode.error().code == "out_of_range");
  CHECK(long_mode.error().path == "mode");
  CHECK(price_document(kRequest, std::string(1024, 'm')).ok());  // then unknown_mode per element
}

namespace stepcalc {

TEST_CASE("quantization in the reference modes: priced from bytes_per_param, and said so (full and summary)") {
  for (const char* mode : {"blis-v2", "corrected"}) {
    for (const char* field : {R"("quantization":"fp8")", R"("kv_cache_dtype":"fp8")"}) {
      const std::string request = std::string(R"({"model":"llama-3.1-8b-instruct","mode":")") + mode + R"(",)" + field +
                                  R"(,"step":{"decode_requests":[{"progress_index":500}]}})";
      const std::string plain = std::string(R"({"model":"llama-3.1-8b-instruct","mode":")") + mode +
                                R"(","step":{"decode_requests":[{"progress_index":500}]}})";
      auto full = price_json(request);
      REQUIRE(full.ok());
      CHECK(full->find("\"quantization_not_priced\"") != std::string::npos);
      auto summary = price_json(request, no_kernels(), Detail::kSummary);
      REQUIRE(summary.ok());
      CHECK(summary->find("\"quantization_not_priced\"") != std::string::npos);
      // The same step without it: no warning, and the same time.
      auto without = price_json(plain, no_kernels(), Detail::kSummary);
      REQUIRE(without.ok());
      CHECK(without->find("quantization_not_priced") == std::string::npos);
      const auto time_of = [](const std::string& json) { return json.substr(json.find("\"step_time_us\"")); };
      CHECK(time_of(*summary).substr(0, 25) == time_of(*without).substr(0, 25));
    }
  }
}

}  // namespace stepcalc

namespace stepcalc {

TEST_CASE("beyond_context: a step longer than the model's context is said, in full and summary, every mode") {
  for (const char* mode : {"blis-v2", "corrected", "measured"}) {
    CAPTURE(mode);
    KernelRegistry kernels;
    test::add_default_packs(&kernels, "H100");
    const auto priced = [&](const std::string& step, Detail detail) {
      auto r = price_json(std::string(R"({"model":"llama-2-7b-hf","mode":")") + mode + R"(","step":)" + step + "}",
                          kernels, detail);
      REQUIRE_MESSAGE(r.ok(), r.error().message);
      return r.value();
    };
    for (const std::string step : {R"({"decode_requests":[{"progress_index":4096}]})",
                                   R"({"prefill_requests":[{"progress_index":4000,"num_new_prefill_tokens":97}]})"}) {
      CHECK(priced(step, Detail::kFull).find("\"beyond_context\"") != std::string::npos);
      CHECK(priced(step, Detail::kSummary).find("\"beyond_context\"") != std::string::npos);
    }
    const std::string within = R"({"decode_requests":[{"progress_index":4095}]})";
    CHECK(priced(within, Detail::kFull).find("beyond_context") == std::string::npos);
    CHECK(priced(within, Detail::kSummary).find("beyond_context") == std::string::npos);
  }
}

}  // namespace stepcalc
