// SPDX-License-Identifier: Apache-2.0
// The deployment planner (issue 24): the recommended configuration, served on its own at
// its per-replica rate, meets the target; no cheaper candidate meets it; its vllm serve
// line names its TP; bad plans are refused naming the field.
#include <array>
#include <string>
#include <vector>

#include "api/api.h"
#include "doctest.h"
#include "io/plan_json.h"
#include "io/request_json.h"
#include "kernel_test_support.h"
#include "plan/plan_defaults.h"
#include "plan/planner.h"
#include "simdjson.h"

namespace stepcalc {
namespace {

KernelRegistry packs(std::initializer_list<const char*> gpus) {
  KernelRegistry r;
  for (const char* gpu : gpus) test::add_default_packs(&r, gpu, true);
  return r;
}

/// llama-3.1-8b on H100 at TP 1 and 2 with `workload` (JSON) and a 500 ms p90 TTFT target, run
/// whole under the default bounds (the bound tests' plan, small enough to run whole); `with`
/// runs it again under other bounds.
struct SmallPlan {
  KernelRegistry kernels = packs({"H100"});
  PlanRequest request;
  PlanResult whole;

  explicit SmallPlan(const std::string& workload) {
    auto parsed = parse_plan_request(R"({"model": "llama-3.1-8b-instruct", "gpus": ["H100"], "search": {"tp": [1, 2]},
      "slo": {"ttft_ms": 500}, "workload": )" +
                                     workload + "}");
    REQUIRE(parsed);
    request = std::move(parsed).value();
    auto ran = run_plan(request.input, kernels);
    REQUIRE(ran);
    whole = std::move(ran).value();
  }
  Expected<PlanResult> with(double max_work, int64_t max_steps = kMaxPlanSteps) const {
    return run_plan(request.input, kernels, nullptr, max_work, max_steps);
  }
};

const char* const kPlan = R"({"model": "llama-3.1-70b-instruct", "gpus": ["H100", "H200"],
  "gpu_hour_usd": {"H100": 2.5, "H200": 3.5},
  "workload": {"input_tokens": 1000, "output_tokens": 300, "request_rate": 2},
  "slo": {"ttft_ms": 1000, "tpot_ms": 50, "percentile": 90}})";

TEST_CASE("plan: the recommendation meets the target when served alone, and nothing cheaper does") {
  const KernelRegistry kernels = packs({"H100", "H200"});
  auto request = parse_plan_request(kPlan);
  REQUIRE(request);
  auto planned = run_plan(request->input, kernels);
  REQUIRE(planned);
  const PlanResult& r = planned.value();
  CHECK(r.candidates.size() == 8);
  REQUIRE(r.recommended >= 0);
  const PlanCandidate& best = r.candidates[static_cast<size_t>(r.recommended)];
  CHECK(best.meets_slo);
  for (const PlanCandidate& c : r.candidates) {
    if (c.meets_slo) CHECK(c.cost_per_hour_usd >= best.cost_per_hour_usd);
    if (c.input.tp == 1) CHECK(c.reason == PlanReason::kDoesNotFit);  // 131 GiB of weights
  }
  // Served alone at its per-replica workload: the same figures, within the target.
  Request alone = best.input.request;
  alone.workload = best.replica_workload;
  auto served = run_serve(alone, kernels);
  REQUIRE(served);
  CHECK(served->ttft_ms.p90 <= 1000);
  CHECK(served->tpot_ms.p90 <= 50);
  CHECK(served->ttft_ms.p90 == best.serve.ttft_ms.p90);
  // And as `stepcalc serve` serves the per-replica rate by default (no counts: an open loop
  // until its figures settle): the same figures, because the recommendation was settled so.
  Request plain = best.input.request;
  plain.workload.request_rate_per_s = best.replica_workload.request_rate_per_s;
  plain.workload.num_requests = 0;
  plain.workload.warmup_requests = -1;
  auto by_default = run_serve(plain, kernels);
  REQUIRE(by_default);
  CHECK(by_default->steady.settled);
  CHECK(by_default->ttft_ms.p90 <= 1000);
  CHECK(by_default->tpot_ms.p90 <= 50);
  CHECK(by_default->ttft_ms.p90 == best.serve.ttft_ms.p90);
  CHECK(by_default->num_requests == best.replica_workload.num_requests);
  CHECK(best.max_request_rate * static_cast<double>(best.replicas) >= 2);
  CHECK(!r.frontier.empty());
  // The JSON names the TP in the vllm serve line.
  auto text = plan_json(kPlan, kernels);
  REQUIRE(text);
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(text.value()).value_unsafe();
  std::string_view line = doc["recommended"]["vllm_serve"].get_string().value_unsafe();
  CHECK(line.find("--tensor-parallel-size " + std::to_string(best.input.tp)) != std::string_view::npos);
  CHECK(line.find("meta-llama/Llama-3.1-70B-Instruct") != std::string_view::npos);
}

