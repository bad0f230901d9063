// SPDX-License-Identifier: Apache-2.0
// The scheduler simulation against a pricer whose step times are known in closed
// form, so every latency below is worked out by hand from vLLM's rules.
#include <cmath>
#include <memory>

#include "doctest.h"
#include "serving/latency_stats.h"
#include "serving/random.h"
#include "serving/request_plan.h"
#include "serving/scheduler.h"

namespace stepcalc {
namespace {

/// A step costs `base_us` plus `per_token_us` per scheduled token; records the steps.
class LinearPricer final : public StepPricer {
 public:
  LinearPricer(double base_us, double per_token_us) : base_(base_us), per_token_(per_token_us) {}
  Expected<StepTimes> price(const Step& step) override {
    int64_t tokens = static_cast<int64_t>(step.decode.size());
    for (const PrefillRequest& p : step.prefill) tokens += p.new_tokens;
    ++steps;
    max_decodes = std::max(max_decodes, static_cast<int64_t>(step.decode.size()));
    prefill_chunks += static_cast<int64_t>(step.prefill.size());
    StepTimes t;
    t.total_us = base_ + per_token_ * static_cast<double>(tokens);
    t.prefill_us = step.prefill.empty() ? 0 : 1;
    t.decode_us = step.decode.empty() ? 0 : 1;
    return t;
  }
  std::vector<Warning> notes() const override { return {}; }
  int64_t steps = 0, max_decodes = 0, prefill_chunks = 0;

