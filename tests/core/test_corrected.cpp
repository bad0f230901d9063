// SPDX-License-Identifier: Apache-2.0
// The corrected mode: each switch changes the price for its documented reason and
// fails without it; overrides parse with JSON paths; blis-v2 is untouched.
#include <cmath>
#include <string>

#include "api/api.h"
#include "doctest.h"
#include "estimators/reference/corrected.h"
#include "estimators/reference/step_model.h"
#include "io/request_json.h"
#include "json/json_writer.h"
#include "test_support.h"

using namespace stepcalc;

namespace {

/// Llama-2-70B at TP 4 (measured attention config 64-8-128), switches as given.
Request request(const std::string& step, const std::string& switches, const std::string& params = "{}",
                const std::string& mode = "blis-v2") {
  const std::string json = R"({"model":"llama-2-70b-hf","tp":4,"mode":")" + mode + R"(","corrected":{"switches":)" +
                           switches + R"(,"params":)" + params + R"(},"step":)" + step + "}";
  return test::request_or_fail(json);
}

StepResult price(const Request& r) { return test::price_or_fail(r); }

std::string decodes(std::initializer_list<long> kvs) {
  std::string s = R"({"decode_requests":[)";
  bool first = true;
  for (long kv : kvs)
    s += std::string(first ? "" : ",") + R"({"progress_index":)" + std::to_string(kv) + "}", first = false;
  return s + "]}";
}

std::string prefill(long p, long n) {
  return R"({"prefill_requests":[{"progress_index":)" + std::to_string(p) + R"(,"num_new_prefill_tokens":)" +
         std::to_string(n) + "}]}";
}

const DecodeTable& tp4_table() { return *decode_table_for(embedded_h100_tables(), "64-8-128", 4); }

}  // namespace

TEST_CASE("decode_harmonic_mean sums per-request times; the arithmetic mean does not") {
  const std::string step = decodes({1024, 65536});
  const StepResult harmonic = price(request(step, R"({"decode_harmonic_mean":true})"));
  const StepResult arithmetic = price(request(step, "{}"));
  // Per-request times at batch 2, from the reference's own MFU lookups.
  const double peak = 989.5e12, layers = 80, tp = 4;
  double expected = 0;
  for (double kv : {1024.0, 65536.0}) {
    const double f = 4 * 64 * kv * 128 * layers;
    expected += f / (peak * decode_mfu(tp4_table(), 2, kv).mfu) / tp;
  }
  CHECK(harmonic.decode.attn_core_time_s == doctest::Approx(expected).epsilon(1e-12));
  CHECK(arithmetic.decode.attn_core_time_s != doctest::Approx(expected).epsilon(1e-3));
  bool warned = false;
  for (const Warning& w : harmonic.warnings) warned |= w.code == "decode_mfu_arithmetic_mean";
  CHECK_FALSE(warned);
}

TEST_CASE("decode_attention_latency reads latency_us where the table's MFU is 0.000") {
  // 64-8-128-tp4 (batch 1, kv 1024): mfu 0.0 (rounded), latency 38.194 us per layer.
  const std::string step = decodes({1024});
  const StepResult latency = price(request(step, R"({"decode_attention_latency":true,"decode_harmonic_mean":true})"));
  CHECK(latency.decode.attn_core_time_s == doctest::Approx(38.194e-6 * 80).epsilon(1e-12));
  const StepResult reference = price(request(step, "{}"));
  CHECK(std::fabs(reference.decode.attn_core_time_s - 38.194e-6 * 80) > 0.5 * 38.194e-6 * 80);
}

TEST_CASE("decode_attention_latency fills an unmeasured corner from the largest measured batch") {
  // (512, 16384) is not measured; (256, 16384) took 1358.106 us: per-sequence time is flat.
  CHECK(decode_batch_latency_us(tp4_table(), 512, 16384) == doctest::Approx(1358.106 * 2));
  // Beyond the longest KV the kernel streams linearly more cache.
  CHECK(decode_batch_latency_us(tp4_table(), 16, 262144) == doctest::Approx(686.792 * 2));
  // Between cells: bilinear on latency.
  CHECK(decode_batch_latency_us(tp4_table(), 24, 1024) == doctest::Approx((24.532 + 25.519) / 2));
}