TEST_CASE("plan: an unreachable target recommends nothing and names the closest") {
  const KernelRegistry kernels = packs({"H100"});
  auto text = plan_json(R"({"model": "llama-3.1-8b-instruct", "gpus": ["H100"], "search": {"tp": [1, 2]},
    "workload": {"input_tokens": 512, "output_tokens": 64, "request_rate": 1}, "slo": {"tpot_ms": 0.5}})",
                        kernels);
  REQUIRE(text);
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(text.value()).value_unsafe();
  CHECK(doc["recommended"].is_null());
  CHECK(doc["closest"]["candidate"].get_int64().value_unsafe() >= 0);
  CHECK(std::string_view(doc["candidates"].at(0)["reason"].get_string().value_unsafe()) == "tpot");
}

/// Each plan request is refused with its error code at its path.
template <typename Cases>
void check_refused(const Cases& cases) {
  for (const auto& c : cases) {
    auto r = parse_plan_request(c.json);
    REQUIRE_MESSAGE(!r, c.json);
    CHECK_MESSAGE(r.error().code == c.code, r.error().message);
    CHECK_MESSAGE(r.error().path == c.path, r.error().message);
  }
}

TEST_CASE("plan: bad input names the field") {
  const struct {
    const char* json;
    const char* code;
    const char* path;
  } cases[] = {
      {R"({"model": "llama-3.1-8b-instruct", "workload": {"input_tokens": 1, "output_tokens": 1, "request_rate": 1},
          "slo": {"ttft_ms": 1}, "nope": 1})",
       "unknown_field", "nope"},
      {R"({"model": "llama-3.1-8b-instruct", "workload": {"input_tokens": 1, "output_tokens": 1, "request_rate": 1},
          "slo": {"ttft_ms": 1, "percentile": 95}})",
       "invalid_value", "slo.percentile"},
      {R"({"model": "llama-3.1-8b-instruct", "workload": {"input_tokens": 1, "output_tokens": 1, "request_rate": 1},
          "slo": {}})",
       "missing_field", "slo"},
      {R"({"model": "llama-3.1-8b-instruct", "gpus": ["H100", "X1"],
          "workload": {"input_tokens": 1, "output_tokens": 1, "request_rate": 1}, "slo": {"ttft_ms": 1}})",
       "invalid_value", "gpus[1]"},
      {R"({"model": "llama-3.1-8b-instruct", "workload": {"input_tokens": 1, "output_tokens": 1, "request_rate": 1},
          "slo": {"ttft_ms": 1}, "search": {"max_gpus": 0}})",
       "invalid_value", "search.max_gpus"},
      {R"({"model": "llama-3.1-8b-instruct", "workload": {"input_tokens": 1, "output_tokens": 1, "request_rate": 1},
          "slo": {"ttft_ms": 1}, "gpu_hour_usd": {"H100": 1e9}})",
       "out_of_range", "gpu_hour_usd.H100"},
      {R"({"model": "llama-3.1-8b-instruct", "workload": {"input_tokens": 1, "output_tokens": 1, "request_rate": 1},
          "slo": {"ttft_ms": 1}, "search": {"tp": [1, 2, 4, 8, 16, 32, 64, 3, 5, 6, 7, 9, 10, 11, 12, 13],
          "engine": [{"max_num_seqs": 8}, {"max_num_seqs": 16}, {"max_num_seqs": 32}, {"max_num_seqs": 64}]}})",
       "too_large", "search"},
  };
  check_refused(cases);
}

