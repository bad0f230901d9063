// SPDX-License-Identifier: Apache-2.0
// A whole serving estimate: memory, simulation and the benchmark summary.
#include "api/api.h"
#include "doctest.h"
#include "serving/serve.h"
#include "test_support.h"

namespace stepcalc {
namespace {

/// Llama-3.1-8B at TP 1 in `mode`, with its ModelSpec filled from the preset's shape.
Request llama8b(const char* mode, int64_t input, int64_t output, int64_t concurrency) {
  Request s = test::request_or_fail(R"({"model": "llama-3.1-8b-instruct", "step": {}})");
  s.mode = parse_mode(mode).value();
  ModelSpec& spec = s.model.spec;
  if (spec.num_layers == 0) {  // until the request parser fills it
    const ModelShape& m = s.model;
    spec.num_layers = m.num_layers, spec.hidden_size = m.hidden_size, spec.num_heads = m.num_heads;
    spec.num_kv_heads = m.num_kv_heads, spec.head_dim = m.hidden_size / m.num_heads;
    spec.intermediate_size = m.intermediate_size, spec.vocab_size = m.vocab_size;
  }
  s.workload.input_tokens.mean = input;
  s.workload.output_tokens.mean = output;
  s.workload.concurrency = concurrency;
  return s;
}

TEST_CASE("a closed-loop estimate reports latencies, throughput, memory and cost") {
  Request s = llama8b("corrected", 1024, 128, 8);
  s.gpu_hour_usd = 2;
  auto r = run_serve(s);
  REQUIRE_MESSAGE(r.ok(), r.error().path << ": " << r.error().message);
  CHECK(r->num_requests == 80);  // 10 x concurrency
  CHECK(r->engine.max_num_batched_tokens == 8192);
  CHECK(r->memory.kv_cache_blocks > 10000);
  CHECK(r->ttft_ms.count == 80);
  CHECK(r->ttft_ms.p50 <= r->ttft_ms.p99);
  CHECK(r->tpot_ms.mean > 1);
  CHECK(r->e2e_ms.mean == doctest::Approx(r->ttft_ms.mean + 127 * r->tpot_ms.mean).epsilon(1e-9));
  CHECK(r->itl_ms.count == 80 * 127);
  CHECK(r->throughput.output_tokens_per_s == doctest::Approx(80 * 128 / r->duration_s));
  CHECK(r->throughput.requests_per_s_per_gpu == r->throughput.requests_per_s);
  CHECK(r->cost.usd_per_million_output_tokens > r->cost.usd_per_million_input_tokens);
  CHECK(r->cost.usd_per_million_tokens_blended ==
        doctest::Approx(2 * r->duration_s / 3600 / (80 * (1024 + 128)) * 1e6));
  CHECK(r->trace.steps >= 80 * 127 / 8);
}

TEST_CASE("the estimate is a function of the seed") {
  Request s = llama8b("blis-v2", 512, 64, 4);
  s.workload.request_rate_per_s = 0;
  s.workload.input_tokens.kind = LengthDistribution::Kind::kUniform;
  s.workload.input_tokens.min = 100;
  s.workload.input_tokens.max = 1000;
  auto a = run_serve(s), b = run_serve(s);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->ttft_ms.mean == b->ttft_ms.mean);
  CHECK(a->itl_ms.p99 == b->itl_ms.p99);
  s.workload.seed = 2;
  auto c = run_serve(s);
  REQUIRE(c.ok());
  CHECK(c->ttft_ms.mean != a->ttft_ms.mean);
}

TEST_CASE("more concurrency: more throughput, longer latencies") {
  auto low = run_serve(llama8b("corrected", 1024, 256, 4));
  auto high = run_serve(llama8b("corrected", 1024, 256, 64));
  REQUIRE(low.ok());
  REQUIRE(high.ok());
  CHECK(high->throughput.output_tokens_per_s > 3 * low->throughput.output_tokens_per_s);
  CHECK(high->tpot_ms.mean > low->tpot_ms.mean);
  CHECK(high->ttft_ms.mean > low->ttft_ms.mean);
}

TEST_CASE("the API server's time per request delays the first token") {
  Request s = llama8b("corrected", 256, 16, 1);
  auto direct = run_serve(s);
  s.workload.api_overhead_us = 5000;
  auto served = run_serve(s);
  REQUIRE(direct.ok());
  REQUIRE(served.ok());
  CHECK(served->ttft_ms.mean == doctest::Approx(direct->ttft_ms.mean + 5).epsilon(1e-6));
}

TEST_CASE("bad workloads are refused, naming the field") {
  const auto refused = [](Request s) {
    auto r = run_serve(s);
    REQUIRE_FALSE(r.ok());
    return r.error().path;
  };
  Request s = llama8b("corrected", 1024, 128, 8);
  s.workload.output_tokens.mean = 0;
  CHECK(refused(s) == "workload.output_tokens");
  s = llama8b("corrected", 0, 128, 8);
  CHECK(refused(s) == "workload.input_tokens");
  s = llama8b("corrected", 1024, 128, 20000);
  CHECK(refused(s) == "workload.concurrency");
  s = llama8b("corrected", 1024, 128, 8);
  s.workload.request_rate_per_s = 3;
  CHECK(refused(s) == "workload.request_rate");
  s = llama8b("corrected", 1024, 128, 0);
  CHECK(refused(s) == "workload.concurrency");
  s = llama8b("corrected", 1024, 128, 8);
  s.workload.prefix_cache_hit_ratio = 1.5;
  CHECK(refused(s) == "workload.prefix_cache_hit_ratio");
  s = llama8b("corrected", 1024, 128, 8);
  s.model.spec.num_layers *= 40;  // 320 layers: 600 GB of weights
  CHECK(refused(s) == "tp");
  s = llama8b("corrected", 900000, 128, 8);
  CHECK(refused(s) == "workload.input_tokens");  // longer than the whole KV cache
  s = llama8b("corrected", 1024, 1000000, 1);
  s.workload.num_requests = 100;
  CHECK(refused(s) == "workload.num_requests");  // 100 million steps
}

}  // namespace
}  // namespace stepcalc

