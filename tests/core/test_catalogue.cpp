// SPDX-License-Identifier: Apache-2.0
// The bad-input catalogue (tests/data/bad-inputs.json) through the core's front
// door, plus the hardening checks that only the core can see (writer flags, limits
// that need many requests, repeated keys inside a batch).
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/api.h"
#include "base/input_limits.h"
#include "doctest.h"
#include "json/json_writer.h"
#include "simdjson.h"

using namespace stepcalc;

namespace {

std::string read_source_file(const std::string& relative) {
  std::ifstream in(std::string(STEPCALC_SOURCE_DIR) + "/" + relative, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << relative);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string from_hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  return out;
}

/// An entry's input: its text, or its {parts: [...]} generator expanded.
std::string expand_input(simdjson::dom::element input) {
  std::string_view text;
  if (input.get_string().get(text) == simdjson::SUCCESS) return std::string(text);
  std::string out;
  simdjson::dom::array parts;
  REQUIRE(input["parts"].get_array().get(parts) == simdjson::SUCCESS);
  for (simdjson::dom::element part : parts) {
    std::string_view s;
    if (part.get_string().get(s) == simdjson::SUCCESS) {
      out += s;
    } else if (part["hex"].get_string().get(s) == simdjson::SUCCESS) {
      out += from_hex(s);
    } else {
      const std::string_view item = part["repeat"].get_string().value_unsafe();
      const int64_t count = part["count"].get_int64().value_unsafe();
      std::string_view sep;
      if (part["sep"].get_string().get(sep) != simdjson::SUCCESS) sep = "";
      out.reserve(out.size() + static_cast<size_t>(count) * (item.size() + sep.size()));
      for (int64_t i = 0; i < count; ++i) {
        if (i > 0) out += sep;
        out += item;
      }
    }
  }
  return out;
}

bool applies_to_core(simdjson::dom::element entry) {
  simdjson::dom::array layers;
  if (entry["layers"].get_array().get(layers) != simdjson::SUCCESS) return true;
  for (simdjson::dom::element layer : layers)
    if (layer.get_string().value_unsafe() == "core") return true;
  return false;
}

/// Every number in a result is finite, and null appears only where the result
/// format allows it (an absent phase), never for a NaN or infinity.
void check_no_null_numbers(simdjson::dom::element e, const std::string& path) {
  if (e.is_null()) {
    const bool absent_phase = path == "phases.prefill" || path == "phases.decode";
    CHECK_MESSAGE(absent_phase, "null at " << path);
    return;
  }
  if (e.is_double()) CHECK_MESSAGE(std::isfinite(e.get_double().value_unsafe()), "non-finite at " << path);
  simdjson::dom::array array;
  if (e.get_array().get(array) == simdjson::SUCCESS) {
    size_t i = 0;
    for (simdjson::dom::element item : array) check_no_null_numbers(item, path + "[" + std::to_string(i++) + "]");
  }
  simdjson::dom::object object;
  if (e.get_object().get(object) == simdjson::SUCCESS)
    for (auto field : object)
      check_no_null_numbers(field.value, path.empty() ? std::string(field.key) : path + "." + std::string(field.key));
}

}  // namespace

TEST_CASE("every catalogue entry gets its documented error from price_json") {
  const std::string text = read_source_file("tests/data/bad-inputs.json");
  simdjson::dom::parser catalogue_parser;
  simdjson::dom::element catalogue;
  REQUIRE(catalogue_parser.parse(text).get(catalogue) == simdjson::SUCCESS);
  size_t checked = 0, errors = 0;
  simdjson::dom::array entries;
  REQUIRE(catalogue["entries"].get_array().get(entries) == simdjson::SUCCESS);
  for (simdjson::dom::element entry : entries) {
    if (!applies_to_core(entry)) continue;
    const std::string name(entry["name"].get_string().value_unsafe());
    CAPTURE(name);
    const std::string input = expand_input(entry["input"].value_unsafe());
    bool serve = false;
    const bool through_serve = entry["serve"].get_bool().get(serve) == simdjson::SUCCESS && serve;
    const Expected<std::string> out = through_serve ? serve_json(input) : price_json(input);
    ++checked;
    if (!entry["code"].is_null()) {
      ++errors;
      REQUIRE_MESSAGE(!out.ok(), name << ": priced, expected an error");
      CHECK(out.error().code == entry["code"].get_string().value_unsafe());
      CHECK(out.error().path == entry["path"].get_string().value_unsafe());
      CHECK(!out.error().message.empty());
      continue;
    }
    REQUIRE_MESSAGE(out.ok(),
                    name << ": " << out.error().code << " at " << out.error().path << ": " << out.error().message);
    simdjson::dom::parser result_parser;
    simdjson::dom::element result;
    REQUIRE(result_parser.parse(out.value()).get(result) == simdjson::SUCCESS);
    if (through_serve)
      CHECK(result["ttft_ms"]["mean"].get_double().value_unsafe() > 0);
    else
      CHECK(result["step_time_us"].get_int64().value_unsafe() >= 1);
    check_no_null_numbers(result, "");
    std::string_view warning;
    if (entry["warning"].get_string().get(warning) == simdjson::SUCCESS) {
      bool found = false;
      simdjson::dom::array warnings;
      REQUIRE(result["warnings"].get_array().get(warnings) == simdjson::SUCCESS);
      for (simdjson::dom::element w : warnings) found = found || w["code"].get_string().value_unsafe() == warning;
      CHECK_MESSAGE(found, name << ": no warning " << warning);
    }
  }
  CHECK(checked >= 150);
  CHECK(errors >= 120);
}

