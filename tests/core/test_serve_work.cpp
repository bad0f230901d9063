// SPDX-License-Identifier: Apache-2.0
// Serving is bounded by its work, not only its steps (issue 27): a workload whose least
// work exceeds limits::kMaxServeWork is refused before it runs, with the estimate; the
// requests of one document share the bound; progress comes every 20,000 units of work, so
// a cancel answers quickly however large the batch.
#include <cmath>
#include <string>

#include "api/api.h"
#include "doctest.h"
#include "serving/serve.h"
#include "test_support.h"

namespace stepcalc {
namespace {

std::string llama8b(int64_t output, int64_t concurrency, int64_t requests, const char* mode = "blis-v2") {
  return std::string(R"({"model": "llama-3.1-8b-instruct", "mode": ")") + mode +
         R"(", "workload": {"input_tokens": 16, "output_tokens": )" + std::to_string(output) + R"(, "concurrency": )" +
         std::to_string(concurrency) + R"(, "num_requests": )" + std::to_string(requests) + "}}";
}

TEST_CASE("the issue's 100,000 requests of 4,000 tokens at 1,024 clients are refused at once, with the estimate") {
  // 4e8 output tokens: 20 s natively before, minutes in Wasm.
  auto r = run_serve(test::request_or_fail(llama8b(4000, 1024, 100000)));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == "too_large");
  CHECK(r.error().path == "workload.num_requests");
  CHECK(r.error().message.find("needs at least 57") != std::string::npos);  // 4e8 / 7 + the steps
  CHECK(r.error().message.find(std::to_string(static_cast<int64_t>(limits::kMaxServeWork))) != std::string::npos);
}

TEST_CASE("the work a simulation took is in its trace, and the least-work estimate is below it") {
  auto r = run_serve(test::request_or_fail(llama8b(200, 64, 640)));
  REQUIRE(r.ok());
  // 640 requests of 200 tokens at 64 clients: 2,000 steps at least and 128,000 tokens.
  CHECK(r->trace.work >= serve_work_units(2000, 128000));
  CHECK(r->trace.work ==
        doctest::Approx(serve_work_units(static_cast<double>(r->trace.steps), 640 * 201)).epsilon(0.05));
}

TEST_CASE("a bound given to run_serve is kept: while running, or up front") {
  const Request q = test::request_or_fail(llama8b(200, 64, 640));
  auto up_front = run_serve(q, no_kernels(), nullptr, 1000);
  REQUIRE_FALSE(up_front.ok());
  CHECK(up_front.error().path == "workload.num_requests");
  // An open loop at a low rate runs its requests one by one: more steps than the estimate
  // (which assumes they overlap), so the bound stops it while it runs.
  const Request slow = test::request_or_fail(R"({"model": "llama-3.1-8b-instruct", "mode": "blis-v2",
      "workload": {"input_tokens": 16, "output_tokens": 200, "request_rate": 0.001, "num_requests": 640}})");
  auto stopped = run_serve(slow, no_kernels(), nullptr, 50000);
  REQUIRE_FALSE(stopped.ok());
  CHECK(stopped.error().code == "too_large");
  CHECK(stopped.error().path == "workload");
}

TEST_CASE("run_serve says the least bounds its outcome needed: with them the same, with less too_large") {
  // A closed loop (its steps above the estimate) and a slow open loop (run one by one), and a
  // model that does not fit (an error that needs only the up-front step estimate).
  const Request loads[] = {test::request_or_fail(llama8b(200, 64, 640)),
                           test::request_or_fail(R"({"model": "llama-3.1-8b-instruct", "mode": "blis-v2",
      "workload": {"input_tokens": 16, "output_tokens": 50, "request_rate": 0.01, "num_requests": 40}})"),
                           test::request_or_fail(R"({"model": "llama-3.1-70b-instruct", "mode": "blis-v2",
      "workload": {"input_tokens": 16, "output_tokens": 50, "concurrency": 4, "num_requests": 40}})")};
  for (const Request& q : loads) {
    ServeNeeds needs;
    auto whole = run_serve(q, no_kernels(), nullptr, limits::kMaxServeWork, limits::kMaxServeSteps, &needs);
    CHECK(needs.steps > 0);
    if (whole) {
      CHECK(needs.work >= whole->trace.work);
      CHECK(needs.steps >= static_cast<double>(whole->trace.steps));
    } else {
      CHECK(whole.error().code == "does_not_fit");
      CHECK(needs.work == 0);  // refused before the work was estimated
    }
    const auto steps = static_cast<int64_t>(std::ceil(needs.steps));
    auto same = run_serve(q, no_kernels(), nullptr, needs.work, steps);
    REQUIRE(static_cast<bool>(same) == static_cast<bool>(whole));
    if (same) CHECK(same->tpot_ms.mean == whole->tpot_ms.mean);
    if (!same) CHECK(same.error().message == whole.error().message);
    if (needs.work > 0) {
      auto less_work = run_serve(q, no_kernels(), nullptr, std::nextafter(needs.work, 0.0), steps);
      REQUIRE_FALSE(less_work);
      CHECK(less_work.error().code == "too_large");
    }
    auto fewer_steps = run_serve(q, no_kernels(), nullptr, needs.work > 0 ? needs.work : 1, steps - 1);
    REQUIRE_FALSE(fewer_steps);
    CHECK(fewer_steps.error().code == "too_large");
  }
}

TEST_CASE("the requests of one document share the bound") {
  // Each takes about 0.6 of a bound of 200,000 units: the first is served, the second is
  // refused in its slot (limits::kMaxServeWork in use: 8 million).
  const std::string one = llama8b(1000, 64, 640);
  auto doc = serve_document("[" + one + "," + one + "]", "", no_kernels(), nullptr, 2e5);
  REQUIRE(doc.ok());
  CHECK(doc->failures == 1);
  CHECK(doc->first_failure_index == 1);
  CHECK(doc->first_failure.code == "too_large");
  CHECK(doc->first_failure.message.find("left to it") != std::string::npos);
}

TEST_CASE("progress comes every 20,000 units of work, so a large batch can be cancelled at once") {
  // 1,024 clients: about 150 units a step, so 512 steps would be 77,000 units between reports.
  const Request q = test::request_or_fail(llama8b(1000, 1024, 2048));
  int reports = 0;
  double last = 0;
  bool monotone = true;
  auto r = run_serve(q, no_kernels(), [&](double share) {
    ++reports;
    monotone = monotone && share >= last;
    last = share;
    return true;
  });
  REQUIRE(r.ok());
  CHECK(monotone);
  CHECK(reports >= static_cast<int>(r->trace.work / 20000) - 1);
  CHECK(reports > r->trace.steps / 512 + 2);  // more often than every 512 steps
  int calls = 0;
  auto cancelled = run_serve(q, no_kernels(), [&](double) { return ++calls < 2; });
  REQUIRE_FALSE(cancelled.ok());
  CHECK(cancelled.error().code == "cancelled");
  CHECK(calls == 2);
}

}  // namespace
}  // namespace stepcalc