TEST_CASE("prefill_attention_length prices attention at the real length, without the bucket jump") {
  const std::string on = R"({"prefill_attention_length":true})";
  const StepResult a = price(request(prefill(0, 1024), on)), b = price(request(prefill(0, 1025), on));
  CHECK(b.prefill.attn_core_time_s > a.prefill.attn_core_time_s);
  // 1024 new tokens, no prefix: the measured causal kernel (53.338 us per layer, all heads) / tp.
  CHECK(a.prefill.attn_core_time_s == doctest::Approx(53.338e-6 * 80 / 4).epsilon(1e-9));
  const StepResult ra = price(request(prefill(0, 1024), "{}")), rb = price(request(prefill(0, 1025), "{}"));
  CHECK(rb.prefill.attn_core_time_s < ra.prefill.attn_core_time_s);  // the reference's bucket discontinuity
}

TEST_CASE("gemm_roofline: M < 8 costs the M = 8 kernel and an FP8 model gets the FP8 peak") {
  const std::string on = R"({"gemm_roofline":true})";
  const StepResult one = price(request(decodes({512}), on));
  const StepResult eight = price(request(decodes({512, 512, 512, 512, 512, 512, 512, 512}), on));
  CHECK(one.decode.gemm_time_s == doctest::Approx(eight.decode.gemm_time_s));
  // Memory-bound decode: weight streaming at the effective bandwidth wins over the FP8 kernel.
  const double weights_per_gpu = 68451041280.0 * 2 / 4;
  CHECK(one.decode.gemm_time_s == doctest::Approx(weights_per_gpu / (3.35e12 * 0.82)).epsilon(1e-9));
  // The reference prices the 1-token GEMM below the weight read of the M = 8 kernel ratio.
  const StepResult ref_one = price(request(decodes({512}), "{}"));
  const StepResult ref_eight = price(request(decodes({512, 512, 512, 512, 512, 512, 512, 512}), "{}"));
  CHECK(ref_one.decode.gemm_time_s != doctest::Approx(ref_eight.decode.gemm_time_s));
  // Compute-bound prefill: 1-byte weights run at twice the tensor-core peak.
  auto fp8 = parse_request(R"({"model":{"num_hidden_layers":80,"hidden_size":8192,"num_attention_heads":64,)"
                           R"("num_key_value_heads":8,"intermediate_size":28672,"bytes_per_param":1},"tp":4,)"
                           R"("corrected":{"switches":{"gemm_roofline":true}},"step":)" +
                           prefill(0, 8192) + "}");
  REQUIRE(fp8.ok());
  const StepResult bf16 = price(request(prefill(0, 8192), on));
  CHECK(price(fp8.value()).prefill.gemm_time_s == doctest::Approx(bf16.prefill.gemm_time_s / 2).epsilon(1e-9));
}

TEST_CASE("tp_allreduce adds two all-reduces per layer; none at tp 1") {
  const StepResult on = price(request(decodes({512, 512}), R"({"tp_allreduce":true})"));
  const double one = 5e-6 + 2.0 * 3 / 4 * (2 * 8192 * 2) / 450e9;
  CHECK(on.decode.comm_s == doctest::Approx(2 * 80 * one).epsilon(1e-12));
  CHECK(on.decode.time_s() == doctest::Approx(std::max(on.decode.compute_s, on.decode.memory_s) + on.decode.comm_s));
  auto tp1 = parse_request(R"({"model":"llama-2-70b-hf","tp":1,"mode":"corrected","step":)" + decodes({512}) + "}");
  REQUIRE(tp1.ok());
  CHECK(price(tp1.value()).decode.comm_s == 0);
}

TEST_CASE("cpu_overhead: a per-step cost plus a per-request cost, parameters overridable") {
  const StepResult r = price(
      request(decodes({100, 200, 300}), R"({"cpu_overhead":true})", R"({"cpu_step_us":1000,"cpu_per_request_us":10})"));
  CHECK(r.overhead_us == 1030);
  CHECK(price(request(decodes({100}), "{}")).overhead_us == 2000);  // 100 us * 80 layers / tp 4
}

TEST_CASE("fused_mixed_batch prices a mixed step as one pass over all its tokens") {
  const std::string step = R"({"prefill_requests":[{"progress_index":0,"num_new_prefill_tokens":64}],)"
                           R"("decode_requests":[{"progress_index":512},{"progress_index":512}]})";
  const StepResult fused = price(request(step, R"({"fused_mixed_batch":true})"));
  REQUIRE(fused.fused.present);
  CHECK(fused.fused.tokens == 66);
  CHECK(fused.fused.attn_core_time_s == fused.prefill.attn_core_time_s + fused.decode.attn_core_time_s);
  CHECK(fused.step_hardware_s == fused.fused.time_s());
  const StepResult overlap = price(request(step, "{}"));
  CHECK_FALSE(overlap.fused.present);
  CHECK(overlap.step_hardware_s == std::max(overlap.prefill.time_s(), overlap.decode.time_s()));
  CHECK(fused.step_hardware_s != overlap.step_hardware_s);
}

