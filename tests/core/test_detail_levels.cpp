// SPDX-License-Identifier: Apache-2.0
// Every detail level agrees with `full`: the summary kernel (and the pricer that
// reuses setups and scratch) gives exactly the full result's headline, warning codes
// and errors, over the public conformance cases in every mode and random steps.
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "api/api.h"
#include "api/pricing_session.h"
#include "doctest.h"
#include "estimators/measured.h"
#include "estimators/measured_result.h"
#include "estimators/reference/step_model.h"
#include "io/request_json.h"
#include "kernel_test_support.h"
#include "kernels/kernel_registry.h"
#include "serving/memory.h"
#include "serving/serve.h"
#include "simdjson.h"
#include "test_support.h"

using namespace stepcalc;

namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// The distinct codes of the full result's warnings; fails on a code the catalogue lacks.
WarningSet codes_of(const StepResult& full) {
  WarningSet set;
  for (const Warning& w : full.warnings) {
    const int code = warning_code_index(w.code);
    CHECK_MESSAGE(code >= 0, "warning code not in the catalogue: " << w.code);
    if (code >= 0) set.add(static_cast<WarningCode>(code));
  }
  return set;
}

/// Checks that `summary` (or its error) is exactly what `full` says.
void check_same(const Expected<StepResult>& full, const Expected<StepSummary>& summary, const std::string& what) {
  CAPTURE(what);
  REQUIRE(full.ok() == summary.ok());
  if (!full.ok()) {
    CHECK(full.error().code == summary.error().code);
    CHECK(full.error().path == summary.error().path);
    return;
  }
  const StepResult& f = full.value();
  const StepSummary& s = summary.value();
  CHECK(s.step_time_us == f.step_time_us);
  CHECK(same_bits(s.total_us, f.total_us_before_rounding));
  CHECK(same_bits(s.step_hardware_s, f.step_hardware_s));
  CHECK(same_bits(s.prefill_s, f.prefill.time_s()));
  CHECK(same_bits(s.decode_s, f.decode.time_s()));
  CHECK(same_bits(s.overhead_us, f.overhead_us));
  CHECK(s.bound == f.bound);
  CHECK(s.min_step_floor_applied == f.min_step_floor_applied);
  CHECK(s.warnings.names() == codes_of(f).names());
}

/// `full` with the memory warnings the API adds to a full result (as price_json does).
Expected<StepResult> with_memory(const Request& r, Expected<StepResult> full) {
  if (!full || r.model.spec.num_layers <= 0) return full;
  auto memory = request_memory(r);
  if (!memory) return memory.error();
  for (Warning& w : memory_warnings(memory.value(), step_kv_tokens(r.step))) full.value().warnings.push_back(w);
  return full;
}

/// Checks that `summary` (or its error) is exactly what price_step's full result says.
void check_agrees(const Request& r, const Expected<StepSummary>& summary, const std::string& what) {
  check_same(with_memory(r, price_step(r, embedded_h100_tables())), summary, what);
}

/// The measured mode's full result, computed apart from any pricer.
Expected<StepResult> measured_full(const Request& r, const KernelRegistry& kernels) {
  auto db = kernels.get(r.hardware.gpu, r.kernels, "gpu");
  if (!db) return db.error();
  auto plan = plan_measured(r, db.value());
  if (!plan) return plan.error();
  MeasuredBreakdown breakdown;
  price_measured_full(plan.value(), r.step, &breakdown);
  return with_memory(r, measured_step_result(r, plan.value(), breakdown));
}

/// A registry with every part of a GPU's default kernel set.
KernelRegistry default_kernels(const std::string& gpu) {
  KernelRegistry registry;
  test::add_default_packs(&registry, gpu);
  return registry;
}

std::vector<Request> conformance_requests() {
  const std::string text = test::read_file("tests/data/conformance-cases.json");
  auto batch = parse_requests(text);
  REQUIRE(batch.ok());
  std::vector<Request> out;
  for (const auto& r : batch->requests) {
    REQUIRE(r.ok());
    out.push_back(r.value());
  }
  REQUIRE(out.size() == 160);
  return out;
}