namespace stepcalc {
namespace {

TEST_CASE("a workload whose KV demand needs too many steps is refused before it is simulated") {
  // 100,000 requests of 1,000 + 10,000 tokens from 1,000 clients: 41 fit in the cache at once, so
  // at least 1e5 x (1e4 x 1e3 + 1e4 x 9,999 / 2) / 451,008 = 1.3e7 steps (> 2e6). The bound by
  // max_num_seqs alone (1e5 x 1e4 / 1,000 = 1e6) lets it through to the simulation's own limit.
  int calls = 0;
  auto r = serve_json(
      R"({"model": "llama-3.1-8b-instruct", "workload": {"input_tokens": 1000, "output_tokens": 10000,
          "concurrency": 1000, "num_requests": 100000}})",
      no_kernels(), [&calls](double) { return ++calls > 0; });
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == "too_large");
  CHECK(r.error().path == "workload.num_requests");
  CHECK(r.error().message.find("KV cache") != std::string::npos);
  CHECK(calls == 0);  // refused before the first step
}

TEST_CASE("a priced step carries memory; a model too large for its TP is warned about, still priced") {
  auto fits =
      price_json(R"({"model": "llama-2-70b-hf", "tp": 4, "step": {"decode_requests": [{"progress_index": 9}]}})");
  REQUIRE(fits.ok());
  CHECK(fits->find("\"kv_cache_blocks\":") != std::string::npos);
  CHECK(fits->find("model_does_not_fit") == std::string::npos);
  auto too_big =
      price_json(R"({"model": "llama-2-70b-hf", "tp": 1, "step": {"decode_requests": [{"progress_index": 9}]}})");
  REQUIRE(too_big.ok());
  CHECK(too_big->find("\"step_time_us\":") != std::string::npos);
  CHECK(too_big->find("model_does_not_fit") != std::string::npos);
  CHECK(too_big->find("128.48 GiB") != std::string::npos);  // the weights, in the message
  auto overflow = price_json(
      R"({"model": "llama-2-70b-hf", "tp": 4, "step": {"decode_requests": [{"progress_index": 300000}, {"progress_index": 300000}]}})");
  REQUIRE(overflow.ok());
  CHECK(overflow->find("kv_cache_overflow") != std::string::npos);
}

}  // namespace
}  // namespace stepcalc

namespace stepcalc {
namespace {

TEST_CASE("a serving request in JSON: lengths as distributions, engine settings, cost") {
  const Request r = test::request_or_fail(R"({"model": "qwen3-32b", "tp": 4, "gpu_hour_usd": 3,
      "engine": {"max_num_batched_tokens": 4096, "max_num_seqs": 64, "gpu_memory_utilization": 0.85},
      "workload": {"input_tokens": {"distribution": "uniform", "min": 100, "max": 300},
                   "output_tokens": {"distribution": "normal", "mean": 64, "stddev": 8, "min": 2},
                   "request_rate": 5, "num_requests": 40, "seed": 9, "prefix_cache_hit_ratio": 0.25}})");
  CHECK(r.has_workload);
  CHECK_FALSE(r.has_step);
  CHECK(r.workload.input_tokens.kind == LengthDistribution::Kind::kUniform);
  CHECK(r.workload.input_tokens.max == 300);
  CHECK(r.workload.output_tokens.stddev == 8);
  CHECK(r.engine.max_num_seqs == 64);
  CHECK(r.gpu_hour_usd == 3);
  auto served = serve_json(R"({"model": "qwen3-32b", "tp": 4, "mode": "corrected", "gpu_hour_usd": 3,
      "engine": {"max_num_batched_tokens": 4096, "max_num_seqs": 64, "gpu_memory_utilization": 0.85},
      "workload": {"input_tokens": {"distribution": "uniform", "min": 100, "max": 300},
                   "output_tokens": {"distribution": "normal", "mean": 64, "stddev": 8, "min": 2},
                   "request_rate": 5, "num_requests": 40, "seed": 9, "prefix_cache_hit_ratio": 0.25}})");
  REQUIRE_MESSAGE(served.ok(), served.error().path << ": " << served.error().message);
  CHECK(served->find("\"max_num_batched_tokens\":4096") != std::string::npos);
  CHECK(served->find("\"request_rate\":5") != std::string::npos);
  CHECK(served->find("\"distribution\":\"uniform\"") != std::string::npos);
  CHECK(served->find("\"usd_per_million_output_tokens\":") != std::string::npos);
  auto again = serve_json(R"({"model": "qwen3-32b", "tp": 4, "mode": "corrected", "gpu_hour_usd": 3,
      "engine": {"max_num_batched_tokens": 4096, "max_num_seqs": 64, "gpu_memory_utilization": 0.85},
      "workload": {"input_tokens": {"distribution": "uniform", "min": 100, "max": 300},
                   "output_tokens": {"distribution": "normal", "mean": 64, "stddev": 8, "min": 2},
                   "request_rate": 5, "num_requests": 40, "seed": 9, "prefix_cache_hit_ratio": 0.25}})");
  REQUIRE(again.ok());
  CHECK(again.value() == served.value());
}

