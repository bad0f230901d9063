// SPDX-License-Identifier: Apache-2.0
// The `measured` mode's result: its breakdown as the StepResult every mode fills
// (headline, `breakdown`, `phases`), beside the operator list written by io/.
#pragma once

#include <string>

#include "estimators/measured.h"
#include "estimators/step_result.h"

namespace stepcalc {

/// The StepResult of `breakdown` (priced from `request.step` with `plan`): step time
/// rounded as the other modes round it, GPU time as `step_hardware_s`, CPU time as
/// `overhead_us`, phases attributed by token share (attention: each phase's own work).
StepResult measured_step_result(const Request& request, const MeasuredPlan& plan, const MeasuredBreakdown& breakdown);

/// "H-Hkv-D" of the model (`per_gpu` false) or of the attention tables read ("16-2-128",
/// "mla-16"), as `attn_config_model` / `attn_config_used` name them.
std::string attention_config_name(const MeasuredPlan& plan, bool per_gpu);

}  // namespace stepcalc