TEST_CASE("plan: a closed loop splits its clients over replicas; progress and cancel") {
  const KernelRegistry kernels = packs({"L40S"});
  // 64 clients of 8B on L40S at TP 1 miss a 40 ms TPOT at p90 on one replica; more replicas split them.
  auto request = parse_plan_request(R"({"model": "llama-3.1-8b-instruct", "gpus": ["L40S"], "search": {"tp": [1]},
    "workload": {"input_tokens": 1024, "output_tokens": 64, "concurrency": 64}, "slo": {"tpot_ms": 40}})");
  REQUIRE(request);
  std::vector<double> shares;
  auto planned = run_plan(request->input, kernels, [&](double s) {
    shares.push_back(s);
    return true;
  });
  REQUIRE(planned);
  const PlanCandidate& c = planned->candidates.at(0);
  REQUIRE(c.simulated);
  CHECK(c.meets_slo);
  CHECK(c.replicas > 1);  // 5 at the time of writing: 13 clients each
  CHECK(c.replica_workload.concurrency * c.replicas >= 64);
  CHECK(c.serve.tpot_ms.p90 <= 40);
  REQUIRE(!shares.empty());
  CHECK(shares.back() == 1.0);
  for (size_t i = 1; i < shares.size(); ++i) CHECK(shares[i] >= shares[i - 1]);
  int calls = 0;
  auto cancelled = run_plan(request->input, kernels, [&](double) { return ++calls < 3; });
  REQUIRE(!cancelled);
  CHECK(cancelled.error().code == "cancelled");
}

// A MoE model's expert- and data-parallel layouts (docs/PLAN.md, "The request"; docs/SERVING.md, "Layouts").
const char* const kMoePlan = R"({"model": "qwen3-30b-a3b", "gpus": ["H200"], "gpu_hour_usd": 4,
  "workload": {"input_tokens": 1000, "output_tokens": 300, "request_rate": 8},
  "slo": {"ttft_ms": 1000, "tpot_ms": 50}, )";