TEST_CASE("one output token per request: no TPOT or ITL was measured, and the JSON says null, not 0") {
  auto served = serve_json(R"({"model": "llama-3.1-8b-instruct",
      "workload": {"input_tokens": 100, "output_tokens": 1, "concurrency": 2, "num_requests": 4}})");
  REQUIRE_MESSAGE(served.ok(), served.error().message);
  CHECK(served->find(R"("tpot_ms":{"mean":null,"p50":null,"p90":null,"p99":null,"count":0})") != std::string::npos);
  CHECK(served->find(R"("itl_ms":{"mean":null,"p50":null,"p90":null,"p99":null,"count":0})") != std::string::npos);
  CHECK(served->find(R"("ttft_ms":{"mean":null)") == std::string::npos);
}

TEST_CASE("serve carries the pricing's warnings that hold for every step, as price words them") {
  auto has = [](const ServeResult& r, const std::string& code) {
    for (const Warning& w : r.warnings)
      if (w.code == code) return true;
    return false;
  };
  // TP 3 splits neither Llama-3.1-8B's 32 heads nor its 8 KV heads: vLLM refuses to start.
  auto tp3 = run_serve(test::request_or_fail(R"({"model": "llama-3.1-8b-instruct", "tp": 3,
      "workload": {"input_tokens": 100, "output_tokens": 8, "concurrency": 2, "num_requests": 4}})"));
  REQUIRE_MESSAGE(tp3.ok(), tp3.error().message);
  CHECK(has(tp3.value(), "tp_does_not_divide_heads"));
  CHECK(has(tp3.value(), "tp_does_not_divide_kv_heads"));
  // FP8 asked of a reference mode: the memory plan halves the weights, the step times do not change.
  for (const char* mode : {"blis-v2", "corrected"}) {
    auto fp8 = run_serve(test::request_or_fail(std::string(R"({"model": "llama-3.1-8b-instruct", "mode": ")") + mode +
                                               R"(", "quantization": "fp8",
        "workload": {"input_tokens": 100, "output_tokens": 8, "concurrency": 2, "num_requests": 4}})"));
    REQUIRE_MESSAGE(fp8.ok(), fp8.error().message);
    CHECK_MESSAGE(has(fp8.value(), "quantization_not_priced"), mode);
  }
  auto plain = run_serve(test::request_or_fail(R"({"model": "llama-3.1-8b-instruct", "tp": 2,
      "workload": {"input_tokens": 100, "output_tokens": 8, "concurrency": 2, "num_requests": 4}})"));
  REQUIRE(plain.ok());
  CHECK_FALSE(has(plain.value(), "tp_does_not_divide_heads"));
  CHECK_FALSE(has(plain.value(), "quantization_not_priced"));
}

TEST_CASE("a serve document of several requests keeps each result or error in its slot") {
  auto out = serve_document(
      R"([{"model": "qwen3-32b", "tp": 4, "workload": {"input_tokens": 64, "output_tokens": 4, "concurrency": 2}},
      {"model": "qwen3-32b", "tp": 4, "workload": {"input_tokens": 64, "output_tokens": 0, "concurrency": 2}}])");
  REQUIRE(out.ok());
  CHECK(out->failures == 1);
  CHECK(out->json.find("\"ttft_ms\"") != std::string::npos);
  CHECK(out->json.find("workload.output_tokens") != std::string::npos);
  int calls = 0;
  auto cancelled = serve_json(
      R"({"model": "qwen3-32b", "tp": 4, "workload": {"input_tokens": 64, "output_tokens": 2000, "concurrency": 2}})",
      no_kernels(), [&calls](double) { return ++calls < 2; });
  REQUIRE_FALSE(cancelled.ok());
  CHECK(cancelled.error().code == "cancelled");
  CHECK(calls == 2);
}

}  // namespace
}  // namespace stepcalc
