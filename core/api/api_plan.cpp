// SPDX-License-Identifier: Apache-2.0
// The planner's entry point of api.h: parse the plan request, search, write the result.
#include "api/api.h"
#include "io/plan_json.h"
#include "plan/planner.h"

namespace stepcalc {

Expected<std::string> plan_json(std::string_view json, const KernelRegistry& kernels, const ServeProgress& progress,
                                int workers) {
  auto request = parse_plan_request(json);
  if (!request) return request.error();
  auto result = run_plan(request->input, kernels, progress, kMaxPlanWork, kMaxPlanSteps, workers);
  if (!result) return result.error();
  bool all_finite = true;
  std::string out = plan_result_to_json(request.value(), result.value(), &all_finite);
  if (!all_finite)
    return make_error("out_of_range", "workload",
                      "A plan figure would not be a finite number; the inputs are beyond what can be simulated.");
  return out;
}

}  // namespace stepcalc
