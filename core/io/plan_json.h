// SPDX-License-Identifier: Apache-2.0
// A plan request (docs/PLAN.md) read into the planner's input, and the plan's result
// written as JSON. Errors name the field (`slo.percentile`, `search.tp[2]`, ...).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "plan/planner.h"

namespace stepcalc {

struct PlanRequest {
  PlanInput input;
  std::string model_json;                    ///< the request's `model` value, minified
  std::string model_name;                    ///< the preset's name, or the config's label
  std::string hf_model;                      ///< the Hugging Face id the vllm serve line names
  std::vector<std::string> workload_fields;  ///< "key":value of the workload but its traffic and counts
  Workload workload;                         ///< as asked (total traffic)
  std::vector<std::string> gpus;
  std::map<std::string, double> gpu_hour_usd;  ///< per GPU, defaults filled in
  bool prices_given = false;
};

/// Reads a plan document (one object) and builds every candidate's serve request.
Expected<PlanRequest> parse_plan_request(std::string_view json);

/// The plan's result object; `all_finite` false when a figure was NaN or infinite.
std::string plan_result_to_json(const PlanRequest& request, const PlanResult& result, bool* all_finite = nullptr);

}  // namespace stepcalc