TEST_CASE("plan: a MoE model's default search tries TP with and without expert parallelism") {
  auto request = parse_plan_request(std::string(kMoePlan) + R"("search": {"tp": [1, 2, 4]}})");
  REQUIRE(request);
  const std::vector<PlanCandidateInput>& cs = request->input.candidates;
  REQUIRE(cs.size() == 5);  // TP 1 (ep 1 either way), TP 2 and 4 each without and with EP
  const int64_t expected[][3] = {{1, 1, 1}, {2, 1, 1}, {2, 2, 1}, {4, 1, 1}, {4, 4, 1}};  // tp, ep, dp
  for (size_t i = 0; i < cs.size(); ++i) {
    CHECK(cs[i].valid);
    CHECK(cs[i].tp == expected[i][0]);
    CHECK(cs[i].ep == expected[i][1]);
    CHECK(cs[i].dp == expected[i][2]);
    CHECK(cs[i].request.ep == cs[i].ep);  // the serve request each candidate is served with
    CHECK(cs[i].request.dp == cs[i].dp);
  }
  // Memory per GPU: EP 2 holds half the experts, whole (TP 2 half of each): about the same bytes.
  auto ep = request_memory(cs[2].request), tp = request_memory(cs[1].request), one = request_memory(cs[0].request);
  REQUIRE(ep);
  REQUIRE(tp);
  REQUIRE(one);
  CHECK(ep->weights_bytes < 0.6 * one->weights_bytes);
  CHECK(ep->weights_bytes == doctest::Approx(tp->weights_bytes).epsilon(0.01));
  // A dense model: the same search has no layouts to try.
  auto dense = parse_plan_request(R"({"model": "llama-3.1-8b-instruct", "gpus": ["H200"], "search": {"tp": [1, 2]},
    "workload": {"input_tokens": 100, "output_tokens": 10, "request_rate": 1}, "slo": {"ttft_ms": 1000}})");
  REQUIRE(dense);
  CHECK(dense->input.candidates.size() == 2);
  for (const PlanCandidateInput& c : dense->input.candidates) CHECK(c.ep * c.dp == 1);
  // The layouts of dp 1 and 2 at TP 1 and 2 (tp, ep, dp each), with expert parallelism only
  // (--enable-expert-parallel) and without it (every expert sliced over tp x dp GPUs).
  const auto layouts_of = [](const char* expert_parallel, const std::vector<std::array<int64_t, 3>>& want) {
    auto plan =
        parse_plan_request(std::string(kMoePlan) + R"("search": {"tp": [1, 2], "dp": [1, 2], "expert_parallel": )" +
                           expert_parallel + "}}");
    REQUIRE(plan);
    REQUIRE(plan->input.candidates.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const PlanCandidateInput& c = plan->input.candidates[i];
      CHECK(c.valid);
      CHECK(std::array<int64_t, 3>{c.tp, c.ep, c.dp} == want[i]);
      CHECK(c.request.dp == c.dp);
    }
    return plan.value();
  };
  layouts_of("[true]", {{1, 1, 1}, {1, 2, 2}, {2, 2, 1}, {2, 4, 2}});
  const auto sliced = layouts_of("[false]", {{1, 1, 1}, {1, 1, 2}, {2, 1, 1}, {2, 1, 2}});
  // TP 1 x DP 2 holds half of every expert: the experts' bytes of TP 2.
  auto half = request_memory(sliced.input.candidates[1].request),
       tp2 = request_memory(sliced.input.candidates[2].request);
  REQUIRE(half);
  REQUIRE(tp2);
  CHECK(half->weights_bytes > tp2->weights_bytes);  // attention and dense layers whole on each rank
  CHECK(half->weights_bytes < 0.6 * request_memory(sliced.input.candidates[0].request)->weights_bytes);
}

