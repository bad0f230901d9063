// SPDX-License-Identifier: Apache-2.0
// The step model's own rules: bucketing, phases, overhead, the 1 us floor, rounding,
// validation, and the warnings that accompany approximations.
#include <cstring>
#include <string>

#include "doctest.h"
#include "estimators/reference/step_model.h"
#include "io/request_json.h"
#include "test_support.h"

using namespace stepcalc;

namespace {

Request request(const std::string& step, const std::string& extra = "") {
  return test::request_or_fail(R"({"model":"llama-3.1-8b-instruct",)" + extra + R"("step":)" + step + "}");
}

StepResult price(const Request& r) { return test::price_or_fail(r); }

std::string prefill(long p, long n) {
  return R"({"prefill_requests":[{"progress_index":)" + std::to_string(p) + R"(,"num_new_prefill_tokens":)" +
         std::to_string(n) + "}]}";
}

bool has_warning(const StepResult& r, const std::string& code) {
  for (const Warning& w : r.warnings)
    if (w.code == code) return true;
  return false;
}

}  // namespace

TEST_CASE("round half away from zero") {
  CHECK(round_half_away(2.5) == 3);
  CHECK(round_half_away(3.5) == 4);
  CHECK(round_half_away(2.4999999) == 2);
  CHECK(round_half_away(3200.5) == 3201);
  CHECK(round_half_away(-2.5) == -3);
}

TEST_CASE("prefill buckets: 512 up to 65536 by doubling, keyed on prefix + new tokens") {
  struct Case {
    long p, n, bucket;
  };
  for (Case c : {Case{0, 1, 512}, Case{0, 512, 512}, Case{0, 513, 1024}, Case{0, 1025, 2048}, Case{1000, 24, 1024},
                 Case{0, 65536, 65536}, Case{0, 70000, 65536}, Case{100000, 2048, 65536}}) {
    CAPTURE(c.p);
    CAPTURE(c.n);
    const StepResult r = price(request(prefill(c.p, c.n)));
    REQUIRE(r.prefill.buckets.size() == 1);
    CHECK(r.prefill.buckets[0].bucket == c.bucket);
  }
}

TEST_CASE("prefill buckets are visited in ascending order with input order kept inside") {
  const StepResult r = price(request(R"({"prefill_requests":[
      {"progress_index":0,"num_new_prefill_tokens":3000},
      {"progress_index":0,"num_new_prefill_tokens":100},
      {"progress_index":0,"num_new_prefill_tokens":200}]})"));
  REQUIRE(r.prefill.buckets.size() == 2);
  CHECK(r.prefill.buckets[0].bucket == 512);
  CHECK(r.prefill.buckets[0].total_new_tokens == 300);
  CHECK(r.prefill.buckets[1].bucket == 4096);
  CHECK(r.prefill.new_tokens == 3300);
}

TEST_CASE("an empty step costs the CPU overhead only: perLayerOverhead * L / tp") {
  StepResult r = price(request(R"({"prefill_requests":[],"decode_requests":[]})"));
  CHECK(r.step_time_us == 3200);
  CHECK(r.bound == StepBound::kOverhead);
  r = price(request(R"({})", R"("tp":2,)"));
  CHECK(r.step_time_us == 1600);
}

TEST_CASE("a step under 1 us is priced at 1 us") {
  const StepResult r = price(request(R"({})", R"("hardware":{"perLayerOverhead":0},)"));
  CHECK(r.step_time_us == 1);
  CHECK(r.min_step_floor_applied);
  CHECK(r.total_us_before_rounding == 0);
  CHECK(has_warning(r, "min_step_floor"));
}

TEST_CASE("a mixed step costs the slower phase (full overlap)") {
  const std::string both = R"({"prefill_requests":[{"progress_index":0,"num_new_prefill_tokens":4096}],
                               "decode_requests":[{"progress_index":1000}]})";
  const StepResult r = price(request(both));
  CHECK(r.prefill.present);
  CHECK(r.decode.present);
  CHECK(r.bound == StepBound::kPrefill);
  CHECK(r.step_hardware_s == r.prefill.time_s());
  CHECK(r.step_hardware_s > r.decode.time_s());
  CHECK(has_warning(r, "mixed_batch_overlap"));
}