TEST_CASE("modes and overrides: corrected turns everything on, overrides turn switches off") {
  const CorrectedSettings all = switches_for_mode(Mode::kCorrected);
  for (bool on : all.on) CHECK(on);
  CHECK_FALSE(switches_for_mode(Mode::kBlisV2).any());
  CHECK_FALSE(parse_mode("nope").has_value());
  const Request r = request(decodes({512}), R"({"cpu_overhead":false})", R"({"allreduce_latency_us":7})", "corrected");
  const CorrectedSettings sw = switches_for_request(r);
  CHECK_FALSE(sw.has(kCpuOverhead));
  CHECK(sw.has(kTpAllreduce));
  CHECK(sw.get(kAllreduceLatencyUs) == 7);
}

TEST_CASE("corrected overrides: unknown names and bad values are errors with paths") {
  auto bad_switch = parse_request(R"({"model":"llama-2-70b-hf","corrected":{"switches":{"magic":true}},"step":{}})");
  REQUIRE_FALSE(bad_switch.ok());
  CHECK(bad_switch.error().path == "corrected.switches.magic");
  auto bad_param = parse_request(R"({"model":"llama-2-70b-hf","corrected":{"params":{"cpu_step_us":-1}},"step":{}})");
  REQUIRE_FALSE(bad_param.ok());
  CHECK(bad_param.error().path == "corrected.params.cpu_step_us");
  auto bad_type = parse_request(R"({"model":"llama-2-70b-hf","corrected":{"switches":{"tp_allreduce":1}},"step":{}})");
  REQUIRE_FALSE(bad_type.ok());
  CHECK(bad_type.error().path == "corrected.switches.tp_allreduce");
  auto bad_key = parse_request(R"({"model":"llama-2-70b-hf","corrected":{"knobs":{}},"step":{}})");
  REQUIRE_FALSE(bad_key.ok());
  CHECK(bad_key.error().path == "corrected.knobs");
}

TEST_CASE("corrected parameters: one range check, also for values far beyond it (1e300)") {
  for (int p = 0; p < kNumCorrectedParams; ++p) {
    const CorrectedParamInfo& info = kCorrectedParamInfo[p];
    const std::string path = std::string("corrected.params.") + info.name;
    auto with = [&](const std::string& value) {
      return parse_request(R"({"model":"llama-2-70b-hf","corrected":{"params":{")" + std::string(info.name) + R"(":)" +
                           value + R"(}},"step":{}})");
    };
    CAPTURE(info.name);
    for (const char* huge : {"1e100", "1e300", "1.7976931348623157e308"}) {
      auto refused = with(huge);
      REQUIRE_FALSE(refused.ok());
      CHECK(refused.error().code == "out_of_range");
      CHECK(refused.error().path == path);
    }
    auto below = with("-1");
    REQUIRE_FALSE(below.ok());
    CHECK(below.error().code == "invalid_value");
    auto at_max = with(format_double(info.max));
    REQUIRE(at_max.ok());
    CHECK(at_max->corrected.param[p] == info.max);
    auto at_min = with(format_double(info.min));
    REQUIRE(at_min.ok());
    CHECK(at_min->corrected.param[p] == info.min);
    CHECK(info.min <= info.default_value);
    CHECK(info.default_value <= info.max);
  }
}

TEST_CASE("result JSON lists switches and parameters only when corrected settings are in play") {
  const std::string step = R"(,"step":{"decode_requests":[{"progress_index":512}]}})";
  auto corrected = price_json(R"({"model":"llama-2-70b-hf","tp":4,"mode":"corrected")" + step);
  REQUIRE(corrected.ok());
  CHECK(corrected->find(R"("corrected":{"switches":{"decode_harmonic_mean":true)") != std::string::npos);
  CHECK(corrected->find(R"("cpu_step_us":1700)") != std::string::npos);
  CHECK(corrected->find(R"("breakdown":{)") != std::string::npos);
  auto reference = price_json(R"({"model":"llama-2-70b-hf","tp":4)" + step);
  REQUIRE(reference.ok());
  CHECK(reference->find(R"("corrected")") == std::string::npos);
}
