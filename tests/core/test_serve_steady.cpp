// SPDX-License-Identifier: Apache-2.0
// An open loop's steady state (docs/SERVING.md, "Steady state and overload"): without
// num_requests it runs until its figures settle; throughput and cost are measured while
// requests arrive at the offered rate, not over the drain after the last one; an engine
// that cannot keep up is reported as overloaded, with the rate it sustains.
#include <cmath>
#include <string>

#include "doctest.h"
#include "io/plan_json.h"
#include "io/serve_result_json.h"
#include "kernel_test_support.h"
#include "serving/serve.h"

namespace stepcalc {
namespace {

const KernelRegistry& h100() {
  static const KernelRegistry r = [] {
    KernelRegistry k;
    test::add_default_packs(&k, "H100", true);
    return k;
  }();
  return r;
}

/// The issue's question: Llama-3.1-70B on H100, 1,000 in / 300 out at `rate` req/s.
Request rate_request(int tp, double rate, const std::string& extra = "") {
  return test::request_or_fail(R"({"model": "llama-3.1-70b-instruct", "gpu": "H100", "mode": "measured", "tp": )" +
                               std::to_string(tp) + R"(, "gpu_hour_usd": 2.5, "workload": {"input_tokens": 1000,
                                   "output_tokens": 300, "request_rate": )" +
                               std::to_string(rate) + extra + "}}");
}

bool has_warning(const ServeResult& r, const std::string& code) {
  for (const Warning& w : r.warnings)
    if (w.code == code) return true;
  return false;
}

TEST_CASE("TP 4 keeps up with 2 req/s: settled, and throughput is the offered rate, not diluted by the drain") {
  auto r = run_serve(rate_request(4, 2), h100());
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  const SteadyState& st = r->steady;
  CHECK(st.measured);
  CHECK(st.settled);
  CHECK_FALSE(st.overloaded);
  CHECK(st.latencies_in_window >= kSteadyLatencies);
  CHECK(st.sustainable_request_rate == 0);
  CHECK_FALSE(has_warning(*r, "serving_overload"));
  CHECK_FALSE(has_warning(*r, "serving_not_settled"));
  // Keeping up, the engine's throughput is the offered rate (the issue's 1.9-2.1 req/s;
  // averaged over the drain after the last arrival it read 1.49); the window's own count
  // samples it.
  CHECK(r->throughput.requests_per_s == doctest::Approx(2));
  CHECK(r->throughput.output_tokens_per_s == doctest::Approx(600));
  CHECK(r->throughput.input_tokens_per_s == doctest::Approx(2000));
  CHECK(st.completed_request_rate == doctest::Approx(2).epsilon(0.1));
  // Cost: 4 GPUs at $2.50/h over 2,600 tokens/s.
  CHECK(r->cost.usd_per_million_tokens_blended == doctest::Approx(4 * 2.5 / 3600 / 2600 * 1e6));
  // A fifth of the requests of the last pass warm the engine up.
  CHECK(r->warmup_requests == r->num_requests / 5);
  CHECK(r->num_requests == kSteadyPassRequests[st.passes - 1]);
  // The whole run's average, drain included, is lower: what the window fixes.
  const double whole_run = static_cast<double>(r->num_requests) / r->duration_s;
  CHECK(whole_run < r->throughput.requests_per_s);
}

TEST_CASE("TP 2 cannot keep up with 2 req/s: overloaded, with the rate it sustains and the queue's growth") {
  auto r = run_serve(rate_request(2, 2), h100());
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  const SteadyState& st = r->steady;
  CHECK(st.overloaded);
  CHECK_FALSE(st.settled);
  CHECK(st.waiting_at_end > 0);
  CHECK(st.sustainable_request_rate > 0);
  CHECK(st.sustainable_request_rate < st.offered_request_rate);
  CHECK(st.queue_growth_per_s == doctest::Approx(st.offered_request_rate - st.sustainable_request_rate));
  REQUIRE(has_warning(*r, "serving_overload"));
  // Throughput is what the saturated engine completes, not the offered rate.
  CHECK(r->throughput.requests_per_s == doctest::Approx(st.sustainable_request_rate).epsilon(0.02));
  // The JSON carries it for the API and the page.
  const std::string json = serve_result_to_json(rate_request(2, 2), r.value());
  CHECK(json.find(R"("overloaded":true)") != std::string::npos);
  CHECK(json.find(R"("sustainable_request_rate":)") != std::string::npos);
  CHECK(json.find(R"("code":"serving_overload")") != std::string::npos);
}

TEST_CASE("a flood: the warning says the engine sustains a small part of what is sent") {
  auto r = run_serve(rate_request(4, 40), h100());
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->steady.overloaded);
  CHECK(r->steady.sustainable_request_rate < 20);
  CHECK(r->throughput.requests_per_s > 0);  // the window of arrivals is shorter than one request: not 0
  // A flood is recognised after the shortest pass that may report it.
  CHECK(r->num_requests == kOverloadMinRequests);
}