TEST_CASE("decode: phase is memory bound at small batch, weights dominate the bytes") {
  const StepResult r = price(request(R"({"decode_requests":[{"progress_index":1000}]})"));
  CHECK(r.decode.batch_size == 1);
  CHECK(r.decode.memory_s > 0);
  CHECK(r.decode.bytes.weights > r.decode.bytes.kv_read);
  CHECK(r.decode_mfu_tp_used == 1);
  REQUIRE(r.decode.attn_groups.size() == 1);
  CHECK(r.decode.attn_groups[0].kv_len == 1000);
}

TEST_CASE("decode lookups are grouped by KV length with counts") {
  const StepResult r =
      price(request(R"({"decode_requests":[{"progress_index":5000},{"progress_index":100},{"progress_index":5000}]})"));
  REQUIRE(r.decode.attn_groups.size() == 2);
  CHECK(r.decode.attn_groups[0].kv_len == 100);
  CHECK(r.decode.attn_groups[1].count == 2);
}

TEST_CASE("GEMM breakdown: seven kinds in order, per-kind times add up to the phase GEMM time") {
  const StepResult r = price(request(prefill(0, 2048)));
  const GemmSet& g = r.prefill.buckets.at(0).gemms;
  double sum = 0;
  for (int k = 0; k < kNumGemmKinds; ++k) sum += g.terms[k].time_s;
  CHECK(sum == doctest::Approx(g.total_s).epsilon(1e-12));
  CHECK(std::string(gemm_kind_name(kDown)) == "down");
  CHECK(g.terms[kDown].k == 14336);
  CHECK(g.terms[kK].n == 1024);  // 8 KV heads x 128
}

TEST_CASE("shapes the reference still prices come with warnings") {
  StepResult r = price(request(prefill(0, 100), R"("tp":3,)"));
  CHECK(has_warning(r, "tp_does_not_divide_heads"));
  CHECK(r.decode_mfu_tp_used == 2);
  r = price(request(R"({"decode_requests":[{"progress_index":10}]})", R"("tp":16,)"));
  CHECK(has_warning(r, "tp_above_kv_heads"));
  CHECK(has_warning(r, "decode_tp_nearest"));
  r = price(request(R"({"decode_requests":[{"progress_index":10}]})", R"("tp":12,)"));
  CHECK(has_warning(r, "tp_does_not_divide_kv_heads"));  // 8 KV heads: neither splits nor replicates
  CHECK(!has_warning(r, "tp_above_kv_heads"));
  r = price(request(R"({"decode_requests":[{"progress_index":10}]})", R"("tp":64,)"));
  CHECK(has_warning(r, "tp_does_not_divide_heads"));  // 32 heads
  CHECK(!has_warning(r, "tp_does_not_divide_kv_heads"));
  r = price(request(R"({"decode_requests":[{"progress_index":10}]})", R"("tp":8,)"));
  CHECK(!has_warning(r, "tp_does_not_divide_heads"));
  CHECK(!has_warning(r, "tp_does_not_divide_kv_heads"));
  CHECK(!has_warning(r, "tp_above_kv_heads"));
  r = price(request(prefill(0, 1)));
  CHECK(has_warning(r, "prefill_one_token"));
  CHECK(has_warning(r, "gemm_m_below_table"));
  CHECK(has_warning(r, "gemm_shape_not_measured"));
}

TEST_CASE("validation refuses what the reference refuses, naming the field") {
  Request r = request(prefill(0, 10));
  r.model.num_heads = 0;
  CHECK(price_step(r, embedded_h100_tables()).error().path == "model.num_attention_heads");
  r = request(prefill(0, 10));
  r.hardware.bw_efficiency = 1.5;
  CHECK(price_step(r, embedded_h100_tables()).error().path == "hardware.bwEfficiencyFactor");
  r = request(prefill(0, 10));
  r.hardware.tflops_peak = 0;
  CHECK(price_step(r, embedded_h100_tables()).error().path == "hardware.TFlopsPeak");
  r = request(prefill(0, 10));
  r.tp = 0;
  CHECK(price_step(r, embedded_h100_tables()).error().path == "tp");
}