TEST_CASE("price_document gives each catalogue error its own slot in a batch") {
  const std::string good = R"({"model":"llama-3.1-8b-instruct","step":{"decode_requests":[{"progress_index":512}]}})";
  auto out = price_document("[" + good + R"(,{"model":"llama-3.1-8b-instruct","tp":1,"tp":2,"step":{}},)" + good + "]");
  REQUIRE(out.ok());
  CHECK(out->failures == 1);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE(parser.parse(out->json).get(doc) == simdjson::SUCCESS);
  CHECK(doc.at(1)["error"]["code"].get_string().value_unsafe() == "parse_error");
  CHECK(doc.at(1)["error"]["path"].get_string().value_unsafe() == "[1].tp");
  CHECK(doc.at(2)["step_time_us"].get_int64().value_unsafe() == doc.at(0)["step_time_us"].get_int64().value_unsafe());
}

TEST_CASE("a batch is limited by its count and by the size of its results") {
  const std::string small = R"({"model":"llama-3.1-8b-instruct","step":{}})";
  std::string over = "[";
  for (size_t i = 0; i <= limits::kMaxBatch; ++i) over += (i ? "," : "") + small;
  over += "]";
  auto refused = price_document(over);
  REQUIRE(!refused.ok());
  CHECK(refused.error().code == "too_many_requests");
  CHECK(refused.error().path == "");

  // 65,536 distinct KV lengths give one attention lookup each in the result
  // (~9 MiB of JSON per request): eight of them pass the 64 MiB result limit.
  std::string wide = R"({"model":"llama-3.1-8b-instruct","step":{"decode_requests":[)";
  for (int64_t i = 0; i < limits::kMaxRequestsPerStep; ++i)
    wide += (i ? "," : "") + std::string(R"({"progress_index":)") + std::to_string(i) + "}";
  wide += "]}}";
  auto one = price_document(wide);
  REQUIRE(one.ok());
  const size_t per_request = one->json.size();
  REQUIRE(per_request > 1000000);
  std::string many = "[";
  const size_t needed = limits::kMaxResultBytes / per_request + 2;
  for (size_t i = 0; i < needed; ++i) many += (i ? "," : "") + wide;
  many += "]";
  auto too_much = price_document(many);
  REQUIRE(!too_much.ok());
  CHECK(too_much.error().code == "too_large");
  CHECK(too_much.error().path.rfind("[", 0) == 0);
}

TEST_CASE("a sweep is limited by the requests it would price, not only by its points") {
  const std::string request =
      R"({"model":"llama-3.1-8b-instruct","step":{"decode_requests":[{"progress_index":512}]}})";
  std::vector<double> heavy(limits::kMaxSweepRequests / limits::kMaxRequestsPerStep + 1,
                            static_cast<double>(limits::kMaxRequestsPerStep));
  auto refused = sweep_json(request, "decode_batch", heavy);
  REQUIRE(!refused.ok());
  CHECK(refused.error().code == "too_many_requests");
  CHECK(refused.error().path == "values");
  heavy.pop_back();
  CHECK(sweep_json(request, "decode_batch", {1, 2, 64}).ok());
}

TEST_CASE("sweep points that are not whole numbers in range are errors, never NaN in the output") {
  const std::string request =
      R"({"model":"llama-3.1-8b-instruct","step":{"decode_requests":[{"progress_index":512}]}})";
  auto out = sweep_json(request, "decode_kv", {NAN, INFINITY, -1, 0.5, 1e300, 512});
  REQUIRE(out.ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE(parser.parse(out.value()).get(doc) == simdjson::SUCCESS);
  for (size_t i = 0; i < 5; ++i) CHECK(doc.at(i)["error"]["code"].get_string().value_unsafe() == "invalid_value");
  CHECK(doc.at(5)["step_time_us"].get_int64().value_unsafe() > 0);
}

TEST_CASE("the writer flags NaN and infinity, which results then refuse") {
  JsonWriter w;
  w.begin_object().field("a", 1.5);
  CHECK(!w.wrote_non_finite());
  w.field("b", std::nan(""));
  CHECK(w.wrote_non_finite());
  CHECK(w.end_object().str() == R"({"a":1.5,"b":null})");
  JsonWriter inf;
  inf.value(-INFINITY);
  CHECK(inf.wrote_non_finite());
}

TEST_CASE("json_quote always writes valid UTF-8 and utf8_prefix never splits a character") {
  CHECK(json_quote("caf\xc3\xa9") == "\"caf\xc3\xa9\"");
  CHECK(json_quote("a\xff"
                   "b") == "\"a\\ufffdb\"");
  CHECK(json_quote("\xc3") == "\"\\ufffd\"");                        // truncated sequence
  CHECK(json_quote("\xed\xa0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");  // UTF-16 surrogate
  CHECK(json_quote("\xf0\x9f\x98\x80") == "\"\xf0\x9f\x98\x80\"");   // U+1F600
  CHECK(json_quote("<\x01>") == "\"<\\u0001>\"");
  CHECK(utf8_prefix("ab\xc3\xa9", 3) == "ab");
  CHECK(utf8_prefix("ab\xc3\xa9", 4) == "ab\xc3\xa9");
  CHECK(utf8_prefix("\xf0\x9f\x98\x80x", 3) == "");
}

TEST_CASE("an unknown key cut at 64 bytes keeps whole UTF-8 characters in path and message") {
  std::string key = "k";
  for (int i = 0; i < 40; ++i) key += "\xc3\xa9";  // 81 bytes; byte 64 is inside a character
  auto out = price_json("{\"" + key + R"(":1,"model":"llama-3.1-8b-instruct","step":{}})");
  REQUIRE(!out.ok());
  CHECK(out.error().code == "unknown_field");
  CHECK(out.error().path == key.substr(0, 63));
  CHECK(json_quote(out.error().message).find("\\ufffd") == std::string::npos);
}