TEST_CASE("plan: an expert- and data-parallel candidate: its GPUs, cost, vllm serve line and serve request") {
  const KernelRegistry kernels = packs({"H200"});
  const std::string plan = std::string(kMoePlan) + R"("search": {"tp": [1], "dp": [2], "expert_parallel": [true]}})";
  auto request = parse_plan_request(plan);
  REQUIRE(request);
  REQUIRE(request->input.candidates.size() == 1);
  auto planned = run_plan(request->input, kernels);
  REQUIRE(planned);
  REQUIRE(planned->recommended == 0);
  const PlanCandidate& c = planned->candidates[0];
  CHECK(c.input.ep == 2);
  CHECK(c.input.dp == 2);
  CHECK(c.gpus_total == c.replicas * 2);
  CHECK(c.cost_per_hour_usd == doctest::Approx(4.0 * static_cast<double>(c.gpus_total)));
  // Each rank simulates as many requests as a replica without dp would (the plan's default counts).
  CHECK(c.replica_workload.num_requests == 2 * c.serve.num_requests);
  CHECK(c.serve.throughput.output_tokens_per_s_per_gpu ==
        doctest::Approx(c.serve.throughput.output_tokens_per_s / static_cast<double>(2)));
  auto text = plan_json(plan, kernels);
  REQUIRE(text);
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(text.value()).value_unsafe();
  simdjson::dom::element rec = doc["recommended"].value_unsafe();
  CHECK(rec["ep"].get_int64().value_unsafe() == 2);
  CHECK(rec["dp"].get_int64().value_unsafe() == 2);
  CHECK(doc["candidates"].at(0)["gpus_total"].get_int64().value_unsafe() == c.gpus_total);
  const std::string line(rec["vllm_serve"].get_string().value_unsafe());
  CHECK(line.rfind(
            "vllm serve Qwen/Qwen3-30B-A3B --tensor-parallel-size 1 --data-parallel-size 2 --enable-expert-parallel ",
            0) == 0);
  CHECK(std::string(rec["summary"].get_string().value_unsafe()).rfind("2 x H200, TP 1, DP 2, EP 2, one replica", 0) ==
        0);
  // Its serve request, served alone as `stepcalc serve` serves it: the candidate's figures.
  const std::string serve_text = simdjson::to_string(rec["serve_request"].value_unsafe());
  auto alone = parse_request(serve_text);
  REQUIRE_MESSAGE(alone, serve_text);
  CHECK(alone->tp == 1);
  CHECK(alone->ep == 2);
  CHECK(alone->dp == 2);
  auto served = run_serve(alone.value(), kernels);
  REQUIRE(served);
  CHECK(served->ttft_ms.p90 == c.serve.ttft_ms.p90);
  CHECK(served->tpot_ms.p90 == c.serve.tpot_ms.p90);
  CHECK(served->num_requests == c.serve.num_requests);
  CHECK(served->throughput.output_tokens_per_s == c.serve.throughput.output_tokens_per_s);
  CHECK(served->tpot_ms.p90 <= 50);
  // A replica of tp x dp GPUs counts against search.max_gpus.
  auto capped = parse_plan_request(std::string(kMoePlan) +
                                   R"("search": {"tp": [2], "dp": [2], "expert_parallel": [true], "max_gpus": 2}})");
  REQUIRE(capped);
  auto none = run_plan(capped->input, kernels);
  REQUIRE(none);
  CHECK(none->candidates.at(0).reason == PlanReason::kMaxGpus);
  CHECK(none->candidates.at(0).gpus_total == 4);
  CHECK(!none->candidates.at(0).simulated);
  CHECK(none->simulations == 0);
}

TEST_CASE("plan: bad layouts name the field") {
  const std::string moe = kMoePlan;
  const std::string dense = R"({"model": "llama-3.1-8b-instruct", "gpus": ["H200"],
    "workload": {"input_tokens": 100, "output_tokens": 10, "request_rate": 1}, "slo": {"ttft_ms": 1000}, )";
  const struct {
    std::string json;
    const char* code;
    const char* path;
  } cases[] = {
      {moe + R"("search": {"dp": [1, 0]}})", "invalid_value", "search.dp[1]"},
      {moe + R"("search": {"dp": [1, 65]}})", "out_of_range", "search.dp[1]"},
      {moe + R"("search": {"dp": []}})", "invalid_value", "search.dp"},
      {moe + R"("search": {"expert_parallel": [true, 1]}})", "type_error", "search.expert_parallel[1]"},
      {moe + R"("search": {"expert_parallel": []}})", "invalid_value", "search.expert_parallel"},
      {dense + R"("search": {"dp": [1, 2]}})", "invalid_value", "search.dp[1]"},
      {moe + R"("search": {"ep": [2]}})", "unknown_field", "search.ep"},
      // The bound counts the layouts: 10 GPUs x 7 layouts (TP 1; TP 2, 4, 8 without and with EP) x 4 engines.
      {R"({"model": "qwen3-30b-a3b", "workload": {"input_tokens": 1, "output_tokens": 1, "request_rate": 1},
          "slo": {"ttft_ms": 1}, "search": {"engine": [{"max_num_seqs": 8}, {"max_num_seqs": 16},
          {"max_num_seqs": 32}, {"max_num_seqs": 64}]}})",
       "too_large", "search"},
  };
  check_refused(cases);
  // The same engines on a dense model: 160 configurations, within the bound.
  CHECK(parse_plan_request(R"({"model": "llama-3.1-8b-instruct", "workload": {"input_tokens": 1, "output_tokens": 1,
    "request_rate": 1}, "slo": {"ttft_ms": 1}, "search": {"engine": [{"max_num_seqs": 8}, {"max_num_seqs": 16},
    {"max_num_seqs": 32}, {"max_num_seqs": 64}]}})"));
  // expert_parallel does nothing for a dense model (it has no experts).
  auto ignored = parse_plan_request(dense + R"("search": {"tp": [2], "expert_parallel": [true]}})");
  REQUIRE(ignored);
  CHECK(ignored->input.candidates.at(0).ep == 1);
}