TEST_CASE("bandwidth efficiency 0 means none: the raw peak bandwidth is used") {
  Request a = request(R"({"decode_requests":[{"progress_index":10}]})");
  Request b = a;
  b.hardware.bw_efficiency = 0;
  const double ratio = price(a).decode.memory_s / price(b).decode.memory_s;
  CHECK(ratio == doctest::Approx(1 / 0.82));
}

TEST_CASE("decode terms kept across a simulation's steps price every step to the bit") {
  // A simulation's scratch keeps each KV length's batch-independent terms and, per step, the
  // table along the batch (DecodeKvCache). Steps of changing batch sizes and KV lengths
  // (inside, below and beyond the table, on and between its points, where corners are
  // missing and the MFU falls back) for two models priced in turn through one scratch must
  // match a fresh scratch that keeps nothing: times to the bit and the same warnings, in
  // blis-v2, corrected and blis-v2 with only the latency or harmonic-mean switch.
  const auto bits = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  const char* const kModes[] = {R"("mode":"blis-v2",)", R"("mode":"corrected",)",
                                R"("mode":"blis-v2","corrected":{"switches":{"decode_attention_latency":true}},)",
                                R"("mode":"blis-v2","corrected":{"switches":{"decode_harmonic_mean":true}},)"};
  for (const char* mode : kModes) {
    CAPTURE(mode);
    const Request small = test::request_or_fail(std::string(R"({"model":"llama-3.1-8b-instruct",)") + mode +
                                                R"("step":{"decode_requests":[{"progress_index":1}]}})");
    const Request large = test::request_or_fail(std::string(R"({"model":"llama-2-70b-hf","tp":4,)") + mode +
                                                R"("step":{"decode_requests":[{"progress_index":1}]}})");
    auto small_setup = prepare_pricing(small, embedded_h100_tables());
    auto large_setup = prepare_pricing(large, embedded_h100_tables());
    REQUIRE(small_setup.ok());
    REQUIRE(large_setup.ok());
    PricingScratch kept;
    kept.remember_decode_terms = true;
    uint64_t state = 12345;
    const auto next = [&state](uint64_t n) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return (state >> 33) % n;
    };
    int steps = 0;
    WarningSet seen;
    for (int i = 0; i < 160; ++i) {
      const bool use_large = i % 5 == 4;
      Request r = use_large ? large : small;
      const PricingSetup& setup = use_large ? large_setup.value() : small_setup.value();
      const size_t batch = 1 + next(i % 3 == 0 ? 1500 : 300);
      const int64_t base = static_cast<int64_t>(next(i % 4 == 0 ? 140000 : 9000));
      r.step.decode.clear();
      for (size_t k = 0; k < batch; ++k)  // runs of equal lengths, some repeated later
        r.step.decode.push_back({base + static_cast<int64_t>(next(3) == 0 ? k / 3 : next(2 * batch)), 1});
      if (i % 7 == 0) r.step.prefill.push_back({static_cast<int64_t>(next(4000)), 1 + static_cast<int64_t>(next(900))});
      PricingScratch fresh;
      auto a = price_summary(setup, r, &kept);
      auto b = price_summary(setup, r, &fresh);
      REQUIRE(a.ok());
      REQUIRE(b.ok());
      CAPTURE(i);
      CHECK(a->step_time_us == b->step_time_us);
      CHECK(bits(a->total_us, b->total_us));
      CHECK(bits(a->decode_s, b->decode_s));
      CHECK(bits(a->prefill_s, b->prefill_s));
      CHECK(a->warnings == b->warnings);
      seen |= b->warnings;
      ++steps;
    }
    CHECK(steps == 160);
    // The cases the terms must carry: KV beyond the table and an MFU from the nearest cell.
    CHECK(seen.has(kWarnDecodeOutsideTable));
    if (std::string(mode).find("corrected") == std::string::npos) CHECK(seen.has(kWarnDecodeMfuFallback));
  }
}