/// Random steps: mixed, repeated and interleaved KV lengths (past the hashing
/// threshold), prefixes, 0- and 1-token prefills, extreme hardware, every switch.
std::vector<Request> random_requests(const std::vector<Request>& models, size_t count) {
  std::mt19937 rng(20261121);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  const int64_t kvs[] = {0, 1, 2, 100, 512, 2048, 8192, 8193, 16384, 131072, 1000000, 1000000000};
  std::vector<Request> out;
  for (size_t i = 0; i < count; ++i) {
    Request r = models[pick(models.size())];
    r.step = Step{};
    r.tp = std::vector<int64_t>{1, 1, 2, 3, 4, 8}[pick(6)];
    const size_t decodes = std::vector<size_t>{0, 1, 2, 7, 8, 9, 64, 300, 700}[pick(9)];
    const int64_t few[] = {static_cast<int64_t>(rng() % 9000), static_cast<int64_t>(rng() % 9000),
                           static_cast<int64_t>(rng() % 60000)};
    const size_t kind = pick(4);
    for (size_t j = 0; j < decodes; ++j)
      r.step.decode.push_back({kind == 0   ? 2048
                               : kind == 1 ? few[pick(3)]
                               : kind == 2 ? kvs[pick(12)]
                                           : static_cast<int64_t>(rng() % 20000),
                               1});
    const size_t prefills = std::vector<size_t>{0, 0, 1, 2, 3, 9}[pick(6)];
    for (size_t j = 0; j < prefills; ++j)
      r.step.prefill.push_back({std::vector<int64_t>{0, 0, 4000, 100000}[pick(4)],
                                std::vector<int64_t>{0, 1, 2, 513, 9000, 70000}[pick(6)]});
    if (pick(4) == 0) {
      r.hardware.tflops_peak = std::vector<double>{989.5, 1e-3, 1e6}[pick(3)];
      r.hardware.bw_peak_tbs = std::vector<double>{3.35, 1e-3, 1e4}[pick(3)];
      r.hardware.bw_efficiency = std::vector<double>{0, 0.5, 1}[pick(3)];
      r.hardware.per_layer_overhead_us = std::vector<double>{0, 100, 1e6}[pick(3)];
    }
    r.mode = pick(2) == 0 ? Mode::kBlisV2 : Mode::kCorrected;
    if (pick(3) == 0) {
      r.corrected.present = true;
      for (auto& s : r.corrected.switch_state) s = static_cast<int8_t>(static_cast<int>(pick(3)) - 1);
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace

TEST_CASE("summary detail equals the full result on every conformance case, in every mode") {
  PricingSession pricer(embedded_h100_tables());  // one pricer for all: setups and scratch reused
  for (Request r : conformance_requests()) {
    for (const char* mode : {"", "blis-v2", "corrected"}) {
      if (*mode != '\0') r.mode = parse_mode(mode).value();
      check_agrees(r, pricer.summary(r), r.id + " " + mode_name(r.mode));
      auto setup = prepare_pricing(r, embedded_h100_tables());
      REQUIRE(setup.ok());
      PricingScratch fresh;
      // The bare kernel: the step's own warnings (the memory warnings are the session's).
      check_same(price_step(r, embedded_h100_tables()), price_summary(setup.value(), r, &fresh),
                 r.id + " fresh " + mode_name(r.mode));
    }
  }
}

TEST_CASE("measured: summary detail equals the full result on every conformance case and random steps") {
  const KernelRegistry h100 = default_kernels("H100");
  const std::string text = test::read_file("tests/data/conformance-cases.json");
  auto batch = parse_requests(text, "measured");
  REQUIRE(batch.ok());
  PricingSession pricer(embedded_h100_tables(), h100);
  size_t priced = 0;
  for (const auto& parsed : batch->requests) {
    REQUIRE(parsed.ok());
    const Request& r = parsed.value();
    pricer.new_model();
    const auto summary = pricer.summary(r);
    priced += summary.ok();
    check_same(measured_full(r, h100), summary, r.id + " measured");
  }
  CHECK(priced >= 150);  // a few cases split heads unevenly: their errors must agree too
  // Random steps over the conformance models, one pricer: plans reused across steps and TPs.
  std::vector<Request> models;
  for (const auto& parsed : batch->requests) models.push_back(parsed.value());
  for (Request r : random_requests(models, 120)) {
    r.mode = Mode::kMeasured;
    r.hardware = models.front().hardware;  // the measured mode reads its GPU's tables, not these constants
    pricer.new_model();
    check_same(measured_full(r, h100), pricer.summary(r), r.id + " measured random tp " + std::to_string(r.tp));
  }
}

TEST_CASE("every mode through the JSON API: the summary's fields are the full result's, bit for bit") {
  const KernelRegistry h100 = default_kernels("H100");
  const std::string text = test::read_file("tests/data/conformance-cases.json");
  for (const char* mode : {"blis-v2", "corrected", "measured"}) {
    auto full = price_document(text, mode, h100, Detail::kFull);
    auto summary = price_document(text, mode, h100, Detail::kSummary);
    REQUIRE(full.ok());
    REQUIRE(summary.ok());
    CHECK(full->failures == summary->failures);
    simdjson::dom::parser pf, ps;
    simdjson::dom::array fa, sa;
    REQUIRE(pf.parse(full->json).get(fa) == simdjson::SUCCESS);
    REQUIRE(ps.parse(summary->json).get(sa) == simdjson::SUCCESS);
    REQUIRE(fa.size() == 160);
    REQUIRE(sa.size() == 160);
    for (size_t i = 0; i < 160; ++i) {
      simdjson::dom::element f = fa.at(i).value_unsafe(), s = sa.at(i).value_unsafe();
      CAPTURE(mode);
      CAPTURE(i);
      if (f["error"].is_object()) {
        CHECK(std::string(f["error"]["code"].get_string().value_unsafe()) ==
              std::string(s["error"]["code"].get_string().value_unsafe()));
        continue;
      }
      CHECK(f["step_time_us"].get_int64().value_unsafe() == s["step_time_us"].get_int64().value_unsafe());
      CHECK(same_bits(f["breakdown"]["total_us_before_rounding"].get_double().value_unsafe(),
                      s["total_us"].get_double().value_unsafe()));
      CHECK(std::string(f["bound"].get_string().value_unsafe()) == std::string(s["bound"].get_string().value_unsafe()));
      CHECK(same_bits(f["overhead_us"].get_double().value_unsafe(), s["overhead_us"].get_double().value_unsafe()));
      std::vector<std::string> codes, listed;
      simdjson::dom::array warnings, listed_codes;
      REQUIRE(f["warnings"].get(warnings) == simdjson::SUCCESS);
      REQUIRE(s["warning_codes"].get(listed_codes) == simdjson::SUCCESS);
      for (simdjson::dom::element w : warnings) {
        const std::string code(w["code"].get_string().value_unsafe());
        if (std::find(codes.begin(), codes.end(), code) == codes.end()) codes.push_back(code);
      }
      for (simdjson::dom::element c : listed_codes) listed.emplace_back(c.get_string().value_unsafe());
      std::sort(codes.begin(), codes.end());
      std::sort(listed.begin(), listed.end());
      CHECK(codes == listed);
    }
  }
}

TEST_CASE("summary detail equals the full result on random steps, with warm and cold scratch") {
  const std::vector<Request> requests = random_requests(conformance_requests(), 400);
  PricingSession pricer(embedded_h100_tables());
  size_t priced = 0;
  for (const Request& r : requests) {
    const auto summary = pricer.summary(r);
    priced += summary.ok();
    check_agrees(r, summary, r.id + " random " + mode_name(r.mode));
  }
  CHECK(priced > 300);  // the corpus mostly prices; the rest checks that errors agree
}

TEST_CASE("the full result through a pricer equals price_step, byte for byte") {
  PricingSession pricer(embedded_h100_tables());
  for (const Request& r : random_requests(conformance_requests(), 60)) {
    const auto a = pricer.full(r);
    const auto b = price_step(r, embedded_h100_tables());
    REQUIRE(a.ok() == b.ok());
    if (!a.ok()) continue;
    CHECK(a->step_time_us == b->step_time_us);
    CHECK(same_bits(a->decode.bytes.kv_read, b->decode.bytes.kv_read));
    CHECK(a->decode.attn_groups.size() == b->decode.attn_groups.size());
    CHECK(a->warnings.size() == b->warnings.size());
  }
}

TEST_CASE("decode requests are grouped by KV length: counts per distinct length, sorted") {
  Request r = test::request_or_fail(R"({"model":"llama-3.1-8b-instruct","step":{}})");
  const int64_t lengths[] = {900, 100, 900, 5000, 100, 100, 7, 7, 64000, 3, 1, 2, 900, 44, 45, 46, 47};
  for (int64_t kv : lengths) r.step.decode.push_back({kv, 1});
  const StepResult full = test::price_or_fail(r);
  REQUIRE(full.decode.attn_groups.size() == 12);
  int64_t total = 0;
  for (size_t i = 0; i < full.decode.attn_groups.size(); ++i) {
    const DecodeAttnGroup& g = full.decode.attn_groups[i];
    if (i > 0) CHECK(full.decode.attn_groups[i - 1].kv_len < g.kv_len);
    int64_t expected = 0;
    for (int64_t kv : lengths) expected += kv == g.kv_len;
    CHECK(g.count == expected);
    total += g.count;
  }
  CHECK(total == 17);
}

TEST_CASE("the summary moves with the step: a longer KV costs more") {
  PricingSession pricer(embedded_h100_tables());
  Request r = test::request_or_fail(R"({"model":"llama-3.1-8b-instruct","step":{}})");
  r.step.decode.assign(64, {1024, 1});
  const auto short_kv = pricer.summary(r);
  r.step.decode.assign(64, {16384, 1});
  const auto long_kv = pricer.summary(r);
  REQUIRE(short_kv.ok());
  REQUIRE(long_kv.ok());
  CHECK(long_kv->decode_s > short_kv->decode_s);
  CHECK(long_kv->step_time_us > short_kv->step_time_us);
}
