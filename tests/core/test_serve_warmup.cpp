// SPDX-License-Identifier: Apache-2.0
// workload.warmup_requests: the first N requests issued are simulated (they load the
// engine) but left out of every figure, as a benchmark client's warm-up requests are.
#include "doctest.h"
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
  for (int64_t bad : {int64_t{40}, int64_t{41}, int64_t{-1}}) {
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

}  // namespace
}  // namespace stepcalc
