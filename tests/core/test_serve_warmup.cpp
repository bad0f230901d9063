// SPDX-License-Identifier: Apache-2.0
// workload.warmup_requests: the first N requests issued are simulated (they load the
// engine) but left out of every figure, as a benchmark client's warm-up requests are.
#include "doctest.h"
#include "io/serve_result_json.h"
#include "serving/serve.h"
#include "test_support.h"

namespace stepcalc {
namespace {

Request closed_loop(int64_t warmup) {
  Request s = test::request_or_fail(
      R"({"model": "llama-3.1-8b-instruct", "mode": "corrected", "gpu_hour_usd": 2,
          "workload": {"input_tokens": 1024, "output_tokens": 64, "concurrency": 8, "num_requests": 40}})");
  s.workload.warmup_requests = warmup;
  return s;
}

TEST_CASE("warm-up requests are simulated but left out of latencies, throughput and cost") {
  auto all = run_serve(closed_loop(0)), warm = run_serve(closed_loop(8));
  REQUIRE_MESSAGE(all.ok(), all.error().message);
  REQUIRE_MESSAGE(warm.ok(), warm.error().message);
  CHECK(warm->num_requests == 40);  // every request is simulated ...
  CHECK(warm->warmup_requests == 8);
  CHECK(warm->trace.steps == all->trace.steps);  // ... so the engine runs the same steps
  CHECK(warm->duration_s == all->duration_s);
  CHECK(all->ttft_ms.count == 40);
  CHECK(warm->ttft_ms.count == 32);  // ... but only the 32 after the warm-up are counted
  CHECK(warm->tpot_ms.count == 32);
  CHECK(warm->e2e_ms.count == 32);
  CHECK(warm->itl_ms.count == 32 * 63);
  // The first wave of 8 prefills together: its TTFTs are the longest; without it the mean drops.
  CHECK(warm->ttft_ms.mean < all->ttft_ms.mean);
  // Throughput over the measured window (first measured send to last token), which is shorter.
  CHECK(warm->throughput.requests_per_s != all->throughput.requests_per_s);
  CHECK(warm->throughput.output_tokens_per_s > 0);
  CHECK(warm->cost.usd_per_million_tokens_blended > 0);
  // Lockstep waves of equal length: the window's GPU time per token is that of the whole run.
  CHECK(warm->cost.usd_per_million_tokens_blended ==
        doctest::Approx(all->cost.usd_per_million_tokens_blended).epsilon(1e-9));
}

TEST_CASE("warm-up of zero changes nothing; a warm-up of every request is refused") {
  auto a = run_serve(closed_loop(0));
  Request s = closed_loop(0);
  s.workload.warmup_requests = 0;
  auto b = run_serve(s);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->ttft_ms.mean == b->ttft_ms.mean);
  CHECK(a->throughput.output_tokens_per_s == b->throughput.output_tokens_per_s);
  for (int64_t bad : {int64_t{40}, int64_t{41}, int64_t{-2}}) {  // -1 is the default (none here)
    auto r = run_serve(closed_loop(bad));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().path == "workload.warmup_requests");
  }
}

TEST_CASE("warmup_requests in JSON: read, echoed, checked") {
  auto r = parse_request(R"({"model": "llama-3.1-8b-instruct",
      "workload": {"input_tokens": 64, "output_tokens": 4, "concurrency": 2, "num_requests": 6, "warmup_requests": 2}})");
  REQUIRE(r.ok());
  CHECK(r->workload.warmup_requests == 2);
  for (const char* bad : {"-1", "1.5", "\"2\""}) {
    auto e = parse_request(std::string(R"({"model": "llama-3.1-8b-instruct", "workload": {"input_tokens": 64,
        "output_tokens": 4, "concurrency": 2, "warmup_requests": )") +
                           bad + "}}");
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().path == "workload.warmup_requests");
  }
}

TEST_CASE("warmup_drain: the measured requests of a closed loop start together after the warm-up") {
  // Prompts of 8,192 tokens fill a step each, so four sent at once queue behind each other.
  Request q = test::request_or_fail(
      R"({"model": "llama-3.1-8b-instruct", "mode": "corrected",
          "workload": {"input_tokens": 8192, "output_tokens": 32, "concurrency": 4, "num_requests": 12,
                       "warmup_requests": 4}})");
  CHECK(q.workload.warmup_drain);  // the default, as a benchmark client's warm-up phase
  auto drained = run_serve(q);
  q.workload.warmup_drain = false;
  auto straight = run_serve(q);
  REQUIRE_MESSAGE(drained.ok(), drained.error().message);
  REQUIRE_MESSAGE(straight.ok(), straight.error().message);
  // Drained: the first measured wave arrives at once and its prompts wait for each other's
  // prefill (the last about four steps); straight on, the clients stay a step apart.
  CHECK(drained->ttft_ms.p99 > 1.9 * drained->ttft_ms.p50);
  CHECK(drained->ttft_ms.mean > 1.3 * straight->ttft_ms.mean);
  CHECK(drained->ttft_ms.count == 8);
}

TEST_CASE("warmup_drain in JSON: read, echoed for closed loops with a warm-up, checked") {
  auto r = parse_request(R"({"model": "llama-3.1-8b-instruct",
      "workload": {"input_tokens": 64, "output_tokens": 4, "concurrency": 2, "num_requests": 6,
                   "warmup_requests": 2, "warmup_drain": false}})");
  REQUIRE(r.ok());
  CHECK_FALSE(r->workload.warmup_drain);
  auto served = run_serve(r.value());
  REQUIRE(served.ok());
  CHECK(serve_result_to_json(r.value(), served.value(), nullptr).find(R"("warmup_drain":false)") != std::string::npos);
  for (const char* bad : {"1", "\"yes\"", "null"}) {
    auto e = parse_request(std::string(R"({"model": "llama-3.1-8b-instruct", "workload": {"input_tokens": 64,
        "output_tokens": 4, "concurrency": 2, "warmup_drain": )") +
                           bad + "}}");
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().path == "workload.warmup_drain");
  }
}

}  // namespace
}  // namespace stepcalc