TEST_CASE("a light load settles on the first pass: a queue that seldom forms cannot be growing") {
  auto r = run_serve(rate_request(4, 0.05), h100());
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->steady.settled);
  CHECK(r->steady.passes == 1);
  CHECK(r->steady.queued_share <= kSteadyIdleQueuedShare);
  CHECK(r->num_requests == kSteadyPassRequests[0]);
}

TEST_CASE("near capacity the engine is saturated though its queue does not trend: every seed says overloaded") {
  // TP 2 sustains about 1.85-1.95 req/s: at 2 some seeds' arrivals keep the queue flat for
  // a while, but requests wait through the whole window.
  for (int seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    auto r = run_serve(rate_request(2, 2, R"(, "seed": )" + std::to_string(seed)), h100());
    REQUIRE(r.ok());
    CHECK(r->steady.overloaded);
  }
}

TEST_CASE("a short run the user chose is simulated as asked, and says its figures have not settled") {
  auto r = run_serve(rate_request(4, 2, R"(, "num_requests": 32)"), h100());
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->num_requests == 32);
  CHECK(r->warmup_requests == 0);
  CHECK(r->steady.passes == 1);
  CHECK_FALSE(r->steady.settled);
  REQUIRE(has_warning(*r, "serving_not_settled"));
  for (const Warning& w : r->warnings)
    if (w.code == "serving_not_settled") CHECK(w.message.find("workload.num_requests") != std::string::npos);
}

TEST_CASE("a closed loop has no steady window: its figures are as before") {
  auto r = run_serve(test::request_or_fail(R"({"model": "llama-3.1-8b-instruct", "mode": "corrected",
      "workload": {"input_tokens": 256, "output_tokens": 16, "concurrency": 4}})"));
  REQUIRE(r.ok());
  CHECK_FALSE(r->steady.measured);
  CHECK(r->num_requests == 40);
  const std::string json =
      serve_result_to_json(test::request_or_fail(R"({"model": "llama-3.1-8b-instruct", "mode": "corrected",
      "workload": {"input_tokens": 256, "output_tokens": 16, "concurrency": 4}})"),
                           r.value());
  CHECK(json.find("steady_state") == std::string::npos);
}

TEST_CASE("progress over the passes rises to 1 and never falls") {
  double last = -1;
  bool monotone = true;
  auto r = run_serve(rate_request(2, 2), h100(), [&](double share) {
    monotone = monotone && share >= last && share <= 1;
    last = share;
    return true;
  });
  REQUIRE(r.ok());
  CHECK(monotone);
  CHECK(last > 0.5);
}

TEST_CASE("the planner never recommends an overloaded replica") {
  auto parsed = parse_plan_request(R"({"model": "llama-3.1-70b-instruct", "gpus": ["H100"],
      "gpu_hour_usd": {"H100": 2.5}, "search": {"tp": [2]},
      "workload": {"input_tokens": 1000, "output_tokens": 300, "request_rate": 3},
      "slo": {"ttft_ms": 60000, "tpot_ms": 200, "percentile": 90}})");
  REQUIRE_MESSAGE(parsed.ok(), parsed.error().message);
  auto plan = run_plan(parsed->input, h100());
  REQUIRE_MESSAGE(plan.ok(), plan.error().message);
  // Loose latency targets: a single TP 2 replica at 3 req/s (it sustains about 1.9) shows
  // p90 TTFT ~36 s over the planner's run, under the target; only the overload rules it
  // out, so the recommendation takes two replicas.
  REQUIRE(plan->recommended >= 0);
  CHECK(plan->candidates[static_cast<size_t>(plan->recommended)].replicas >= 2);
}

}  // namespace
}  // namespace stepcalc
