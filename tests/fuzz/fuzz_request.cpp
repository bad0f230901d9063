// SPDX-License-Identifier: Apache-2.0
// libFuzzer target over the JSON front door: any bytes go to price_document (both
// modes), price_json, two sweeps, serve_document (under a small work bound, so a
// run stays short) and plan_json (without kernel tables: the plan request's parser, the
// candidates' set-up and every candidate's refusal, on one thread and on two). Beyond "no
// crash, no sanitizer report", it checks that every answer is valid JSON (so valid UTF-8),
// that a priced result has a positive integer step time, that a served one has a finite
// positive TTFT and, for an open loop, a steady_state, that price_json and price_document
// agree, and that a plan is the same document on one thread and on two.
//   build: scripts/test-hardening.sh (clang, -DSTEPCALC_FUZZ=ON)
//   run:   build/fuzz/stepcalc_fuzz -dict=tests/fuzz/request.dict CORPUS_COPY
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/api.h"
#include "simdjson.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_request: %s: %.400s\n", what, detail.c_str());
  std::abort();
}

/// The answer parses as JSON; returns its root element.
simdjson::dom::element parse_answer(simdjson::dom::parser& parser, const std::string& json, const char* what) {
  simdjson::dom::element doc;
  if (parser.parse(json).get(doc) != simdjson::SUCCESS) fail(what, "answer is not valid JSON: " + json);
  return doc;
}

void check_result(simdjson::dom::element result, const std::string& json) {
  if (result["error"].error() == simdjson::SUCCESS) return;  // an element's error slot
  int64_t us = 0;
  if (result["step_time_us"].get_int64().get(us) != simdjson::SUCCESS || us < 1)
    fail("result without a positive step_time_us", json);
}

void check_error(const stepcalc::Error& e, const char* what) {
  if (e.code.empty() || e.message.empty()) fail(what, "error without code or message");
}

void check_served(simdjson::dom::element result, const std::string& json) {
  if (result["error"].error() == simdjson::SUCCESS) return;
  double ttft = 0;
  if (result["ttft_ms"]["mean"].get_double().get(ttft) != simdjson::SUCCESS || !(ttft > 0))
    fail("served result without a positive mean TTFT", json);
  const bool open = result["workload"]["request_rate"].error() == simdjson::SUCCESS;
  const bool steady = result["steady_state"].error() == simdjson::SUCCESS;
  if (steady && !open) fail("a closed loop with a steady_state", json);
}

/// `check` on each element of a document's answer (an array), or on the answer itself.
void check_each(simdjson::dom::element answer, const std::string& json,
                void (*check)(simdjson::dom::element, const std::string&)) {
  simdjson::dom::array items;
  if (answer.get_array().get(items) != simdjson::SUCCESS) return check(answer, json);
  for (simdjson::dom::element item : items) check(item, json);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  simdjson::dom::parser parser;

  // Serving: 20,000 units of work at most (about 14 ms natively), over the document.
  if (auto served = stepcalc::serve_document(text, "", stepcalc::no_kernels(), nullptr, 20000); !served) {
    check_error(served.error(), "serve_document");
  } else {
    check_each(parse_answer(parser, served->json, "serve_document"), served->json, check_served);
  }

  // Planning, with no kernel tables (the measured mode's every simulation is refused at once).
  if (auto planned = stepcalc::plan_json(text, stepcalc::no_kernels()); !planned) {
    check_error(planned.error(), "plan_json");
  } else {
    parse_answer(parser, planned.value(), "plan_json");
    auto threaded = stepcalc::plan_json(text, stepcalc::no_kernels(), nullptr, 2);
    if (!threaded || threaded.value() != planned.value()) fail("plan_json on two threads differs", planned.value());
  }

  for (const char* mode : {"", "corrected"}) {
    auto doc = stepcalc::price_document(text, mode);
    if (!doc) {
      check_error(doc.error(), "price_document");
      continue;
    }
    check_each(parse_answer(parser, doc->json, "price_document"), doc->json, check_result);
  }

  auto single = stepcalc::price_json(text);
  if (!single) {
    check_error(single.error(), "price_json");
    return 0;
  }
  check_result(parse_answer(parser, single.value(), "price_json"), single.value());
  auto again = stepcalc::price_document(text);
  if (!again || again->json != single.value()) fail("price_json and price_document disagree", single.value());

  // A request that prices: sweep it along two axes (the cheap ones), odd values included.
  const std::pair<const char*, std::vector<double>> sweeps[] = {
      {"decode_kv", {0, 1, 4097, 1e9, -1, 0.5}},
      {"tp", {1, 2, 3, 8, 4096, 0}},
  };
  for (const auto& [axis, values] : sweeps) {
    auto swept = stepcalc::sweep_json(text, axis, values);
    if (!swept) {
      check_error(swept.error(), "sweep_json");
      continue;
    }
    parse_answer(parser, swept.value(), "sweep_json");
  }
  return 0;
}
