// SPDX-License-Identifier: Apache-2.0
// The planner's defaults: GPU-hour prices (presets/prices.json, editable assumptions)
// and the Hugging Face repository of each model preset, for the `vllm serve` line.
#pragma once

#include <string>
#include <string_view>

namespace stepcalc {

/// Where the default prices come from (presets/prices.json "source").
extern const char* const kPlanPriceSource;

/// The default price of one GPU-hour of `gpu` (as gpu_specs() names it), USD; 0 if none.
double default_gpu_hour_usd(std::string_view gpu);

/// The Hugging Face repository of a model preset ("meta-llama/Llama-3.1-70B-Instruct"),
/// or "" when the preset has none recorded.
std::string preset_hf_id(std::string_view preset);

}  // namespace stepcalc