 private:
  double base_, per_token_;
};

std::vector<PlannedRequest> fixed_plan(int64_t n, int64_t input, int64_t output) {
  Workload w;
  w.input_tokens.mean = input;
  w.output_tokens.mean = output;
  w.num_requests = n;
  w.concurrency = 1;
  return plan_requests(w, 16);
}

SimulationSettings settings(int64_t budget, int64_t blocks, int64_t concurrency) {
  SimulationSettings s;
  s.max_num_batched_tokens = budget;
  s.max_num_seqs = 256;
  s.block_size = 16;
  s.kv_cache_blocks = blocks;
  s.concurrency = concurrency;
  return s;
}

TEST_CASE("one request: a prefill step, then one decode step per further token") {
  LinearPricer pricer(1000, 1);  // 1 ms + 1 us per token
  auto trace = simulate(fixed_plan(1, 100, 5), settings(8192, 1000, 1), &pricer);
  REQUIRE(trace.ok());
  CHECK(trace->steps == 5);  // prefill (samples token 1) + 4 decodes
  const RequestTimeline& r = trace->requests[0];
  CHECK(r.first_token_us == doctest::Approx(1100));
  CHECK(r.last_token_us == doctest::Approx(1100 + 4 * 1001));
  CHECK(r.output_tokens == 5);
  std::vector<GapRun> gaps = trace->inter_token_gaps;
  const LatencyStats itl = summarize_runs(&gaps, 1);
  CHECK(itl.count == 4);
  CHECK(itl.mean == doctest::Approx(1001));
}

TEST_CASE("chunked prefill splits a long prompt over steps within the token budget") {
  LinearPricer pricer(0, 1);
  auto trace = simulate(fixed_plan(1, 5000, 2), settings(2048, 1000, 1), &pricer);
  REQUIRE(trace.ok());
  CHECK(pricer.prefill_chunks == 3);  // 2048 + 2048 + 904
  CHECK(trace->requests[0].first_token_us == doctest::Approx(5000));
  CHECK(trace->steps == 4);
}

TEST_CASE("closed loop: clients start together at t = 0; decodes go first, prefills share the rest") {
  LinearPricer pricer(100, 1);
  // 4 clients, 8 requests of 1000 in / 3 out, budget 2048: steps of 2048, 1952+... tokens.
  auto trace = simulate(fixed_plan(8, 1000, 3), settings(2048, 10000, 4), &pricer);
  REQUIRE(trace.ok());
  // Step 1: requests 0, 1 whole and 48 tokens of request 2 (2048 tokens).
  CHECK(trace->requests[0].first_token_us == doctest::Approx(100 + 2048));
  CHECK(trace->requests[1].first_token_us == doctest::Approx(100 + 2048));
  // Step 2: 2 decodes first, then the 952 left of request 2 and 1000 of request 3, 94 tokens of nothing.
  CHECK(trace->requests[2].first_token_us == doctest::Approx(2148 + 100 + 2 + 952 + 1000));
  CHECK(trace->requests[3].first_token_us == trace->requests[2].first_token_us);
  for (const RequestTimeline& r : trace->requests) CHECK(r.output_tokens == 3);
  // Requests 4.. are sent when 0.. finish: their send time is a finish time.
  CHECK(trace->requests[4].send_us == trace->requests[0].last_token_us);
  CHECK(trace->requests[4].first_token_us > trace->requests[4].send_us);
}

TEST_CASE("a drained warm-up: the measured requests start together once every warm-up request finished") {
  // 2 clients, 2 warm-up requests then 4 measured; prompts of 4000 with a budget of 4096,
  // so at most one prompt is prefilled per step and requests finish one step apart.
  LinearPricer pricer(100, 1);
  SimulationSettings s = settings(4096, 10000, 2);
  s.warmup_requests = 2;
  s.warmup_drain = true;
  auto drained = simulate(fixed_plan(6, 4000, 4), s, &pricer);
  REQUIRE(drained.ok());
  const std::vector<RequestTimeline>& r = drained->requests;
  // Request 0 finished a step before request 1, but its client waited for request 1.
  CHECK(r[0].last_token_us < r[1].last_token_us);
  const double warmup_end = std::max(r[0].last_token_us, r[1].last_token_us);
  CHECK(r[2].send_us == warmup_end);
  CHECK(r[3].send_us == warmup_end);
  // Both prompts arrive at once: the second waits for the first's prefill step.
  CHECK(r[3].first_token_us - r[3].send_us > 1.9 * (r[2].first_token_us - r[2].send_us));

  // Without the drain, client 0 goes straight on: its next request is sent when its warm-up ends.
  s.warmup_drain = false;
  auto straight = simulate(fixed_plan(6, 4000, 4), s, &pricer);
  REQUIRE(straight.ok());
  CHECK(straight->requests[2].send_us == straight->requests[0].last_token_us);
  CHECK(straight->requests[2].send_us < straight->requests[1].last_token_us);
}

TEST_CASE("a drained warm-up shorter than the concurrency runs at its own size, then every client starts") {
  LinearPricer pricer(100, 1);
  SimulationSettings s = settings(8192, 10000, 4);
  s.warmup_requests = 1;
  s.warmup_drain = true;
  auto trace = simulate(fixed_plan(9, 100, 3), s, &pricer);
  REQUIRE(trace.ok());
  const std::vector<RequestTimeline>& r = trace->requests;
  CHECK(r[0].send_us == 0);
  for (size_t i = 1; i <= 4; ++i) CHECK(r[i].send_us == r[0].last_token_us);  // 4 clients at once
  CHECK(r[5].send_us > r[1].send_us);                                         // then closed loop again
  CHECK(trace->peak_running == 4);
}

TEST_CASE("max_num_seqs caps the running batch; the rest queue") {
  LinearPricer pricer(100, 0);
  SimulationSettings s = settings(8192, 100000, 64);
  s.max_num_seqs = 8;
  auto trace = simulate(fixed_plan(64, 10, 20), s, &pricer);
  REQUIRE(trace.ok());
  CHECK(pricer.max_decodes <= 8);
  CHECK(trace->peak_running == 8);
  CHECK(trace->peak_waiting == 56);
}

TEST_CASE("a KV cache too small for the batch preempts the newest request, which recomputes") {
  LinearPricer pricer(100, 1);
  // Each request grows to 64 + 64 = 128 tokens = 8 blocks; 4 run at once need 32 blocks; 20 exist.
  SimulationSettings tight = settings(8192, 20, 4);
  auto squeezed = simulate(fixed_plan(8, 64, 64), tight, &pricer);
  REQUIRE(squeezed.ok());
  CHECK(squeezed->preemptions > 0);
  CHECK(squeezed->peak_kv_blocks_used <= 20);
  LinearPricer roomy_pricer(100, 1);
  auto roomy = simulate(fixed_plan(8, 64, 64), settings(8192, 1000, 4), &roomy_pricer);
  REQUIRE(roomy.ok());
  CHECK(roomy->preemptions == 0);
  // The queueing shows: the squeezed run takes longer to serve the same requests.
  CHECK(squeezed->end_us > roomy->end_us);
  int64_t with_preemptions = 0;
  for (const RequestTimeline& r : squeezed->requests) {
    CHECK(r.output_tokens == 64);
    with_preemptions += r.preemptions;
  }
  CHECK(with_preemptions == squeezed->preemptions);
}

TEST_CASE("a request longer than the whole KV cache is refused, naming the field") {
  LinearPricer pricer(1, 1);
  auto trace = simulate(fixed_plan(2, 4000, 100), settings(8192, 100, 1), &pricer);
  REQUIRE_FALSE(trace.ok());
  CHECK(trace.error().code == "does_not_fit");
  CHECK(trace.error().path == "workload.input_tokens");
}

TEST_CASE("prefix cache hits shorten prefill and share their blocks") {
  Workload w;
  w.input_tokens.mean = 1000;
  w.output_tokens.mean = 2;
  w.num_requests = 4;
  w.concurrency = 4;
  w.prefix_cache_hit_ratio = 0.5;
  const auto plan = plan_requests(w, 16);
  CHECK(plan[0].cached_prefix_tokens == 496);  // whole blocks of 500
  LinearPricer pricer(0, 1);
  auto trace = simulate(plan, settings(8192, 1000, 4), &pricer);
  REQUIRE(trace.ok());
  CHECK(trace->requests[0].first_token_us == doctest::Approx(4 * 504));
}

TEST_CASE("open loop: Poisson arrivals are seeded and the engine idles between them") {
  Workload w;
  w.input_tokens.mean = 100;
  w.output_tokens.mean = 10;
  w.num_requests = 50;
  w.request_rate_per_s = 2;  // ~500 ms apart: far longer than a request takes
  w.seed = 7;
  const auto a = plan_requests(w, 16);
  const auto b = plan_requests(w, 16);
  CHECK(a[49].send_us == b[49].send_us);
  CHECK(a[49].send_us == doctest::Approx(49 * 500e3).epsilon(0.4));
  w.seed = 8;
  CHECK(plan_requests(w, 16)[49].send_us != a[49].send_us);
  LinearPricer pricer(1000, 0);
  SimulationSettings s = settings(8192, 1000, 0);
  auto trace = simulate(a, s, &pricer);
  REQUIRE(trace.ok());
  CHECK(trace->busy_us < trace->end_us / 10);
  for (const RequestTimeline& r : trace->requests) CHECK(r.first_token_us - r.send_us == doctest::Approx(1000));
}

TEST_CASE("latency statistics interpolate between ranks like NumPy") {
  std::vector<double> v = {4, 1, 3, 2};
  const LatencyStats s = summarize_latencies(&v);
  CHECK(s.mean == 2.5);
  CHECK(s.p50 == 2.5);
  CHECK(s.p90 == doctest::Approx(3.7));
  CHECK(s.p99 == doctest::Approx(3.97));
  std::vector<GapRun> runs = {{3, 1}, {1, 1}, {2, 1}, {4, 1}};
  const LatencyStats r = summarize_runs(&runs, 1);
  CHECK(r.p90 == doctest::Approx(s.p90));
  CHECK(r.mean == s.mean);
}

TEST_CASE("the portable logarithm agrees with the C library to a few ulp") {
  for (double x : {1e-300, 1e-9, 0.001, 0.3, 0.5, 0.7071, 1.0, 1.0000001, 2.0, 10.0, 12345.678, 1e300}) {
    const double want = std::log(x);
    CHECK(std::fabs(portable_log(x) - want) <= 4e-16 * std::fmax(1.0, std::fabs(want)));
  }
  CHECK(portable_log(1.0) == 0.0);
}

TEST_CASE("length distributions: seeded, clamped, with the asked mean") {
  SeededRandom random(42);
  LengthDistribution d;
  d.kind = LengthDistribution::Kind::kNormal;
  d.mean = 1000;
  d.stddev = 200;
  d.min = 900;
  double sum = 0;
  int64_t lowest = INT64_MAX;
  for (int i = 0; i < 4000; ++i) {
    const int64_t v = draw_length(d, &random);
    sum += static_cast<double>(v);
    lowest = std::min(lowest, v);
  }
  CHECK(lowest == 900);
  CHECK(sum / 4000 > 1000);  // the clamp lifts the mean
  d.kind = LengthDistribution::Kind::kExponential;
  d.min = 1;
  sum = 0;
  for (int i = 0; i < 20000; ++i) sum += static_cast<double>(draw_length(d, &random));
  CHECK(sum / 20000 == doctest::Approx(1000).epsilon(0.03));
  d.kind = LengthDistribution::Kind::kUniform;
  d.min = 10;
  d.max = 20;
  for (int i = 0; i < 100; ++i) {
    const int64_t v = draw_length(d, &random);
    CHECK((v >= 10 && v <= 20));
  }
}

}  // namespace
}  // namespace stepcalc