TEST_CASE("plan: default prices and model ids") {
  CHECK(default_gpu_hour_usd("H100") > 0);
  CHECK(default_gpu_hour_usd("nope") == 0);
  CHECK(preset_hf_id("qwen3-32b") == "Qwen/Qwen3-32B");
  CHECK(preset_hf_id("qwen3-235b-a22b-fp8") == "Qwen/Qwen3-235B-A22B-FP8");
}

TEST_CASE("plan: its simulations together are bounded by their work (issue 27), refused at search beyond it") {
  const SmallPlan plan(R"({"input_tokens": 512, "output_tokens": 64, "request_rate": 4})");
  const PlanResult* whole = &plan.whole;
  const double used = whole->work_limit - whole->work_left;
  CHECK(whole->work_limit == kMaxPlanWork);
  // Each simulation: its steps and a seventh of its request-steps, and the fixed cost of one.
  CHECK(used >= static_cast<double>(whole->simulations) * (kPlanSimulationWork + 240.0 * 65 / 7));
  CHECK(used <= kMaxPlanWork);
  // With less than that, the plan stops at the simulation that would not fit, with no answer.
  auto capped = plan.with(used / 2);
  REQUIRE_FALSE(capped);
  CHECK(capped.error().code == "too_large");
  CHECK(capped.error().path == "search");
  CHECK(capped.error().message.find(std::to_string(static_cast<int64_t>(used / 2)) + " units") != std::string::npos);
  // Enough for all of it: the same answer.
  auto enough = plan.with(used + 1);
  REQUIRE(enough);
  CHECK(enough->recommended == whole->recommended);
  CHECK(enough->simulations == whole->simulations);
  // The recommendation's settling run (the last) gets a serve's own bound while the plan has work
  // left, so its figures stay `stepcalc serve`'s even when the plan has less left than it takes.
  auto tight = plan.with(used - 1);
  REQUIRE(tight);
  REQUIRE(whole->recommended >= 0);
  REQUIRE(tight->recommended == whole->recommended);
  const ServeResult& a = whole->candidates[static_cast<size_t>(whole->recommended)].serve;
  const ServeResult& b = tight->candidates[static_cast<size_t>(tight->recommended)].serve;
  CHECK(b.num_requests == a.num_requests);
  CHECK(b.ttft_ms.mean == a.ttft_ms.mean);
  CHECK(b.tpot_ms.mean == a.tpot_ms.mean);
  CHECK(tight->work_left < 0);  // charged to the plan
}

TEST_CASE("plan: its simulations together are bounded by their engine steps (issue 27), refused at search beyond") {
  // Small batches cost more time per unit of work than the unit says: the steps are bounded too.
  const SmallPlan plan(R"({"input_tokens": 100, "output_tokens": 500, "request_rate": 0.5})");
  const PlanResult* whole = &plan.whole;
  CHECK(whole->steps_limit == kMaxPlanSteps);
  const int64_t used = whole->steps_limit - whole->steps_left;
  // Every simulation sends 240 requests of 500 tokens: at least 500 steps each.
  CHECK(used >= whole->simulations * 500);
  // Half of them: stopped at search, the steps named; the work bound alone would have let it run.
  auto capped = plan.with(kMaxPlanWork, used / 2);
  REQUIRE_FALSE(capped);
  CHECK(capped.error().code == "too_large");
  CHECK(capped.error().path == "search");
  CHECK(capped.error().message.find(std::to_string(used / 2) + " engine steps") != std::string::npos);
  CHECK(whole->work_limit - whole->work_left < kMaxPlanWork / 2);
  // Enough: the same answer.
  auto enough = plan.with(kMaxPlanWork, used + 1);
  REQUIRE(enough);
  CHECK(enough->recommended == whole->recommended);
  CHECK(enough->simulations == whole->simulations);
}

TEST_CASE("plan: searched on several threads, the same document and the same refusals as one after another") {
  const KernelRegistry kernels = packs({"H100", "H200"});
  const std::string json = R"({"model": "llama-3.1-8b-instruct", "gpus": ["H100", "H200"], "search": {"tp": [1, 2, 4]},
    "workload": {"input_tokens": 512, "output_tokens": 64, "request_rate": 4}, "slo": {"ttft_ms": 300}})";
  auto alone = plan_json(json, kernels);
  REQUIRE(alone);
  for (int workers : {2, 3, 8}) CHECK(plan_json(json, kernels, nullptr, workers).value() == alone.value());
  // Under bounds that run out part-way (each bound's share of what the plan used): the same
  // refusal, at the same simulation, or the same answer.
  auto request = parse_plan_request(json);
  REQUIRE(request);
  auto whole = run_plan(request->input, kernels);
  REQUIRE(whole);
  const double work = whole->work_limit - whole->work_left;
  const int64_t steps = whole->steps_limit - whole->steps_left;
  int refused = 0;
  for (double share : {0.05, 0.3, 0.55, 0.8, 0.97, 1.0}) {
    const double max_work = share < 1 ? work * share : kMaxPlanWork;
    for (int64_t max_steps : {static_cast<int64_t>(static_cast<double>(steps) * share), kMaxPlanSteps}) {
      auto one = run_plan(request->input, kernels, nullptr, max_work, max_steps, 1);
      auto three = run_plan(request->input, kernels, nullptr, max_work, max_steps, 3);
      REQUIRE(static_cast<bool>(one) == static_cast<bool>(three));
      if (!one) {
        ++refused;
        CHECK(three.error().message == one.error().message);
        continue;
      }
      CHECK(three->simulations == one->simulations);
      CHECK(three->simulated_requests == one->simulated_requests);
      CHECK(three->work_left == one->work_left);
      CHECK(three->steps_left == one->steps_left);
      CHECK(three->recommended == one->recommended);
      REQUIRE(three->candidates.size() == one->candidates.size());
      for (size_t i = 0; i < one->candidates.size(); ++i) {
        CHECK(three->candidates[i].max_request_rate == one->candidates[i].max_request_rate);
        CHECK(three->candidates[i].serve.ttft_ms.p90 == one->candidates[i].serve.ttft_ms.p90);
      }
    }
  }
  CHECK(refused >= 8);  // every share below 1 of either bound
}

TEST_CASE("plan: a workload whose one simulation needs more than the plan may take is refused at search") {
  // 100,000 requests of 2,000 tokens: 28.6 million units in its first simulation, refused before it runs
  // (before plans were bounded, a serve's too_large was a candidate's reason and the search went on).
  const KernelRegistry kernels = packs({"H100"});
  auto r = plan_json(R"({"model": "llama-3.1-8b-instruct", "gpus": ["H100"],
    "workload": {"input_tokens": 100, "output_tokens": 2000, "request_rate": 50, "num_requests": 100000},
    "slo": {"ttft_ms": 1000}})",
                     kernels);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == "too_large");
  CHECK(r.error().path == "search");
  CHECK(r.error().message.find("after 0 simulations") != std::string::npos);
  CHECK(r.error().message.find(std::to_string(static_cast<int64_t>(kMaxPlanWork)) + " units") != std::string::npos);
}

}  // namespace
}  // namespace stepcalc
